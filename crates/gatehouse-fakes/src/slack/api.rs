//! The Web API endpoint `/api/{method}`: token checks, recording, faults, dispatch.

use std::sync::Arc;

use axum::body::to_bytes;
use axum::extract::{Path, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::reply::{SlError, ok};
use super::{APP_ID, BOT_ID, BOT_USER_ID, Slack, TEAM_ID};
use crate::answer::CallSlot;
use crate::body::{self, str_field};
use crate::faults::Before;

const MAX_BODY: usize = 2 * 1024 * 1024;

/// Which kind of token a method needs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum TokenKind {
    /// `xoxb-` (bot) or `xoxp-` (user).
    Workspace,
    /// `xapp-` app-level token, for Socket Mode.
    App,
}

fn needed(method: &str) -> Option<TokenKind> {
    match method {
        "apps.connections.open" => Some(TokenKind::App),
        "auth.test"
        | "chat.postMessage"
        | "chat.update"
        | "chat.delete"
        | "chat.postEphemeral"
        | "conversations.open"
        | "conversations.history"
        | "conversations.replies" => Some(TokenKind::Workspace),
        _ => None,
    }
}

fn token_kind(token: &str) -> Option<TokenKind> {
    if token.starts_with("xoxb-") || token.starts_with("xoxp-") {
        Some(TokenKind::Workspace)
    } else if token.starts_with("xapp-") {
        Some(TokenKind::App)
    } else {
        None
    }
}

/// Serves one Web API call.
pub(super) async fn method(
    State(slack): State<Arc<Slack>>,
    Path(name): Path<String>,
    slot: CallSlot,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let bytes = to_bytes(body, MAX_BODY).await.unwrap_or_default();
    let Ok(mut body) = body::parse(&parts.headers, parts.uri.query(), &bytes) else {
        slot.record(&slack.calls, name, path, None, Value::Null);
        return SlError::api("invalid_json").into_response();
    };
    let bearer = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let token = bearer.or_else(|| str_field(&body, "token"));
    if body.get("token").is_some() {
        body["token"] = json!("<redacted>");
    }
    let chat = str_field(&body, "channel");
    slot.record(&slack.calls, name.clone(), path, chat.clone(), body.clone());
    let Some(needed) = needed(&name) else {
        return SlError::api("unknown_method").into_response();
    };
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return SlError::api("not_authed").into_response();
    };
    match token_kind(&token) {
        None => return SlError::api("invalid_auth").into_response(),
        Some(kind) if kind != needed => {
            return SlError::api("not_allowed_token_type").into_response();
        }
        Some(_) => {}
    }
    match slack.faults.before(&name, chat.as_deref(), &slot).await {
        Before::Serve => {}
        Before::Fail(fail) => return SlError::from_fault(fail).into_response(),
        Before::Unsent => return SlError::api("fatal_error").into_response(),
    }
    let mut state = slack.lock();
    let result = match name.as_str() {
        "auth.test" => Ok(
            json!({"url": "https://gatehouse-fake.slack.com/", "team": "Gatehouse Fake",
            "user": "gatehouse", "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": BOT_ID,
            "is_enterprise_install": false}),
        ),
        "apps.connections.open" => {
            let ticket = state.socket.ticket();
            Ok(json!({"url": format!("ws://{}/link/?ticket={ticket}&app_id={APP_ID}", slack.addr)}))
        }
        "chat.postMessage" => state.conversations.post(&body),
        "chat.update" => state.conversations.update(&body),
        "chat.delete" => state.conversations.delete(&body),
        "chat.postEphemeral" => state.conversations.post_ephemeral(&body),
        "conversations.open" => state.conversations.open(&body),
        "conversations.history" => state.conversations.history_of(&body),
        _ => Err(SlError::api("unknown_method")),
    };
    match result {
        Ok(fields) => ok(fields),
        Err(error) => error.into_response(),
    }
}
