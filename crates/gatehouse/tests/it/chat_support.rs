//! Helpers every chat-channel test shares: create a pending approval, read it, wait for it to
//! settle. Platform specifics (the fake, its events) stay in each channel's module.

use std::time::Duration;

use serde_json::{Value, json};

use crate::gateway::{AGENT, APPROVER, Server};

/// How long to wait for the gateway or a fake to act.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// A pending approval for `make deploy`, created with `twoPhase` and `extra` params; its id.
pub(crate) async fn request(server: &Server, extra: Value) -> String {
    let mut params = json!({
        "command": "make deploy",
        "argv": ["make", "deploy"],
        "cwd": server.scratch(),
        "agentId": "main",
        "sessionKey": "s1",
        "twoPhase": true,
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    let accepted = server.ok(AGENT, "exec.approval.request", params).await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    accepted["id"].as_str().unwrap().to_owned()
}

/// The stored approval.
pub(crate) async fn approval(server: &Server, id: &str) -> Value {
    server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await
}

/// Waits for the approval to leave `pending`; its record.
pub(crate) async fn settled(server: &Server, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let record = approval(server, id).await;
        if record["state"] != "pending" {
            return record;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still pending: {record}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls `probe` until it returns `Some`, for at most [`WAIT`]; `what` names it on timeout.
pub(crate) async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Arms a 429 on `method` with `retry_after_secs`, creates an approval and checks that the
/// card was sent exactly twice: once refused, once after waiting `Retry-After` out.
pub(crate) async fn assert_waits_out_a_429(
    fake: &gatehouse_fakes::FakeHandle,
    server: &Server,
    method: &str,
    retry_after_secs: f64,
) {
    fake.control(
        "/_fake/faults",
        &json!({"method": method, "retry_after": retry_after_secs}),
    )
    .await
    .unwrap();
    request(server, json!({})).await;
    let attempts = fake.wait_for_calls(method, 2, WAIT).await.unwrap();
    let waited = attempts[1].at_ms - attempts[0].at_ms;
    assert!(
        waited as f64 >= retry_after_secs * 1000.0,
        "retried after {waited} ms"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sent = fake.calls().iter().filter(|c| c.method == method).count();
    assert_eq!(sent, 2, "one 429, one delivery");
}

/// One card a bot posted, as a test presses it: where it is and its buttons, each as
/// (label or action id, token).
pub(crate) struct Card {
    /// The chat (channel, conversation) it is in.
    pub(crate) chat: String,
    /// The platform's message id (`ts` on Slack).
    pub(crate) message: String,
    pub(crate) buttons: Vec<(String, String)>,
}

impl Card {
    /// The token of the button whose name contains `name`.
    pub(crate) fn button(&self, name: &str) -> &str {
        &self
            .buttons
            .iter()
            .find(|(text, _)| text.contains(name))
            .unwrap_or_else(|| panic!("no {name:?} button in {:?}", self.buttons))
            .1
    }
}
