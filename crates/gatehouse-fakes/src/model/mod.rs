//! Fake model APIs for running real agent hosts offline: the Anthropic Messages API (Claude
//! Code) and the OpenAI Responses API (Codex). Each follows a [`Script`] of turns — tool calls
//! with their inputs, then a final text — and records every request it received, so a test
//! reads the tool results the host sent back ([`anthropic::tool_results`],
//! [`openai::tool_results`]).
//!
//! Both serve the shared control endpoints (`/_fake/calls`, `/_fake/faults`) and
//! `GET|POST /_fake/script` on their own port.

pub mod anthropic;
pub mod openai;
mod script;
mod sse;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Bytes, to_bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::header::{AUTHORIZATION, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};

use crate::answer::CallSlot;
use crate::calls::CallLog;
use crate::control::{self as shared, Controlled};
use crate::error::FakeError;
use crate::faults::{Before, FailWith, FaultPlan, Platform};
use crate::server::{self, FakeHandle};
pub use script::{Script, ToolCall, Turn};

/// Largest request read; Claude Code's requests carry the whole conversation and tool list.
const MAX_BODY: usize = 32 * 1024 * 1024;

/// A tool result the host sent back to the model, as a test asserts on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResult {
    /// The id of the tool call it answers (`toolu_…` / `call_…`).
    pub call_id: String,
    /// Its text (content blocks joined).
    pub output: String,
    /// Anthropic's `is_error` (a hook's denial arrives as an error result); always false for
    /// OpenAI, whose results carry no such flag.
    pub is_error: bool,
}

/// Which API a fake speaks, for its error bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Dialect {
    Anthropic,
    OpenAi,
}

/// One fake model server's state.
#[derive(Debug)]
pub(crate) struct ModelFake {
    dialect: Dialect,
    calls: Arc<CallLog>,
    faults: FaultPlan,
    script: Mutex<Script>,
    ids: AtomicU64,
}

impl ModelFake {
    fn script(&self) -> Script {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A fresh number for message, response and call ids.
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records a request, checks its key and applies faults: the parsed body to serve, or
    /// the answer to give instead.
    async fn admit(
        &self,
        slot: &CallSlot,
        method: &str,
        path: &str,
        headers: &HeaderMap,
        bytes: &[u8],
    ) -> Result<Value, Response> {
        let body = if bytes.is_empty() {
            Ok(Value::Null)
        } else {
            serde_json::from_slice::<Value>(bytes)
        };
        let Ok(body) = body else {
            slot.record(&self.calls, method, path, None, Value::Null);
            return Err(self.error(400, "the request body is not valid JSON"));
        };
        slot.record(&self.calls, method, path, None, body.clone());
        let keyed = headers.contains_key("x-api-key")
            || headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("Bearer ") && v.len() > "Bearer ".len());
        if !keyed {
            return Err(self.error(401, "no API key: send x-api-key or Authorization: Bearer"));
        }
        match self.faults.before(method, None, slot).await {
            Before::Serve => Ok(body),
            Before::Fail(fail) => Err(self.fault(fail)),
            Before::Unsent => Err(StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        }
    }

    /// An error in the API's own shape.
    fn error(&self, status: u16, message: &str) -> Response {
        render_error(self.dialect, status, message, None)
    }

    fn fault(&self, fail: FailWith) -> Response {
        let message = fail.description.unwrap_or_else(|| match fail.status {
            429 => "rate limited (injected)".into(),
            _ => "injected failure".into(),
        });
        render_error(self.dialect, fail.status, &message, fail.retry_after)
    }
}

/// An API request that was recorded (as the last segment of its path: `messages`,
/// `responses`, `models`), carried a key and got past the faults.
pub(crate) struct Admitted {
    /// The parsed JSON body (`null` when there was none).
    body: Value,
    headers: HeaderMap,
}

impl FromRequest<Arc<ModelFake>> for Admitted {
    type Rejection = Response;

    async fn from_request(request: Request, fake: &Arc<ModelFake>) -> Result<Self, Response> {
        let (parts, body) = request.into_parts();
        let slot = parts
            .extensions
            .get::<CallSlot>()
            .cloned()
            .unwrap_or_default();
        let path = parts.uri.path();
        let method = path.rsplit('/').next().unwrap_or(path);
        let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
            slot.record(&fake.calls, method, path, None, Value::Null);
            return Err(fake.error(413, "the request body is too large"));
        };
        let body = fake
            .admit(&slot, method, path, &parts.headers, &bytes)
            .await?;
        Ok(Self {
            body,
            headers: parts.headers,
        })
    }
}

/// Anthropic: `{"type":"error","error":{"type","message"}}`; OpenAI:
/// `{"error":{"message","type","param","code"}}`; both with `retry-after` on a rate limit.
fn render_error(
    dialect: Dialect,
    status: u16,
    message: &str,
    retry_after: Option<f64>,
) -> Response {
    let body = match dialect {
        Dialect::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Dialect::OpenAi => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", Some("invalid_api_key")),
                429 => ("rate_limit_error", Some("rate_limit_exceeded")),
                404 => ("invalid_request_error", Some("not_found")),
                400..=499 => ("invalid_request_error", None),
                _ => ("server_error", None),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, Json(body)).into_response();
    if let Some(secs) = retry_after
        && let Ok(value) = HeaderValue::from_str(&format!("{}", secs.ceil() as u64))
    {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
}

impl Controlled for ModelFake {
    fn calls(&self) -> &CallLog {
        &self.calls
    }

    fn faults(&self) -> &FaultPlan {
        &self.faults
    }
}

/// Binds a model fake speaking `dialect` with its API routes, the script control and the
/// shared controls.
async fn spawn_model(
    addr: SocketAddr,
    script: Script,
    dialect: Dialect,
    base_path: &str,
    api: Router<Arc<ModelFake>>,
) -> Result<FakeHandle, FakeError> {
    let calls = Arc::new(CallLog::default());
    let platform = match dialect {
        Dialect::Anthropic => Platform::Anthropic,
        Dialect::OpenAi => Platform::OpenAi,
    };
    let fake = Arc::new(ModelFake {
        dialect,
        calls: Arc::clone(&calls),
        faults: FaultPlan::new(platform),
        script: Mutex::new(script),
        ids: AtomicU64::new(0),
    });
    server::serve(addr, calls, base_path, move |_| {
        api.route("/_fake/script", get(current_script).post(replace_script))
            .merge(shared::routes::<ModelFake>())
            .with_state(fake)
    })
    .await
}

async fn current_script(State(fake): State<Arc<ModelFake>>) -> Json<Value> {
    Json(json!({"ok": true, "script": fake.script()}))
}

/// `POST /_fake/script`: replaces the script (the conversation's position is read from each
/// request, so a new script applies from the next request on).
async fn replace_script(
    State(fake): State<Arc<ModelFake>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| FakeError::control("/_fake/script", e.to_string()))?;
    let script = Script::from_json(&value)?;
    *fake.script.lock().unwrap_or_else(PoisonError::into_inner) = script;
    Ok(current_script(State(fake)).await)
}

/// Any other route: recorded, then the API's own 404, so a host calling something new shows.
async fn unknown(
    State(fake): State<Arc<ModelFake>>,
    slot: CallSlot,
    uri: Uri,
    method: Method,
) -> Response {
    let path = uri.path();
    slot.record(
        &fake.calls,
        format!("{method} {path}"),
        path,
        None,
        Value::Null,
    );
    fake.error(404, &format!("{method} {path} is not served"))
}

/// Text of a tool result's content: a string, or the `text` of its content blocks joined.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Adds `result` unless a result for the same call was seen (every request repeats the
/// whole conversation).
fn push_new(results: &mut Vec<ToolResult>, result: ToolResult) {
    if !results.iter().any(|r| r.call_id == result.call_id) {
        results.push(result);
    }
}
