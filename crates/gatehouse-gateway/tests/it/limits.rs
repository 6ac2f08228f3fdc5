use gatehouse_gateway::{Limits, RateLimit};
use serde_json::json;

use crate::support::{ADMIN, AGENT, Server};

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
        listen: ([127, 0, 0, 1], 0).into(),
        tokens: vec![],
        limits: Limits {
            max_frame_bytes: 0,
            ..Limits::default()
        },
    };
    let error = gatehouse_gateway::GatewayState::new(&settings).unwrap_err();
    assert_eq!(error.code(), "invalid_settings");
}
