use gatehouse_gateway::Limits;
use serde_json::json;

use crate::support::{ADMIN, Server};

#[tokio::test]
async fn healthz_answers_ok_without_a_token() {
    let server = Server::start(Limits::default()).await;
    let response = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.json::<serde_json::Value>().await.unwrap(),
        json!({"status": "ok"})
    );
}

#[tokio::test]
async fn metrics_count_requests_by_method_and_outcome() {
    let server = Server::start(Limits::default()).await;
    server
        .rpc(Some(ADMIN), json!({"method": "gateway.status"}))
        .await;
    server.rpc(Some(ADMIN), json!({"method": "no.such"})).await;
    let mut ws = server.ws().await;
    ws.connect(ADMIN).await;
    let response = reqwest::get(server.url("/metrics")).await.unwrap();
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = response.text().await.unwrap();
    for line in [
        "gatehouse_rpc_requests_total{transport=\"http\",method=\"gateway.status\",code=\"ok\"} 1",
        "gatehouse_rpc_requests_total{transport=\"http\",method=\"unknown\",code=\"unknown_method\"} 1",
        "gatehouse_rpc_requests_total{transport=\"ws\",method=\"connect\",code=\"ok\"} 1",
        "gatehouse_ws_connections 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
}

#[tokio::test]
async fn serves_the_control_ui_with_a_strict_content_security_policy() {
    let server = Server::start(Limits::default()).await;
    let page = reqwest::get(server.url("/")).await.unwrap();
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("<script src=\"/app.js\""), "{html}");
    let script = reqwest::get(server.url("/app.js"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(script.contains("#token=") || script.contains("get(\"token\")"));
    assert!(script.contains("sessionStorage") && script.contains("/ws"));
    let style = reqwest::get(server.url("/app.css")).await.unwrap();
    assert_eq!(style.status().as_u16(), 200);
}
