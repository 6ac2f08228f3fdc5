use std::time::Duration;

use gatehouse_gateway::Limits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{ADMIN, AGENT, APPROVER, Server};

#[tokio::test]
async fn answers_with_ok_and_payload_for_a_valid_bearer_token() {
    let server = Server::start(Limits::default()).await;
    let (status, body) = server
        .rpc(Some(AGENT), json!({"method": "gateway.status"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["ok"], true);
    assert_eq!(body["payload"]["caller"]["name"], "agent");
    assert!(body.get("error").is_none());
}

#[tokio::test]
async fn denies_a_missing_or_wrong_token_with_401_and_a_bearer_challenge() {
    let server = Server::start(Limits::default()).await;
    for token in [None, Some("wrong-secret-0123456789")] {
        let (status, body) = server.rpc(token, json!({"method": "gateway.status"})).await;
        assert_eq!(status, 401);
        assert_eq!(
            body,
            json!({"ok":false,"error":{"code":"unauthorized","message":"missing or unknown token"}})
        );
    }
    let response = reqwest::Client::new()
        .post(server.url("/rpc"))
        .basic_auth("admin", Some(ADMIN))
        .json(&json!({"method": "gateway.status"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
}

/// The body is read only after the token is known: a stranger announcing a megabyte and sending
/// none of it is answered at once, where reading first would wait for the body.
#[tokio::test]
async fn answers_a_stranger_401_without_reading_the_body() {
    let server = Server::start(Limits::default()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /rpc HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
         content-length: 1000000\r\n\r\n",
        server.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 1024];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("a stranger is answered without sending the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains("\"unauthorized\""), "{answer}");
}

#[tokio::test]
async fn refuses_a_method_outside_the_token_scopes_with_403() {
    let server = Server::start(Limits::default()).await;
    let (status, body) = server
        .rpc(Some(APPROVER), json!({"method": "gateway.tokens"}))
        .await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "forbidden");
    let (status, _) = server
        .rpc(Some(ADMIN), json!({"method": "gateway.tokens"}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn denies_malformed_bodies_unknown_methods_and_connect() {
    let server = Server::start(Limits::default()).await;
    let cases = [
        (json!({"params": {}}), 400, "invalid_request"),
        (
            json!({"method": "gateway.status", "extra": 1}),
            400,
            "invalid_request",
        ),
        (
            json!({"method": "gateway.status", "params": {"x": 1}}),
            400,
            "invalid_params",
        ),
        (json!({"method": "no.such.method"}), 404, "unknown_method"),
        (
            json!({"method": "connect", "params": {}}),
            400,
            "invalid_request",
        ),
    ];
    for (body, status, code) in cases {
        let (got_status, got) = server.rpc(Some(ADMIN), body.clone()).await;
        assert_eq!(
            (got_status, got["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
    }
}
