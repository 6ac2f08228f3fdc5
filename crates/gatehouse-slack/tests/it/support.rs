use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_chat::render::{ApprovalView, Card, render_prompt};
use gatehouse_chat::{ButtonPress, Channel, Inbound, InboundText};
use gatehouse_config::Secret;
use gatehouse_fakes::{Call, FakeHandle};
use gatehouse_policy::ApprovalDecision;
use gatehouse_slack::{SlackChannel, SlackConfig, SlackMode};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use url::Url;

pub(crate) const SIGNING_SECRET: &str = "s3cr3t-signing";

pub(crate) fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

pub(crate) async fn fake() -> FakeHandle {
    gatehouse_fakes::slack::spawn(loopback()).await.unwrap()
}

/// A configuration pointed at `fake`.
pub(crate) fn config(fake: &FakeHandle, mode: SlackMode) -> SlackConfig {
    let mut config = SlackConfig::new(Secret::new("xoxb-fake"), Secret::new("xapp-fake")).unwrap();
    config.api_url = Url::parse(&fake.base_url).unwrap();
    config.mode = mode;
    config.signing_secret = Some(Secret::new(SIGNING_SECRET));
    config.socket_connections = 1;
    config
}

pub(crate) fn channel(config: SlackConfig) -> Arc<SlackChannel> {
    Arc::new(SlackChannel::new(config).unwrap())
}

/// Runs the channel the way the chat core does, handing back the core's end of the queue.
pub(crate) fn run(channel: &Arc<SlackChannel>) -> (mpsc::Receiver<Inbound>, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(8);
    let channel = Arc::clone(channel);
    let task = tokio::spawn(async move {
        channel.run(tx).await.unwrap();
    });
    (rx, task)
}

pub(crate) fn view(allow_always: bool) -> ApprovalView {
    ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "rm -rf /tmp/build && echo <!here>".into(),
        cwd: Some("/srv/app".into()),
        agent_id: Some("main".into()),
        host: None,
        resolved_path: Some("/usr/bin/rm".into()),
        env_keys: vec![],
        expires_at_ms: 1_795_243_600_000,
        allow_always_offered: allow_always,
        chain: None,
        tool: None,
    }
}

/// A pending card with three buttons, as the dispatcher would build it.
pub(crate) fn pending_card() -> Card {
    render_prompt(&view(true), 1_795_243_300_000, 1200).with_buttons(vec![
        (ApprovalDecision::AllowOnce, "g1.tok-once".into()),
        (ApprovalDecision::AllowAlways, "g1.tok-always".into()),
        (ApprovalDecision::Deny, "g1.tok-deny".into()),
    ])
}

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

/// Waits (up to 15 s) until the fake has seen `count` calls of `method`.
pub(crate) async fn wait_for_calls(fake: &FakeHandle, method: &str, count: usize) -> Vec<Call> {
    match fake
        .wait_for_calls(method, count, Duration::from_secs(15))
        .await
    {
        Ok(calls) => calls,
        Err(error) => panic!("{error}; calls: {:#?}", fake.calls()),
    }
}

/// The next event the adapter pushed to the core.
pub(crate) async fn next(rx: &mut mpsc::Receiver<Inbound>) -> Inbound {
    tokio::time::timeout(Duration::from_secs(15), rx.recv())
        .await
        .expect("no inbound event within 15 s")
        .expect("queue closed")
}

/// A fake and a channel connected to it over Socket Mode, `adjust`ed first; the task runs
/// [`Channel::run`].
pub(crate) async fn socket_mode(
    adjust: impl FnOnce(&mut SlackConfig),
) -> (
    FakeHandle,
    Arc<SlackChannel>,
    mpsc::Receiver<Inbound>,
    JoinHandle<()>,
) {
    let fake = fake().await;
    let mut config = config(&fake, SlackMode::Socket);
    adjust(&mut config);
    let slack = channel(config);
    let (rx, task) = run(&slack);
    wait_for_calls(&fake, "apps.connections.open", 1).await;
    (fake, slack, rx, task)
}

/// The next event, which must be text.
pub(crate) async fn next_text(rx: &mut mpsc::Receiver<Inbound>) -> InboundText {
    match next(rx).await {
        Inbound::Text(text) => text,
        other => panic!("expected text, got {other:?}"),
    }
}

/// The next event, which must be a button press.
pub(crate) async fn next_press(rx: &mut mpsc::Receiver<Inbound>) -> ButtonPress {
    match next(rx).await {
        Inbound::Press(press) => press,
        other => panic!("expected a press, got {other:?}"),
    }
}
