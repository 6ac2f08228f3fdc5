//! Slack's Web API envelope: HTTP 200 with `{"ok":false,"error":"…"}` for API errors, HTTP 429
//! with `Retry-After` for rate limits.

use axum::Json;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::faults::FailWith;

/// A Web API error, with Slack's error string.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SlError {
    status: u16,
    body: Value,
    retry_after: Option<u64>,
}

impl SlError {
    /// The usual `{"ok":false,"error":…}` with HTTP 200.
    pub(crate) fn api(error: &str) -> Self {
        Self {
            status: 200,
            body: json!({"ok": false, "error": error}),
            retry_after: None,
        }
    }

    /// `invalid_blocks` with the per-field messages Slack adds.
    pub(crate) fn invalid_blocks(problem: String) -> Self {
        Self {
            status: 200,
            body: json!({"ok": false, "error": "invalid_blocks", "errors": [problem.clone()],
                "response_metadata": {"messages": [format!("[ERROR] {problem}")]}}),
            retry_after: None,
        }
    }

    /// An injected fault: 429 with `Retry-After`, or the given status with `error` set to the
    /// description (so `{"status":200,"description":"channel_not_found"}` fakes an API error).
    pub(crate) fn from_fault(fail: FailWith) -> Self {
        let retry_after = fail.retry_after.map(|secs| secs.ceil() as u64);
        let default = if retry_after.is_some() {
            "ratelimited"
        } else {
            "fatal_error"
        };
        Self {
            status: fail.status,
            body: json!({"ok": false, "error": fail.description.as_deref().unwrap_or(default)}),
            retry_after,
        }
    }

    /// The error string, for tests of this crate.
    #[cfg(test)]
    pub(crate) fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or("")
    }
}

impl IntoResponse for SlError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK);
        let mut response = (status, Json(self.body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// A successful answer: `ok: true` plus the method's fields.
pub(crate) fn ok(mut fields: Value) -> Response {
    fields["ok"] = json!(true);
    Json(fields).into_response()
}
