use std::net::SocketAddr;
use std::time::Duration;

use gatehouse_fakes::{Call, FakeHandle};
use serde_json::Value;

/// Any free loopback port.
pub(crate) fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
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

/// Waits (up to 15 s) until the fake has received `count` calls of `method`, and returns them.
pub(crate) async fn wait_for_calls(fake: &FakeHandle, method: &str, count: usize) -> Vec<Call> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|c| c.method == method)
            .collect();
        if calls.len() >= count {
            return calls;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {count} x {method}; calls: {:#?}",
            fake.calls()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
