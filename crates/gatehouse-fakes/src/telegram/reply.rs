//! The Bot API envelope: `{"ok":true,"result":…}` or `{"ok":false,"error_code","description"}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::faults::FailWith;

/// A Bot API error, worded as Telegram words it so clients' error matching is exercised.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TgError {
    status: u16,
    error_code: u16,
    description: String,
    retry_after: Option<u64>,
}

impl TgError {
    fn new(status: u16, description: String) -> Self {
        Self {
            status,
            error_code: status,
            description,
            retry_after: None,
        }
    }

    /// 400 with Telegram's `Bad Request: ` prefix.
    pub(crate) fn bad_request(what: impl std::fmt::Display) -> Self {
        Self::new(400, format!("Bad Request: {what}"))
    }

    /// 403 with Telegram's `Forbidden: ` prefix.
    pub(crate) fn forbidden(what: impl std::fmt::Display) -> Self {
        Self::new(403, format!("Forbidden: {what}"))
    }

    /// 409 with Telegram's `Conflict: ` prefix.
    pub(crate) fn conflict(what: impl std::fmt::Display) -> Self {
        Self::new(409, format!("Conflict: {what}"))
    }

    /// Unknown method.
    pub(crate) fn not_found() -> Self {
        Self::new(404, "Not Found".into())
    }

    /// Malformed bot token.
    pub(crate) fn unauthorized() -> Self {
        Self::new(401, "Unauthorized".into())
    }

    /// An injected fault; rate limits carry `parameters.retry_after` in whole seconds.
    pub(crate) fn from_fault(fail: FailWith) -> Self {
        let retry_after = fail.retry_after.map(|secs| secs.ceil() as u64);
        let error_code = if retry_after.is_some() {
            429
        } else {
            fail.status
        };
        let description = fail.description.unwrap_or_else(|| match retry_after {
            Some(secs) => format!("Too Many Requests: retry after {secs}"),
            None => default_description(error_code).to_owned(),
        });
        Self {
            status: fail.status,
            error_code,
            description,
            retry_after,
        }
    }

    /// The description, for tests of this crate.
    #[cfg(test)]
    pub(crate) fn description(&self) -> &str {
        &self.description
    }
}

fn default_description(code: u16) -> &'static str {
    match code {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        _ => "Error",
    }
}

impl IntoResponse for TgError {
    fn into_response(self) -> Response {
        let mut body = json!({
            "ok": false,
            "error_code": self.error_code,
            "description": self.description,
        });
        if let Some(secs) = self.retry_after {
            body["parameters"] = json!({"retry_after": secs});
        }
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        (status, Json(body)).into_response()
    }
}

/// A successful Bot API answer.
pub(crate) fn ok(result: Value) -> Response {
    Json(json!({"ok": true, "result": result})).into_response()
}
