use gatehouse_gateway::Limits;
use serde_json::json;

use crate::support::{ADMIN, AGENT, APPROVER, Frame, Server};

#[tokio::test]
async fn connect_answers_the_token_scopes_and_server_version() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    let connected = ws.connect(APPROVER).await;
    let server_info = &connected["payload"]["server"];
    assert_eq!(
        connected,
        json!({"type":"res","id":"r1","ok":true,
               "payload":{"scopes":["operator.approvals"],
                          "server":{"version":env!("CARGO_PKG_VERSION"),
                                    "instance":server_info["instance"],
                                    "startedAtMs":server_info["startedAtMs"]},
                          "events":{"lastSeq":0,"replayed":0,"complete":true}}})
    );
    assert!(
        server_info["instance"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );
    let status = ws.call("gateway.status", json!({})).await;
    assert_eq!(status["payload"]["server"], *server_info);
    assert_eq!(
        status["payload"]["caller"],
        json!({"name":"approver","scopes":["operator.approvals"]})
    );
}

#[tokio::test]
async fn denies_any_request_before_connect_and_closes_the_socket() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    let refused = ws.call("gateway.status", json!({})).await;
    assert_eq!(refused["ok"], false);
    assert_eq!(refused["error"]["code"], "handshake_required");
    assert_eq!(
        refused["error"]["message"],
        "the first request must be `connect {token, client}`, got `gateway.status`"
    );
    ws.expect_close(1008, "handshake_required").await;
}

#[tokio::test]
async fn denies_a_malformed_first_frame_and_closes_the_socket() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    ws.send_raw("{\"hello\":".into()).await;
    let refused = ws.json().await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].as_str()),
        (json!(null), Some("invalid_request"))
    );
    ws.expect_close(1008, "invalid_request").await;
}

#[tokio::test]
async fn denies_a_wrong_token_and_closes_the_socket() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    let refused = ws.connect("not-a-configured-token").await;
    assert_eq!(refused["error"]["code"], "unauthorized");
    ws.expect_close(1008, "unauthorized").await;
}

#[tokio::test]
async fn denies_connect_without_client_info_as_invalid_params() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    let refused = ws.call("connect", json!({"token": ADMIN})).await;
    assert_eq!(refused["error"]["code"], "invalid_params");
    ws.expect_close(1008, "invalid_params").await;
}

#[tokio::test]
async fn refuses_a_method_outside_the_token_scopes_with_forbidden() {
    let server = Server::start(Limits::default()).await;
    for token in [AGENT, APPROVER] {
        let mut ws = server.ws().await;
        ws.connect(token).await;
        let refused = ws.call("gateway.tokens", json!({})).await;
        assert_eq!(refused["error"]["code"], "forbidden");
        // A refusal is an answer, not the end of the connection.
        assert_eq!(ws.call("gateway.status", json!({})).await["ok"], true);
    }
    let mut admin = server.ws().await;
    admin.connect(ADMIN).await;
    let tokens = admin.call("gateway.tokens", json!({})).await;
    assert_eq!(tokens["payload"]["tokens"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn answers_unknown_methods_with_their_own_code() {
    let server = Server::start(Limits::default()).await;
    let mut ws = server.ws().await;
    ws.connect(ADMIN).await;
    let refused = ws.call("exec.approval.list", json!({})).await;
    assert_eq!(refused["error"]["code"], "unknown_method");
}

/// RFC 6455 §5.5.1: a close is answered with a close. The gateway used to drop the TCP connection
/// instead, so a client that said goodbye recorded an abnormal closure (1006).
#[tokio::test]
async fn answers_a_client_close_with_the_same_code() {
    let server = Server::start(Limits::default()).await;
    let mut connected = server.ws().await;
    connected.connect(AGENT).await;
    let mut anonymous = server.ws().await;
    for ws in [&mut connected, &mut anonymous] {
        match ws.close_with(1000).await {
            Frame::Close(code, _) => assert_eq!(code, 1000),
            Frame::Json(value) => panic!("expected a close, got {value}"),
        }
    }
}

/// The gateway upgrades connections itself (to bound what a stranger may send before
/// `connect`), so it refuses what is not a WebSocket opening handshake in the protocol's terms.
#[tokio::test]
async fn refuses_a_plain_get_of_the_websocket_path_with_400() {
    let server = Server::start(Limits::default()).await;
    let response = reqwest::get(server.url("/ws")).await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.headers()["sec-websocket-version"], "13");
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request");
    assert_eq!(
        body["error"]["message"],
        "invalid request: not a WebSocket upgrade: `Connection` must include `upgrade`"
    );
}
