use std::time::Duration;

use gatehouse_gateway::{Limits, RateLimit};
use serde_json::{Value, json};

use crate::support::{ADMIN, AGENT, APPROVER, Server, Ws};

#[tokio::test]
async fn closes_a_websocket_that_sends_an_oversized_frame_with_message_too_big() {
    let server = Server::start(Limits {
        max_frame_bytes: 1024,
        ..Limits::default()
    })
    .await;
    let mut ws = server.ws().await;
    ws.connect(ADMIN).await;
    ws.request("gateway.status", json!({"pad": "x".repeat(2048)}))
        .await;
    let refused = ws.json().await;
    assert_eq!(refused["error"]["code"], "frame_too_large");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("exceeds the limit of 1024 bytes")
    );
    ws.expect_close(1009, "frame_too_large").await;
}

#[tokio::test]
async fn reads_a_frame_many_times_the_read_buffer_whole() {
    // The read buffer is 8 KiB; a frame under the limit but far larger arrives over many reads.
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    ws.connect(ADMIN).await;
    ws.request("gateway.status", json!({"pad": "x".repeat(100 * 1024)}))
        .await;
    let answer = ws.json().await;
    // Parsed whole: the answer is about the params, not the frame.
    assert_eq!(answer["error"]["code"], "invalid_params", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`pad`")
    );
}

#[tokio::test]
async fn refuses_an_oversized_http_body_with_413() {
    let server = Server::start(Limits {
        max_body_bytes: 1024,
        ..Limits::default()
    })
    .await;
    let (status, body) = server
        .rpc(
            Some(ADMIN),
            json!({"method": "gateway.status", "params": {"pad": "x".repeat(2048)}}),
        )
        .await;
    assert_eq!(status, 413);
    assert_eq!(body["error"]["code"], "body_too_large");
    let (status, _) = server
        .rpc(Some(ADMIN), json!({"method": "gateway.status"}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn rate_limits_each_token_separately_with_429() {
    let limits = Limits {
        rate: Some(RateLimit {
            burst: 3,
            per_second: 1,
        }),
        ..Limits::default()
    };
    let server = Server::start(limits).await;
    for _ in 0..3 {
        let (status, _) = server
            .rpc(Some(AGENT), json!({"method": "gateway.status"}))
            .await;
        assert_eq!(status, 200);
    }
    let (status, body) = server
        .rpc(Some(AGENT), json!({"method": "gateway.status"}))
        .await;
    assert_eq!(status, 429);
    assert_eq!(body["error"]["code"], "rate_limited");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("rate limit exceeded for token `agent`")
    );
    // Another token has its own budget.
    let (status, _) = server
        .rpc(Some(ADMIN), json!({"method": "gateway.status"}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn rate_limits_websocket_requests_and_keeps_the_connection() {
    let limits = Limits {
        rate: Some(RateLimit {
            burst: 2,
            per_second: 1,
        }),
        ..Limits::default()
    };
    let server = Server::start(limits).await;
    let mut ws = server.ws().await;
    ws.connect(AGENT).await; // connect is charged too
    assert_eq!(ws.call("gateway.status", json!({})).await["ok"], true);
    assert_eq!(
        ws.call("gateway.status", json!({})).await["error"]["code"],
        "rate_limited"
    );
}

#[tokio::test]
async fn refuses_to_build_a_gateway_with_zero_limits() {
    let settings = gatehouse_gateway::GatewaySettings {
        tokens: vec![],
        limits: Limits {
            max_frame_bytes: 0,
            ..Limits::default()
        },
    };
    let error = gatehouse_gateway::GatewayState::new(&settings).unwrap_err();
    assert_eq!(error.code(), "invalid_settings");
}

/// The answer and close of a frame refused for its size, before its payload was read (so the
/// answer cannot name its request).
async fn expect_frame_too_large(ws: &mut Ws, size: usize, limit: usize) {
    let refused = ws.json().await;
    assert_eq!(refused["id"], Value::Null, "{refused}");
    assert_eq!(refused["error"]["code"], "frame_too_large", "{refused}");
    assert_eq!(
        refused["error"]["message"],
        format!("frame of {size} bytes exceeds the limit of {limit} bytes")
    );
    ws.expect_close(1009, "frame_too_large").await;
}

/// Before `connect` a stranger may send 16 KiB, not the 1 MiB frame limit: a first frame
/// announcing more is refused at its header, so the gateway neither reserves nor waits for its
/// payload (the handshake timeout is far away).
#[tokio::test]
async fn refuses_a_first_frame_over_16_kib_at_its_header() {
    let server = Server::start(Limits {
        handshake_timeout: Duration::from_secs(60),
        ..Limits::default()
    })
    .await;
    let mut ws = server.ws().await;
    ws.announce_text_frame(1_000_000).await;
    expect_frame_too_large(&mut ws, 1_000_000, 16_384).await;
}

/// The 16 KiB are room enough for any real `connect`, and bind only the first message.
#[tokio::test]
async fn allows_a_long_connect_then_frames_up_to_the_frame_limit() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    let name = "n".repeat(12 * 1024);
    let connected = ws
        .call(
            "connect",
            json!({"token": ADMIN, "client": {"name": name, "version": "1"}}),
        )
        .await;
    assert_eq!(connected["ok"], true, "{connected}");
    let status = ws
        .call("gateway.status", json!({"pad": "x".repeat(512 * 1024)}))
        .await;
    assert_eq!(status["error"]["code"], "invalid_params");
}

/// After `connect` the frame limit itself is enforced at the header, not a multiple of it.
#[tokio::test]
async fn refuses_a_frame_announced_over_the_limit_after_connect_at_its_header() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    ws.connect(ADMIN).await;
    ws.announce_text_frame(2 * 1024 * 1024).await;
    expect_frame_too_large(&mut ws, 2_097_152, 1_048_576).await;
}

/// Strangers cannot hold sockets open without end: past `max_unauthenticated` sockets that have
/// not sent `connect`, the upgrade is refused with 503; a socket that authenticates gives its
/// place back, and authenticated sockets never count.
#[tokio::test]
async fn refuses_websockets_beyond_the_unauthenticated_limit_with_503() {
    let server = Server::start(Limits {
        max_unauthenticated: 2,
        ..Limits::default()
    })
    .await;
    let mut first = server.ws().await;
    let _second = server.ws().await;
    let Err((status, refused)) = server.try_ws().await else {
        panic!("a third stranger was let in");
    };
    assert_eq!(status, 503);
    assert_eq!(refused["error"]["code"], "handshake_limit", "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "2 WebSocket connections are already waiting to authenticate; retry shortly"
    );

    first.connect(AGENT).await;
    let mut third = server.ws().await;
    assert!(server.try_ws().await.is_err(), "the second and third wait");
    assert_eq!(third.connect(APPROVER).await["ok"], true);
    assert_eq!(first.call("gateway.status", json!({})).await["ok"], true);
}
