use std::sync::Arc;
use std::time::Duration;

use axum::routing::post;
use gatehouse_fakes::FakeHandle;
use serde_json::{Value, json};
use slack_morphism::errors::SlackClientError;
use slack_morphism::prelude::*;
use slack_morphism::signature_verifier::SlackEventSignatureVerifier;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::support::{control, loopback, wait_for_calls};

const CHANNEL: &str = "C0OPS";
const APPROVER: &str = "U0ALICE";
const SECRET: &str = "s3cr3t-signing";

pub(crate) fn client_for(fake: &FakeHandle, rate_control: bool) -> Arc<SlackHyperClient> {
    // SlackClientHyperConnector::new() is https-only; this connector also speaks http://.
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .unwrap()
        .https_or_http()
        .enable_http1()
        .build();
    let mut connector =
        SlackClientHyperConnector::with_connector(https).with_slack_api_url(&fake.base_url);
    if rate_control {
        connector =
            connector.with_rate_control(SlackApiRateControlConfig::new().with_max_retries(2));
    }
    Arc::new(SlackClient::new(connector))
}

fn bot_token() -> SlackApiToken {
    SlackApiToken::new("xoxb-fake".into())
}

fn card() -> SlackMessageContent {
    let blocks: Vec<SlackBlock> = slack_blocks![
        some_into(SlackSectionBlock::new().with_text(md!("Approve `ls`?"))),
        some_into(SlackActionsBlock::new(slack_blocks![
            some_into(
                SlackBlockButtonElement::new(pt!("Allow once"))
                    .with_action_id("allow-once".into())
                    .with_value("tok-1".into())
            ),
            some_into(
                SlackBlockButtonElement::new(pt!("Deny"))
                    .with_action_id("deny".into())
                    .with_value("tok-2".into())
            )
        ]))
    ];
    SlackMessageContent::new()
        .with_text("Approve `ls`?".into())
        .with_blocks(blocks)
}

struct Probe(UnboundedSender<String>);

async fn on_interaction(
    event: SlackInteractionEvent,
    client: Arc<SlackHyperClient>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    let SlackInteractionEvent::BlockActions(actions) = event else {
        return Ok(());
    };
    let SlackInteractionActionContainer::Message(container) = actions.container else {
        return Ok(());
    };
    let channel = container.channel_id.clone().unwrap();
    let user = actions.user.unwrap().id;
    let action = actions.actions.unwrap_or_default().remove(0);
    // The fake attached the stored card, so its blocks are there.
    assert!(actions.message.unwrap().content.blocks.is_some());
    let token = bot_token();
    let session = client.open_session(&token);
    let receipt = SlackMessageContent::new().with_text(format!("Allowed once by <@{}>", user.0));
    session
        .chat_update(&SlackApiChatUpdateRequest::new(
            channel.clone(),
            receipt,
            container.message_ts.clone(),
        ))
        .await?;
    let notice = SlackMessageContent::new().with_text("Recorded.".into());
    session
        .chat_post_ephemeral(&SlackApiChatPostEphemeralRequest::new(
            channel, user, notice,
        ))
        .await?;
    let value = action.value.unwrap_or_default();
    let probe = state.read().await;
    probe
        .get_user_state::<Probe>()
        .unwrap()
        .0
        .send(format!("{} {value}", action.action_id.0))?;
    Ok(())
}

async fn on_push(
    event: SlackPushEventCallback,
    _client: Arc<SlackHyperClient>,
    state: SlackClientEventsUserState,
) -> UserCallbackResult<()> {
    if let SlackEventCallbackBody::Message(message) = event.event {
        let text = message.content.and_then(|c| c.text).unwrap_or_default();
        let probe = state.read().await;
        probe
            .get_user_state::<Probe>()
            .unwrap()
            .0
            .send(format!("message {text}"))?;
    }
    Ok(())
}

async fn on_command(
    event: SlackCommandEvent,
    _client: Arc<SlackHyperClient>,
    _state: SlackClientEventsUserState,
) -> UserCallbackResult<SlackCommandEventResponse> {
    Ok(SlackCommandEventResponse::new(
        SlackMessageContent::new().with_text(format!("usage: {} <id> <decision>", event.command.0)),
    ))
}

async fn socket_mode(
    fake: &FakeHandle,
) -> (
    SlackClientSocketModeListener<SlackClientHyperHttpsConnector>,
    UnboundedReceiver<String>,
) {
    let (tx, probe) = unbounded_channel();
    let env = Arc::new(
        SlackClientEventsListenerEnvironment::new(client_for(fake, false))
            .with_user_state(Probe(tx)),
    );
    let callbacks = SlackSocketModeListenerCallbacks::new()
        .with_interaction_events(on_interaction)
        .with_command_events(on_command)
        .with_push_events(on_push);
    let config = SlackClientSocketModeConfig::new().with_max_connections_count(1);
    let listener = SlackClientSocketModeListener::new(&config, env, callbacks);
    listener
        .listen_for(&SlackApiToken::new("xapp-fake".into()))
        .await
        .unwrap();
    listener.start().await;
    wait_for_calls(fake, "apps.connections.open", 1).await;
    (listener, probe)
}

async fn post_card(fake: &FakeHandle) -> String {
    let client = client_for(fake, false);
    let token = bot_token();
    let session = client.open_session(&token);
    let posted = session
        .chat_post_message(&SlackApiChatPostMessageRequest::new(CHANNEL.into(), card()))
        .await
        .unwrap();
    posted.ts.0
}

fn click(ts: &str) -> Value {
    json!({"type": "interactive", "payload": {"type": "block_actions", "user": {"id": APPROVER},
        "container": {"type": "message", "message_ts": ts, "channel_id": CHANNEL, "is_ephemeral": false},
        "actions": [{"type": "button", "action_id": "allow-once", "block_id": "b1", "value": "tok-1",
                     "action_ts": "1.2"}]}})
}

async fn next(probe: &mut UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(20), probe.recv())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn delivers_button_press_over_socket_mode_and_records_the_ack() {
    let fake = gatehouse_fakes::slack::spawn(loopback()).await.unwrap();
    let ts = post_card(&fake).await;
    let (listener, mut probe) = socket_mode(&fake).await;

    let injected = control(&fake, "/_fake/inject", click(&ts)).await;
    assert_eq!(injected["mode"], "socket");
    assert_eq!(next(&mut probe).await, "allow-once tok-1");
    let update = &wait_for_calls(&fake, "chat.update", 1).await[0];
    assert_eq!(update.body["ts"], ts.as_str());
    let ephemeral = &wait_for_calls(&fake, "chat.postEphemeral", 1).await[0];
    assert_eq!(ephemeral.body["user"], APPROVER);
    let ack = &wait_for_calls(&fake, "socket.ack", 1).await[0];
    assert_eq!(ack.body["envelope_id"], injected["envelope_id"]);

    // A slash command's ack carries the response payload.
    let command = control(
        &fake,
        "/_fake/inject",
        json!({"type": "slash_commands", "payload":
        {"command": "/approve", "text": "", "user_id": APPROVER, "channel_id": CHANNEL}}),
    )
    .await;
    let acks = wait_for_calls(&fake, "socket.ack", 2).await;
    assert_eq!(acks[1].body["envelope_id"], command["envelope_id"]);
    assert_eq!(
        acks[1].body["payload"]["text"],
        "usage: /approve <id> <decision>"
    );
    let listed = reqwest::get(format!("http://{}/_fake/envelopes", fake.addr))
        .await
        .unwrap();
    let listed: Value = listed.json().await.unwrap();
    assert!(
        listed["envelopes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["acked"] == true)
    );
    listener.shutdown().await;
}

#[tokio::test]
async fn redelivers_after_socket_reconnect_without_losing_the_interaction() {
    let fake = gatehouse_fakes::slack::spawn(loopback()).await.unwrap();
    let ts = post_card(&fake).await;
    let (listener, mut probe) = socket_mode(&fake).await;
    wait_for_calls(&fake, "apps.connections.open", 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let dropped = control(
        &fake,
        "/_fake/disconnect",
        json!({"reconnect_delay_ms": 500}),
    )
    .await;
    assert_eq!(dropped["closed"], 1);
    let injected = control(&fake, "/_fake/inject", click(&ts)).await;
    assert_eq!(injected["delivered"], false, "no connection: queued");

    assert_eq!(next(&mut probe).await, "allow-once tok-1");
    assert!(
        wait_for_calls(&fake, "apps.connections.open", 2)
            .await
            .len()
            >= 2
    );
    let ack = &wait_for_calls(&fake, "socket.ack", 1).await[0];
    assert_eq!(ack.body["envelope_id"], injected["envelope_id"]);
    listener.shutdown().await;
}

#[tokio::test]
async fn honours_retry_after_with_slack_morphisms_rate_control() {
    let fake = gatehouse_fakes::slack::spawn(loopback()).await.unwrap();
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "chat.postMessage", "retry_after": 1}),
    )
    .await;
    let client = client_for(&fake, true);
    let token = bot_token();
    let session = client.open_session(&token);
    session
        .chat_post_message(&SlackApiChatPostMessageRequest::new(CHANNEL.into(), card()))
        .await
        .unwrap();
    let calls = wait_for_calls(&fake, "chat.postMessage", 2).await;
    assert!(
        calls[1].at_ms - calls[0].at_ms >= 1000,
        "retried after Retry-After"
    );

    // Without rate control the 429 surfaces with its Retry-After.
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "chat.postMessage", "retry_after": 3}),
    )
    .await;
    let plain = client_for(&fake, false);
    let session = plain.open_session(&token);
    let error = session
        .chat_post_message(&SlackApiChatPostMessageRequest::new(CHANNEL.into(), card()))
        .await
        .unwrap_err();
    let SlackClientError::RateLimitError(limit) = error else {
        panic!("{error:?}")
    };
    assert_eq!(limit.retry_after, Some(Duration::from_secs(3)));
}

#[tokio::test]
async fn answers_api_errors_like_slack() {
    let fake = gatehouse_fakes::slack::spawn(loopback()).await.unwrap();
    let client = client_for(&fake, false);
    let token = bot_token();
    let session = client.open_session(&token);
    let long_value = SlackMessageContent::new().with_blocks(slack_blocks![some_into(
        SlackActionsBlock::new(slack_blocks![some_into(
            SlackBlockButtonElement::new(pt!("A"))
                .with_action_id("a".into())
                .with_value("v".repeat(2001))
        )])
    )]);
    let error = session
        .chat_post_message(&SlackApiChatPostMessageRequest::new(
            CHANNEL.into(),
            long_value,
        ))
        .await
        .unwrap_err();
    let SlackClientError::ApiError(api) = error else {
        panic!("{error:?}")
    };
    assert_eq!(api.code, "invalid_blocks");

    let dm = session
        .conversations_open(
            &SlackApiConversationsOpenRequest::new().with_users(vec![APPROVER.into()]),
        )
        .await
        .unwrap();
    let thread = session
        .chat_post_message(&SlackApiChatPostMessageRequest::new(
            dm.channel.id.clone(),
            card(),
        ))
        .await
        .unwrap();
    let reply = session
        .chat_post_message(
            &SlackApiChatPostMessageRequest::new(
                dm.channel.id.clone(),
                SlackMessageContent::new().with_text("ok".into()),
            )
            .with_thread_ts(thread.ts.clone()),
        )
        .await
        .unwrap();
    assert_eq!(reply.message.origin.thread_ts, Some(thread.ts.clone()));
    session
        .chat_delete(&SlackApiChatDeleteRequest::new(
            dm.channel.id.clone(),
            thread.ts.clone(),
        ))
        .await
        .unwrap();
    let gone = session
        .chat_delete(&SlackApiChatDeleteRequest::new(dm.channel.id, thread.ts))
        .await
        .unwrap_err();
    assert!(matches!(gone, SlackClientError::ApiError(ref e) if e.code == "message_not_found"));
    let app_token = SlackApiToken::new("xapp-fake".into());
    let wrong = client
        .open_session(&app_token)
        .auth_test()
        .await
        .unwrap_err();
    assert!(
        matches!(wrong, SlackClientError::ApiError(ref e) if e.code == "not_allowed_token_type")
    );
}

/// An app endpoint that checks signatures with slack-morphism's verifier.
async fn signed_endpoint() -> (String, UnboundedReceiver<SlackInteractionEvent>) {
    let (tx, events) = unbounded_channel();
    let app = axum::Router::new().route(
        "/slack/interactions",
        post(move |headers: axum::http::HeaderMap, body: String| {
            let tx = tx.clone();
            async move {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned()
                };
                let verifier =
                    SlackEventSignatureVerifier::new(&SlackSigningSecret::new(SECRET.into()));
                let verified = verifier.verify(
                    &header("x-slack-signature"),
                    &body,
                    &header("x-slack-request-timestamp"),
                );
                if verified.is_err() {
                    return axum::http::StatusCode::UNAUTHORIZED;
                }
                let form: Vec<(String, String)> = serde_urlencoded::from_str(&body).unwrap();
                let event: SlackInteractionEvent = serde_json::from_str(&form[0].1).unwrap();
                tx.send(event).unwrap();
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!(
        "http://{}/slack/interactions",
        listener.local_addr().unwrap()
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, events)
}

#[tokio::test]
async fn signs_http_deliveries_and_sends_bad_stale_and_replayed_variants() {
    let fake = gatehouse_fakes::slack::spawn(loopback()).await.unwrap();
    let ts = post_card(&fake).await;
    let (url, mut events) = signed_endpoint().await;
    control(
        &fake,
        "/_fake/config",
        json!({"request_url": url, "signing_secret": SECRET}),
    )
    .await;

    let good = control(&fake, "/_fake/inject", click(&ts)).await;
    assert_eq!(good["mode"], "http");
    assert_eq!(good["result"]["status"], 200);
    let event = events.recv().await.unwrap();
    assert!(
        matches!(event, SlackInteractionEvent::BlockActions(ref a) if a.user.as_ref().unwrap().id.0 == APPROVER)
    );

    let mut bad = click(&ts);
    bad["signature"] = json!("bad");
    assert_eq!(
        control(&fake, "/_fake/inject", bad).await["result"]["status"],
        401
    );
    let mut missing = click(&ts);
    missing["signature"] = json!("missing");
    assert_eq!(
        control(&fake, "/_fake/inject", missing).await["result"]["status"],
        401
    );
    let mut stale = click(&ts);
    stale["timestamp_offset_secs"] = json!(-600);
    assert_eq!(
        control(&fake, "/_fake/inject", stale).await["result"]["status"],
        401
    );

    // A replay resends the same bytes, timestamp and signature; refusing it is the app's job.
    let delivery = good["result"]["delivery_id"].clone();
    let replayed = control(&fake, "/_fake/inject", json!({"replay": delivery})).await;
    assert_eq!(replayed["result"]["timestamp"], good["result"]["timestamp"]);
    assert_eq!(replayed["result"]["status"], 200);
}
