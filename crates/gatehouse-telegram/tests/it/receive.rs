use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_chat::channel::Inbound;
use gatehouse_fakes::FakeHandle;
use gatehouse_telegram::{SECRET_HEADER, Secret, TelegramChannel, UpdateMode, WebhookConfig};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use teloxide::prelude::*;

use crate::support::{APPROVER, FORUM, Running, calls, config, connect, control, fake};

const SECRET: &str = "s3cret-token_42-0123456789abcdef0123";

async fn say(fake: &FakeHandle, text: &str) -> Value {
    control(
        fake,
        "/_fake/inject",
        json!({"message": {"chat": {"id": APPROVER}, "text": text}}),
    )
    .await
}

fn text_of(event: Inbound) -> String {
    match event {
        Inbound::Text(text) => text.text,
        Inbound::Press(press) => panic!("expected text, got a press {press:?}"),
    }
}

#[tokio::test]
async fn survives_failing_polls_without_losing_or_duplicating_updates() {
    let fake = fake().await;
    let channel = connect(&fake).await;
    for fault in [
        json!({"method": "getUpdates", "count": 2, "status": 500}),
        json!({"method": "getUpdates", "retry_after": 1}),
    ] {
        control(&fake, "/_fake/faults", fault).await;
    }
    for text in ["one", "two", "three"] {
        say(&fake, text).await;
    }

    let mut running = Running::start(channel);
    let mut received = Vec::new();
    for _ in 0..3 {
        received.push(text_of(running.next().await));
    }

    assert_eq!(received, ["one", "two", "three"]);
    say(&fake, "four").await;
    assert_eq!(text_of(running.next().await), "four");
    running.expect_nothing(Duration::from_millis(2500)).await;
    assert!(
        calls(&fake, "getUpdates").len() >= 4,
        "the failed polls were retried"
    );
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn stops_cleanly_and_confirms_what_it_handed_over() {
    let fake = fake().await;
    let mut running = Running::start(connect(&fake).await);
    let injected = say(&fake, "before").await;
    assert_eq!(text_of(running.next().await), "before");

    assert_eq!(running.stop().await, Ok(()));

    let last_poll = calls(&fake, "getUpdates").pop().unwrap();
    let update_id = injected["update_id"].as_i64().unwrap();
    assert_eq!(last_poll.body["offset"], update_id + 1);
    let mut next_run = Running::start(connect(&fake).await);
    say(&fake, "after").await;
    assert_eq!(
        text_of(next_run.next().await),
        "after",
        "a restart does not replay handled updates"
    );
    assert_eq!(next_run.stop().await, Ok(()));
}

#[tokio::test]
async fn leaves_updates_it_could_not_hand_over_for_the_next_run() {
    let fake = fake().await;
    for text in ["a", "b", "c"] {
        say(&fake, text).await;
    }
    let mut first_run = Running::with_capacity(connect(&fake).await, 1);
    let mut seen = vec![text_of(first_run.next().await)];

    // Shut down while the poller is blocked on a full channel, mid-batch.
    let (result, drained) = first_run.stop_draining().await;
    assert_eq!(result, Ok(()));
    seen.extend(drained.into_iter().map(text_of));
    let mut second_run = Running::start(connect(&fake).await);
    while seen.len() < 3 {
        seen.push(text_of(second_run.next().await));
    }

    assert_eq!(seen, ["a", "b", "c"], "nothing lost, nothing twice");
    second_run.expect_nothing(Duration::from_millis(1500)).await;
    assert_eq!(second_run.stop().await, Ok(()));
}

#[tokio::test]
async fn removes_a_stale_webhook_before_polling() {
    let fake = fake().await;
    let mut running = Running::start(connect(&fake).await);
    say(&fake, "hello").await;
    assert_eq!(text_of(running.next().await), "hello");
    let first_calls: Vec<String> = fake
        .calls()
        .into_iter()
        .map(|call| call.method)
        .take(3)
        .collect();
    assert_eq!(first_calls, ["getMe", "deleteWebhook", "getUpdates"]);
    assert_eq!(
        calls(&fake, "getUpdates")[0].body["allowed_updates"],
        json!(["message", "callback_query"])
    );
    assert_eq!(running.stop().await, Ok(()));
}

/// A free loopback port for the webhook server.
fn free_port() -> SocketAddr {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap()
}

/// A raw webhook update: a private message from the approver, posted as Telegram would.
fn dm_update(update_id: i64, first_name: &str, text: &str) -> Value {
    json!({"update_id": update_id, "message": {"message_id": update_id, "date": 0,
        "chat": {"id": APPROVER, "type": "private", "first_name": first_name},
        "from": {"id": APPROVER, "is_bot": false, "first_name": first_name},
        "text": text}})
}

async fn webhook_channel(fake: &FakeHandle) -> (Arc<TelegramChannel>, String) {
    let listen = free_port();
    let url = format!("http://{listen}/telegram/updates");
    let mut config = config(fake);
    config.mode = UpdateMode::Webhook(WebhookConfig::new(
        listen,
        url.parse().unwrap(),
        Secret::new(SECRET),
    ));
    let channel = TelegramChannel::connect(config).await.unwrap();
    (Arc::new(channel), url)
}

#[tokio::test]
async fn receives_webhook_updates_carrying_the_secret() {
    let fake = fake().await;
    let (channel, url) = webhook_channel(&fake).await;
    let mut running = Running::start(channel);
    let registered = fake
        .wait_for_calls("setWebhook", 1, Duration::from_secs(15))
        .await
        .unwrap();
    assert_eq!(
        registered[0].body,
        // teloxide sends setWebhook as multipart, so the list arrives JSON-encoded.
        json!({"url": url, "secret_token": SECRET,
               "allowed_updates": "[\"message\",\"callback_query\"]"})
    );

    let delivery = say(&fake, "via webhook").await;

    assert_eq!(delivery["delivery"], "webhook");
    assert_eq!(delivery["attempts"][0]["status"], 200);
    assert_eq!(text_of(running.next().await), "via webhook");
    assert_eq!(
        calls(&fake, "getUpdates"),
        vec![],
        "no polling in webhook mode"
    );
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn refuses_webhook_requests_without_the_right_secret() {
    let fake = fake().await;
    let (channel, url) = webhook_channel(&fake).await;
    let mut running = Running::start(channel);
    fake.wait_for_calls("setWebhook", 1, Duration::from_secs(15))
        .await
        .unwrap();
    let update = dm_update(9, "Mallory", "/approve 0f3c9a1e allow-always");
    let http = reqwest::Client::new();
    let post = |secret: Option<&str>, body: String| {
        let mut request = http.post(&url).body(body);
        if let Some(secret) = secret {
            request = request.header(SECRET_HEADER, secret);
        }
        async move { request.send().await.unwrap().status().as_u16() }
    };

    assert_eq!(post(None, update.to_string()).await, 401);
    assert_eq!(post(Some("wrong"), update.to_string()).await, 401);
    assert_eq!(
        post(Some(&SECRET[..SECRET.len() - 1]), update.to_string()).await,
        401
    );
    let not_ascii = http
        .post(&url)
        .header(
            SECRET_HEADER,
            reqwest::header::HeaderValue::from_bytes(b"s3cret-token_4\xff").unwrap(),
        )
        .body(update.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(not_ascii.status().as_u16(), 401);
    assert_eq!(post(Some(SECRET), "not json".into()).await, 400);
    running.expect_nothing(Duration::from_millis(300)).await;

    // Someone re-registers the webhook with another secret: Telegram's own deliveries fail too.
    let bot = Bot::new("123:TEST-token").set_api_url(fake.base_url.parse().unwrap());
    bot.set_webhook(url.parse().unwrap())
        .secret_token("another-secret".to_owned())
        .await
        .unwrap();
    let delivery = say(&fake, "forged").await;
    assert_eq!(delivery["attempts"][0]["status"], 401);

    running.expect_nothing(Duration::from_millis(300)).await;
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn reports_a_repeated_webhook_delivery_once() {
    let fake = fake().await;
    let (channel, url) = webhook_channel(&fake).await;
    let mut running = Running::start(channel);
    fake.wait_for_calls("setWebhook", 1, Duration::from_secs(15))
        .await
        .unwrap();
    let update = dm_update(77, "Alice", "/approve 0f3c9a1e deny");
    let http = reqwest::Client::new();
    for _ in 0..2 {
        let status = http
            .post(&url)
            .header(SECRET_HEADER, SECRET)
            .json(&update)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(
            status, 200,
            "a repeat is acknowledged so Telegram stops sending it"
        );
    }

    assert_eq!(text_of(running.next().await), "/approve 0f3c9a1e deny");
    running.expect_nothing(Duration::from_millis(500)).await;
    assert_eq!(running.stop().await, Ok(()));
}

/// Issue 36: a forwarded message, one sent on behalf of a chat (an anonymous admin, a channel),
/// one composed by an inline bot and one from a shared sender id never reach the core as a
/// command, even when the forwarder is an approver; the approver's own message does.
#[tokio::test]
async fn reads_only_messages_that_speak_for_their_sender() {
    let fake = fake().await;
    let mut running = Running::start(connect(&fake).await);
    let group = json!({"id": FORUM, "type": "supergroup", "title": "ops"});
    let approver = json!({"id": APPROVER, "is_bot": false, "first_name": "Alice"});
    let not_their_own = [
        json!({"chat": {"id": APPROVER}, "from": approver, "text": "/approve 0f3c9a1e deny",
            "forward_origin": {"type": "user", "date": 1,
                "sender_user": {"id": 5151, "is_bot": false, "first_name": "Mallory"}}}),
        json!({"chat": {"id": APPROVER}, "from": approver, "text": "/approve 0f3c9a1e deny",
            "forward_origin": {"type": "hidden_user", "date": 1, "sender_user_name": "M"}}),
        json!({"chat": group, "from": {"id": 1_087_968_824, "is_bot": true,
                "first_name": "Group", "username": "GroupAnonymousBot"},
            "sender_chat": group, "text": "/elevated full"}),
        json!({"chat": group, "from": {"id": 777_000, "is_bot": false, "first_name": "Telegram"},
            "sender_chat": {"id": -1_009_999, "type": "channel", "title": "news"},
            "is_automatic_forward": true, "text": "/approve 0f3c9a1e deny"}),
        json!({"chat": group, "from": approver, "text": "/approve 0f3c9a1e deny",
            "via_bot": {"id": 6060, "is_bot": true, "first_name": "Inline"}}),
        json!({"chat": group, "from": {"id": 136_817_688, "is_bot": true,
                "first_name": "Channel"}, "text": "/approve 0f3c9a1e deny"}),
    ];
    for message in not_their_own {
        control(&fake, "/_fake/inject", json!({ "message": message })).await;
    }
    control(
        &fake,
        "/_fake/inject",
        json!({"message": {"chat": group, "from": approver, "text": "/approve 0f3c9a1e allow"}}),
    )
    .await;
    let Inbound::Text(own) = running.next().await else {
        panic!("expected the approver's own message")
    };
    assert_eq!(own.text, "/approve 0f3c9a1e allow");
    assert_eq!(own.sender.id, APPROVER.to_string());
    running.expect_nothing(Duration::from_millis(500)).await;
    assert_eq!(running.stop().await, Ok(()));
}
