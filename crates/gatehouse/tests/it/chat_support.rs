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
