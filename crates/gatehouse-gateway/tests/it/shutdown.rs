use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_gateway::{Access, Call, Limits, Registry};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::{AGENT, Server};

#[tokio::test]
async fn closes_websockets_with_going_away_on_shutdown() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    ws.connect(AGENT).await;
    let state = server.state.clone();
    let stopping = tokio::spawn(server.stop());
    ws.expect_close(1001, "shutting_down").await;
    stopping.await.unwrap();
    assert!(state.is_shutting_down());
}

#[tokio::test]
async fn finishes_an_in_flight_http_request_on_shutdown() {
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let mut registry = Registry::standard();
    let (on_start, on_release) = (Arc::clone(&started), Arc::clone(&release));
    registry.register("test.slow", Access::AnyScope, move |_: Call, _: Value| {
        let (on_start, on_release) = (Arc::clone(&on_start), Arc::clone(&on_release));
        async move {
            on_start.notify_one();
            on_release.notified().await;
            Ok(json!("done"))
        }
    });
    let server = Server::start_with(registry, Limits::default()).await;
    let url = server.url("/rpc");
    let request = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .post(url)
            .bearer_auth(AGENT)
            .json(&json!({"method": "test.slow"}))
            .send()
            .await
            .unwrap();
        (
            response.status().as_u16(),
            response.json::<Value>().await.unwrap(),
        )
    });
    started.notified().await;
    let state = server.state.clone();
    let stopping = tokio::spawn(server.stop());
    while !state.is_shutting_down() {
        tokio::task::yield_now().await;
    }
    release.notify_one();
    assert_eq!(
        request.await.unwrap(),
        (200, json!({"ok": true, "payload": "done"}))
    );
    stopping.await.unwrap();
}

/// A request still running when `shutdown_grace` runs out has its connection dropped, so `serve`
/// returns within the grace whatever the client does.
#[tokio::test]
async fn drops_an_http_request_still_running_when_the_grace_ends() {
    let started = Arc::new(Notify::new());
    let mut registry = Registry::standard();
    let on_start = Arc::clone(&started);
    registry.register(
        "test.forever",
        Access::AnyScope,
        move |_: Call, _: Value| {
            let on_start = Arc::clone(&on_start);
            async move {
                on_start.notify_one();
                std::future::pending::<()>().await;
                Ok(json!("never"))
            }
        },
    );
    let grace = Duration::from_millis(500);
    let limits = Limits {
        shutdown_grace: grace,
        ..Limits::default()
    };
    let server = Server::start_with(registry, limits).await;
    let url = server.url("/rpc");
    let request = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(AGENT)
            .json(&json!({"method": "test.forever"}))
            .send()
            .await
    });
    started.notified().await;
    let stopping = Instant::now();
    server.stop().await;
    assert!(stopping.elapsed() >= grace, "{:?}", stopping.elapsed());
    let dropped = tokio::time::timeout(Duration::from_secs(5), request)
        .await
        .unwrap()
        .unwrap();
    assert!(dropped.is_err(), "{dropped:?}");
}
