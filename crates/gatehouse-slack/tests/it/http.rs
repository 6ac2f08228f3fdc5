use std::sync::{Arc, Mutex};

use gatehouse_chat::{Channel, Inbound};
use gatehouse_fakes::FakeHandle;
use gatehouse_slack::http::EVENTS_PATH;
use gatehouse_slack::{SlackChannel, SlackMode};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::support::{
    SIGNING_SECRET, channel, config, control, fake, loopback, next_press, next_text, run,
    wait_for_calls,
};

/// Serves the channel's router the way the gateway would, and points the fake's Request URL at
/// it; returns the core's end of the queue once the channel runs.
async fn http_mode(fake: &FakeHandle) -> (Arc<SlackChannel>, mpsc::Receiver<Inbound>) {
    let slack = serve(fake).await;
    let (rx, _task) = run(&slack);
    wait_for_calls(fake, "auth.test", 1).await;
    (slack, rx)
}

/// Mounts a new HTTP-mode channel's router on a loopback port and points the fake at it.
async fn serve(fake: &FakeHandle) -> Arc<SlackChannel> {
    let slack = channel(config(fake, SlackMode::Http));
    let router = slack.http_router().unwrap();
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!("http://{}{EVENTS_PATH}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    control(
        fake,
        "/_fake/config",
        json!({"request_url": url, "signing_secret": SIGNING_SECRET}),
    )
    .await;
    slack
}

fn click(variant: Value) -> Value {
    let mut inject = json!({"type": "interactive", "payload": {"type": "block_actions",
        "user": {"id": "U0ALICE"},
        "container": {"type": "message", "message_ts": "1795243300.000001", "channel_id": "C0OPS"},
        "actions": [{"type": "button", "action_id": "deny", "value": "g1.tok-deny"}]}});
    if let (Some(inject), Some(extra)) = (inject.as_object_mut(), variant.as_object()) {
        inject.extend(extra.clone());
    }
    inject
}

#[tokio::test]
async fn accepts_a_signed_press_once_and_refuses_its_replay() {
    let fake = fake().await;
    let (_slack, mut rx) = http_mode(&fake).await;

    let good = control(&fake, "/_fake/inject", click(json!({}))).await;
    assert_eq!(good["result"]["status"], 200);
    let press = next_press(&mut rx).await;
    assert_eq!(press.token, "g1.tok-deny");
    assert_eq!(press.message.chat_id, "C0OPS");

    let replayed = control(
        &fake,
        "/_fake/inject",
        json!({"replay": good["result"]["delivery_id"]}),
    )
    .await;
    assert_eq!(replayed["result"]["status"], 401);
    assert!(rx.try_recv().is_err(), "a replay reached the core");
}

/// Log output captured from this (current-thread) test runtime.
#[derive(Clone, Default)]
struct LogLines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogLines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn refuses_bad_missing_and_stale_signatures_with_401_and_a_log_line() {
    let logs = LogLines::default();
    let writer = logs.clone();
    let _guard = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .set_default();
    let fake = fake().await;
    let (_slack, mut rx) = http_mode(&fake).await;
    for (variant, reason) in [
        (json!({"signature": "bad"}), "signature does not match"),
        (
            json!({"signature": "missing"}),
            "missing x-slack-signature header",
        ),
        (
            json!({"timestamp_offset_secs": -600}),
            "request timestamp is",
        ),
        (
            json!({"timestamp_offset_secs": 600}),
            "request timestamp is",
        ),
    ] {
        let refused = control(&fake, "/_fake/inject", click(variant.clone())).await;
        assert_eq!(refused["result"]["status"], 401, "{variant}");
        let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
        assert!(
            logged.contains(reason),
            "{variant}: no log line with {reason:?} in {logged}"
        );
    }
    assert!(rx.try_recv().is_err(), "a refused request reached the core");
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(!logged.contains(SIGNING_SECRET), "the secret was logged");
}

#[tokio::test]
async fn answers_503_until_the_channel_runs() {
    let fake = fake().await;
    let _slack = serve(&fake).await;
    let early = control(&fake, "/_fake/inject", click(json!({}))).await;
    assert_eq!(early["result"]["status"], 503);
}

/// Regression: a 503 used to remember the signature, so Slack's retry of the same bytes, once the
/// channel ran, was refused as a replay.
#[tokio::test]
async fn accepts_a_retry_of_a_request_answered_503() {
    let fake = fake().await;
    let slack = serve(&fake).await;
    let early = control(&fake, "/_fake/inject", click(json!({}))).await;
    assert_eq!(early["result"]["status"], 503);
    let (mut rx, _task) = run(&slack);
    wait_for_calls(&fake, "auth.test", 1).await;
    let retried = control(
        &fake,
        "/_fake/inject",
        json!({"replay": early["result"]["delivery_id"]}),
    )
    .await;
    assert_eq!(retried["result"]["status"], 200, "{retried}");
    assert!(
        rx.recv().await.is_some(),
        "the retried press never reached the core"
    );
}

#[tokio::test]
async fn answers_a_slash_command_in_the_http_response() {
    let fake = fake().await;
    let (slack, mut rx) = http_mode(&fake).await;
    let core = tokio::spawn(async move {
        let command = next_text(&mut rx).await;
        assert_eq!(command.text, "/approve 0f3c9a1e");
        let reply = "Usage: /approve <id> allow-once|allow-always|deny";
        slack
            .answer(&command.interaction.unwrap(), reply)
            .await
            .unwrap();
    });
    let answered = control(
        &fake,
        "/_fake/inject",
        json!({"type": "slash_commands", "payload": {"command": "/approve", "text": "0f3c9a1e",
            "user_id": "U0ALICE", "channel_id": "C0OPS"}}),
    )
    .await;
    core.await.unwrap();
    assert_eq!(answered["result"]["status"], 200);
    let body: Value = serde_json::from_str(answered["result"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"response_type": "ephemeral",
            "text": "Usage: /approve &lt;id&gt; allow-once|allow-always|deny",
            "blocks": [{"type": "section", "text": {"type": "plain_text",
                "text": "Usage: /approve <id> allow-once|allow-always|deny"}}]})
    );
}

#[tokio::test]
async fn pushes_signed_message_events_and_answers_url_verification() {
    let fake = fake().await;
    let (_slack, mut rx) = http_mode(&fake).await;
    let sent = control(
        &fake,
        "/_fake/inject",
        json!({"type": "events_api", "payload": {"event": {"type": "message", "channel": "D0ALICE",
            "channel_type": "im", "user": "U0ALICE", "text": "approve 0f3c9a1e deny"}}}),
    )
    .await;
    assert_eq!(sent["result"]["status"], 200);
    let text = next_text(&mut rx).await;
    assert_eq!(text.text, "approve 0f3c9a1e deny");
    assert!(text.is_direct);

    let challenge = control(
        &fake,
        "/_fake/inject",
        json!({"type": "events_api", "payload": {"type": "url_verification", "challenge": "c-123"}}),
    )
    .await;
    assert_eq!(challenge["result"]["status"], 200);
    let body: Value = serde_json::from_str(challenge["result"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"challenge": "c-123"}));
}
