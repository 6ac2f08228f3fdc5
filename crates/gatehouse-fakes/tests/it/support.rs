use std::net::SocketAddr;
use std::time::Duration;

use gatehouse_fakes::{Call, FakeHandle};
use serde_json::Value;

/// Any free loopback port.
pub(crate) fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// POSTs JSON to a control endpoint; panics with the fake's reason when it refuses.
pub(crate) async fn control(fake: &FakeHandle, path: &str, body: Value) -> Value {
    fake.control(path, &body).await.unwrap()
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
