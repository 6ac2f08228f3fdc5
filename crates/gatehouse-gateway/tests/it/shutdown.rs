use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_gateway::{Access, Call, Limits, Registry};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::support::{AGENT, Server, read_until};

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

/// What a load balancer or a client sees once shutdown began: the listener is closed, so a new
/// connection is refused; an idle kept-alive connection is closed; and a request already on its
/// way, on a connection accepted before, is still answered, with 503 and `Connection: close`:
/// `/healthz` says `shutting-down`, `GET /ws` `shutting_down`.
#[tokio::test]
async fn refuses_new_connections_and_answers_requests_under_way_503_on_shutdown() {
    let server = Server::start(Limits::default()).await;
    let addr = server.addr;
    let mut health = TcpStream::connect(addr).await.unwrap();
    health
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: gatehouse\r\n")
        .await
        .unwrap();
    let mut upgrade = TcpStream::connect(addr).await.unwrap();
    upgrade
        .write_all(
            b"GET /ws HTTP/1.1\r\nhost: gatehouse\r\nconnection: upgrade\r\nupgrade: websocket\r\n\
              sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
        )
        .await
        .unwrap();
    // Answered, so accepted, and so were the two before it: a listener accepts in order.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: gatehouse\r\n\r\n")
        .await
        .unwrap();
    let ok = read_until(&mut idle, "{\"status\":\"ok\"}").await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");

    let stopping = tokio::spawn(server.stop());
    let mut rest = [0; 64];
    let closed = tokio::time::timeout(Duration::from_secs(5), idle.read(&mut rest)).await;
    assert_eq!(closed.unwrap().unwrap(), 0, "the idle connection is closed");
    let refused = tokio::time::timeout(Duration::from_secs(5), async {
        while TcpStream::connect(addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(refused.is_ok(), "new connections are refused");

    for (stream, answer) in [
        (&mut health, "{\"status\":\"shutting-down\"}"),
        (&mut upgrade, "\"code\":\"shutting_down\""),
    ] {
        stream.write_all(b"\r\n").await.unwrap();
        let response = read_until(stream, answer).await.to_ascii_lowercase();
        assert!(response.starts_with("http/1.1 503"), "{response}");
        assert!(response.contains("connection: close"), "{response}");
    }
    stopping.await.unwrap();
}
