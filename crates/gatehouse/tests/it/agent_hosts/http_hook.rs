//! `POST /hooks/claude-code` on the real gateway, posted the bodies Claude Code posts: the same
//! decisions as the command hook, and status 200 with a deny for every failure (Claude Code
//! ignores the body of any other status).

use serde_json::{Value, json};

use super::{Gatehouse, fixture};
use crate::gateway::{AGENT, APPROVER};

/// Posts `body` with `token` (none: no header); status and parsed answer (`null` if empty).
async fn post(base: &str, token: Option<&str>, body: Vec<u8>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/hooks/claude-code"))
        .header("Content-Type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let answer = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    (status, answer)
}

fn decision(answer: &Value) -> (&str, &str) {
    let out = &answer["hookSpecificOutput"];
    (
        out["permissionDecision"].as_str().unwrap_or_default(),
        out["permissionDecisionReason"].as_str().unwrap_or_default(),
    )
}

#[tokio::test]
async fn the_http_hook_decides_as_the_command_does_and_always_answers_200() {
    let g = Gatehouse::start().await;
    let base = &g.server.base;
    let bash = fixture("claude-code", "pretooluse-Bash.json", &g.workspace).to_string();
    let (status, answer) = post(base, Some(AGENT), bash.clone().into_bytes()).await;
    assert_eq!((status, decision(&answer).0), (200, "allow"), "{answer}");

    let mut write = fixture("claude-code", "pretooluse-Write.json", &g.workspace);
    write["tool_input"]["file_path"] = json!(g.workspace.join(".env"));
    let (status, answer) = post(base, Some(AGENT), write.to_string().into_bytes()).await;
    assert_eq!((status, decision(&answer).0), (200, "deny"), "{answer}");
    assert!(decision(&answer).1.contains(".env"), "{answer}");

    // Refusals: each a 200 deny naming what is wrong.
    for (token, body, expected) in [
        (
            None,
            bash.clone().into_bytes(),
            "no `Authorization: Bearer` token",
        ),
        (
            Some("not-a-token-0123456789"),
            bash.clone().into_bytes(),
            "the hook's token was refused",
        ),
        // An operator token lacks the `agent` scope the tool-call gate needs.
        (Some(APPROVER), bash.clone().into_bytes(), "forbidden"),
        (Some(AGENT), b"{not json".to_vec(), "is not JSON"),
        (
            Some(AGENT),
            vec![b' '; 2 * 1024 * 1024],
            "over Gatehouse's limit",
        ),
    ] {
        let (status, answer) = post(base, token, body).await;
        assert_eq!(status, 200, "{answer}");
        let (decided, reason) = decision(&answer);
        assert_eq!(decided, "deny", "{answer}");
        assert!(reason.contains(expected), "{expected}: {answer}");
    }
}

#[tokio::test]
async fn the_http_hook_waits_for_a_telegram_press_on_a_permission_request() {
    let g = Gatehouse::start().await;
    let body = fixture("claude-code", "permissionrequest-Write.json", &g.workspace).to_string();
    let base = g.server.base.clone();
    let waiting = tokio::spawn(async move { post(&base, Some(AGENT), body.into_bytes()).await });
    let card = g.card(1).await;
    assert!(
        card.body["text"]
            .as_str()
            .unwrap()
            .contains("the HTTP hook of token agent"),
        "{:?}",
        card.body
    );
    g.press(&card, "Allow once").await;
    let (status, answer) = waiting.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        answer,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                      "decision": {"behavior": "allow"}}})
    );
}
