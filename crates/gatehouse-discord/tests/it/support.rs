use std::sync::Arc;
use std::time::Duration;

use gatehouse_chat::render::{ApprovalView, Card, render_prompt};
use gatehouse_chat::{Channel, Inbound, Route};
use gatehouse_discord::{DiscordChannel, DiscordConfig, Secret};
use gatehouse_fakes::discord::{APP_ID, GUILD_ID};
use gatehouse_fakes::{Call, FakeHandle};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A text channel of the fake's guild.
pub(crate) const CHANNEL_ID: u64 = 4000;
/// The configured approver.
pub(crate) const APPROVER: u64 = 5000;
/// Someone in the chat who is not an approver.
pub(crate) const STRANGER: u64 = 6000;

/// A fake Discord with fast heartbeats, so every gateway test also exercises HEARTBEAT_ACK.
pub(crate) async fn fake() -> FakeHandle {
    let fake = gatehouse_fakes::discord::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    control(
        &fake,
        "/_fake/config",
        json!({"heartbeat_interval_ms": 200}),
    )
    .await;
    fake
}

/// The adapter's settings for `fake`: its URL (so the rate limiter is off) and its guild.
pub(crate) fn config(fake: &FakeHandle) -> DiscordConfig {
    let mut config = DiscordConfig::new(Secret::new("fake-token"), APP_ID);
    config.api_url = Some(fake.base_url.clone());
    config.guild_ids = vec![GUILD_ID];
    config
}

/// A connected channel, not yet listening on the gateway.
pub(crate) async fn channel(fake: &FakeHandle) -> Arc<DiscordChannel> {
    Arc::new(DiscordChannel::connect(config(fake)).await.unwrap())
}

/// A channel whose `run` is listening; returns once the gateway session is identified.
pub(crate) async fn running(fake: &FakeHandle) -> (Arc<DiscordChannel>, mpsc::Receiver<Inbound>) {
    let discord = channel(fake).await;
    let (tx, rx) = mpsc::channel(16);
    let runner = Arc::clone(&discord);
    tokio::spawn(async move { runner.run(tx).await });
    wait_for_calls(fake, "gateway.IDENTIFY", 1).await;
    (discord, rx)
}

/// POSTs JSON to a control endpoint and returns the answer; panics on a non-2xx status.
pub(crate) async fn control(fake: &FakeHandle, path: &str, body: Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("http://{}{path}", fake.addr))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let answer: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{path} answered {status}: {answer}");
    answer
}

/// Injects a gateway dispatch; the READY/session must exist.
pub(crate) async fn inject(fake: &FakeHandle, t: &str, d: Value) -> Value {
    control(fake, "/_fake/inject", json!({"t": t, "d": d})).await
}

/// Waits (up to 15 s) until the fake has received `count` calls of `method`.
pub(crate) async fn wait_for_calls(fake: &FakeHandle, method: &str, count: usize) -> Vec<Call> {
    match fake
        .wait_for_calls(method, count, Duration::from_secs(15))
        .await
    {
        Ok(calls) => calls,
        Err(error) => panic!("{error}; calls: {:#?}", fake.calls()),
    }
}

/// The next inbound event, within 15 s.
pub(crate) async fn next(events: &mut mpsc::Receiver<Inbound>) -> Inbound {
    tokio::time::timeout(Duration::from_secs(15), events.recv())
        .await
        .expect("no inbound event within 15 s")
        .expect("inbound queue closed")
}

/// The route back to the fake guild's text channel.
pub(crate) fn origin() -> Route {
    Route::from_target("t", "discord", &CHANNEL_ID.to_string(), None, None).unwrap()
}

/// A pending card for `ls` without buttons, for tests about transport rather than rendering.
pub(crate) fn plain_card() -> Card {
    let view = ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "ls".into(),
        cwd: None,
        agent_id: None,
        host: None,
        resolved_path: None,
        env_keys: Vec::new(),
        expires_at_ms: 1_795_243_000_000,
        allow_always_offered: false,
        chain: None,
        tool: None,
    };
    render_prompt(&view, 1_795_242_700_000, 1200)
}
