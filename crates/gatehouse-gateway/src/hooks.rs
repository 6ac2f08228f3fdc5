//! `POST /hooks/claude-code`: Claude Code's `http` hook, answered in process — the same
//! translation and answers as `gatehouse hook claude-code`, with no process per tool call.
//!
//! **Always 200.** Claude Code ignores the body of any other status and, unless the hook says
//! `onFailure: "block"`, lets the call go on; so a refused token, an oversized body and an
//! internal error are each answered 200 with a deny. Authentication comes first, from the
//! headers alone: a stranger's body is never read.

use std::time::Duration;

use axum::body::to_bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use gatehouse_hooks::{
    AfterCheck, Answer, HookError, HookEvent, HookToolCall, HttpAnswer, MAX_INPUT_BYTES, Rejected,
    render_http, translate,
};
use serde_json::Value;
use serde_json::value::to_raw_value;
use tokio::time::Instant;

use crate::http::bearer;
use crate::methods::Call;
use crate::metrics::Transport;
use crate::state::GatewayState;

/// The metric label of this route's requests.
const LABEL: &str = "hooks.claude-code";

/// `POST /hooks/claude-code`.
pub(crate) async fn claude_code(State(state): State<GatewayState>, request: Request) -> Response {
    let (code, answer) = answer(&state, request).await;
    state.metrics().record_request(Transport::Http, LABEL, code);
    (
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK),
        [(header::CONTENT_TYPE, HttpAnswer::CONTENT_TYPE)],
        answer.body,
    )
        .into_response()
}

/// The answer, and the outcome code the metrics count it under.
async fn answer(state: &GatewayState, request: Request) -> (&'static str, HttpAnswer) {
    let refused = |reason: String| {
        render_http(
            HookEvent::PreToolUse,
            &Answer::Deny {
                reason: format!("Gatehouse refused this call: {reason}"),
            },
        )
    };
    let principal = match bearer(request.headers()).map(|token| state.authenticate(token)) {
        Some(Ok(principal)) => principal,
        Some(Err(error)) => {
            return (
                error.code(),
                refused(format!("the hook's token was refused ({error})")),
            );
        }
        None => {
            return (
                "unauthorized",
                refused(
                    "the hook sent no `Authorization: Bearer` token; add one to its `headers` \
                     (and the variable to `allowedEnvVars`)"
                        .to_owned(),
                ),
            );
        }
    };
    if let Err(error) = state.charge(&principal) {
        return (error.code(), refused(error.to_string()));
    }
    let body = match to_bytes(request.into_body(), MAX_INPUT_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            let rejected = Rejected {
                event: None,
                error: HookError::TooLarge {
                    len: MAX_INPUT_BYTES + 1,
                    limit: MAX_INPUT_BYTES,
                },
            };
            return ("body_too_large", rejected.render_http());
        }
    };
    let settings = state.claude_code_hook();
    let machine = format!("the HTTP hook of token {}", principal.name());
    let translated = match translate(gatehouse_hooks::Host::ClaudeCode, &body, settings, &machine) {
        Ok(translated) => translated,
        Err(rejected) => return ("invalid_params", rejected.render_http()),
    };
    let call = Call {
        state: state.clone(),
        caller: principal,
    };
    let answer = decide(&call, &translated.call, settings.approval_timeout).await;
    ("ok", render_http(translated.event(), &answer))
}

/// `tools.call.check`, then a blocking `tools.call.request` when a person must decide, as the
/// command hook asks them over the wire.
async fn decide(call: &Call, hook: &HookToolCall, approval_timeout: Duration) -> Answer {
    let started = Instant::now();
    let check = match dispatch(call, "tools.call.check", &hook.check_params()).await {
        Ok(check) => check,
        Err(reason) => return Answer::Deny { reason },
    };
    match gatehouse_hooks::after_check(&check) {
        AfterCheck::Answer(answer) => answer,
        AfterCheck::AskPerson => {
            let left = approval_timeout.saturating_sub(started.elapsed());
            let millis = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
            match dispatch(call, "tools.call.request", &hook.request_params(millis)).await {
                Ok(result) => gatehouse_hooks::after_request(&result, left.as_secs()),
                Err(reason) => Answer::Deny { reason },
            }
        }
    }
}

/// One method, dispatched as the hook's token; its payload, or why there is none.
async fn dispatch(call: &Call, method: &str, params: &Value) -> Result<Value, String> {
    let failed = |why: String| format!("the Gatehouse gateway refused to judge this call: {why}");
    let params = to_raw_value(params).map_err(|e| failed(e.to_string()))?;
    let payload = call
        .state
        .registry()
        .dispatch(call.clone(), method, Some(params))
        .await
        .map_err(|error| failed(format!("{method}: {error} ({})", error.code())))?;
    serde_json::from_str(payload.get()).map_err(|e| failed(e.to_string()))
}
