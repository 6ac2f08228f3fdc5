//! Discord's REST error bodies (`{"message","code","errors"}`) and rate-limit answers.

use axum::Json;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::clock::now_ms;
use crate::faults::{FailWith, RateScope};

/// A Discord API error with its JSON error code, worded as Discord words it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DcError {
    status: u16,
    body: Value,
    headers: Vec<(&'static str, String)>,
}

impl DcError {
    fn new(status: u16, code: u32, message: &str) -> Self {
        Self {
            status,
            body: json!({"message": message, "code": code}),
            headers: Vec::new(),
        }
    }

    /// 401 for a missing or malformed `Authorization: Bot …` header.
    pub(crate) fn unauthorized() -> Self {
        Self::new(401, 0, "401: Unauthorized")
    }

    /// 401 for an interaction token older than 15 minutes.
    pub(crate) fn unauthorized_webhook() -> Self {
        Self::new(401, 50027, "Invalid Webhook Token")
    }

    /// 404 for an unknown route.
    pub(crate) fn not_found() -> Self {
        Self::new(404, 0, "404: Not Found")
    }

    /// 404 with one of Discord's "Unknown …" codes (10003 channel, 10008 message, …).
    pub(crate) fn unknown(code: u32, what: &str) -> Self {
        Self::new(404, code, &format!("Unknown {what}"))
    }

    /// 400 with a specific JSON code (50006 empty message, 40060 already acknowledged, …).
    pub(crate) fn bad(code: u32, message: &str) -> Self {
        Self::new(400, code, message)
    }

    /// 403 with a specific JSON code (50007 cannot DM, 50005 not the author).
    pub(crate) fn forbidden(code: u32, message: &str) -> Self {
        Self::new(403, code, message)
    }

    /// 400 `Invalid Form Body` (50035) with the nested `errors` object pointing at `path`.
    pub(crate) fn invalid_form(path: &[String], error_code: &str, message: &str) -> Self {
        let mut errors = json!({"_errors": [{"code": error_code, "message": message}]});
        for key in path.iter().rev() {
            let mut level = Map::new();
            level.insert(key.clone(), errors);
            errors = Value::Object(level);
        }
        Self {
            status: 400,
            body: json!({"message": "Invalid Form Body", "code": 50035, "errors": errors}),
            headers: Vec::new(),
        }
    }

    /// An injected fault; 429s carry `retry_after` seconds (float) and rate-limit headers as
    /// Discord sends them: bucket headers for a route (`user`) or shared resource limit,
    /// `X-RateLimit-Global` for the bot's global limit.
    pub(crate) fn from_fault(fail: FailWith, method: &str) -> Self {
        let Some(retry_after) = fail.retry_after else {
            let message = fail
                .description
                .unwrap_or_else(|| format!("{}: {}", fail.status, reason(fail.status)));
            return Self::new(fail.status, 0, &message);
        };
        let global = fail.scope == RateScope::Global;
        let mut headers = vec![("retry-after", format!("{}", retry_after.ceil() as u64))];
        if global {
            headers.push(("x-ratelimit-global", "true".into()));
        } else {
            let reset_ms = now_ms() + (retry_after * 1000.0) as u64;
            headers.extend([
                ("x-ratelimit-limit", "5".into()),
                ("x-ratelimit-remaining", "0".into()),
                (
                    "x-ratelimit-reset",
                    format!("{:.3}", reset_ms as f64 / 1000.0),
                ),
                ("x-ratelimit-reset-after", format!("{retry_after:.3}")),
                (
                    "x-ratelimit-bucket",
                    format!("fake-{}", method.to_ascii_lowercase()),
                ),
            ]);
        }
        let scope = match fail.scope {
            RateScope::User => "user",
            RateScope::Global => "global",
            RateScope::Shared => "shared",
        };
        headers.push(("x-ratelimit-scope", scope.into()));
        Self {
            status: fail.status,
            body: json!({
                "message": fail.description.unwrap_or_else(|| "You are being rate limited.".into()),
                "retry_after": retry_after,
                "global": global,
            }),
            headers,
        }
    }
}

fn reason(status: u16) -> &'static str {
    StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

impl IntoResponse for DcError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let mut response = (status, Json(self.body)).into_response();
        for (name, value) in self.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response
                    .headers_mut()
                    .insert(HeaderName::from_static(name), value);
            }
        }
        response
    }
}

/// Parses a snowflake from a path, answering Discord's "Unknown …" 404 when it is not one.
pub(crate) fn snowflake(text: &str, code: u32, what: &str) -> Result<u64, DcError> {
    text.parse().map_err(|_| DcError::unknown(code, what))
}

/// A successful REST answer.
#[derive(Debug)]
pub(crate) enum Reply {
    /// 200 with a JSON body.
    Json(Value),
    /// 204 without a body.
    NoContent,
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        match self {
            Self::Json(value) => Json(value).into_response(),
            Self::NoContent => StatusCode::NO_CONTENT.into_response(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nests_form_errors_along_the_path() {
        let error = DcError::invalid_form(
            &["components".into(), "0".into(), "custom_id".into()],
            "BASE_TYPE_BAD_LENGTH",
            "Must be between 1 and 100 in length.",
        );
        assert_eq!(
            error.body["errors"]["components"]["0"]["custom_id"]["_errors"][0]["code"],
            "BASE_TYPE_BAD_LENGTH"
        );
    }

    #[test]
    fn rate_limit_carries_float_seconds_and_headers() {
        let fail = FailWith {
            status: 429,
            retry_after: Some(1.25),
            description: None,
            scope: RateScope::User,
        };
        let error = DcError::from_fault(fail.clone(), "createMessage");
        assert_eq!(error.body["retry_after"], 1.25);
        assert!(error.headers.contains(&("retry-after", "2".into())));
        assert!(
            error
                .headers
                .contains(&("x-ratelimit-bucket", "fake-createmessage".into()))
        );
        let global = DcError::from_fault(
            FailWith {
                scope: RateScope::Global,
                ..fail
            },
            "createMessage",
        );
        assert_eq!(global.body["global"], true);
        assert!(
            global
                .headers
                .contains(&("x-ratelimit-global", "true".into()))
        );
        assert!(
            global
                .headers
                .contains(&("x-ratelimit-scope", "global".into()))
        );
        assert!(
            !global
                .headers
                .iter()
                .any(|(h, _)| *h == "x-ratelimit-bucket")
        );
    }
}
