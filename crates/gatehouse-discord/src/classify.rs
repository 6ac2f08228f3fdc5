//! Discord failures mapped onto the chat core's delivery classes, so the core's `Deliverer`
//! decides retries for Discord exactly as for every other channel.
//!
//! A 429 keeps Discord's `retry_after` (the body's fractional seconds, else the `Retry-After`
//! header). Error codes with a known fix get it spelled out. Anything unrecognised is
//! permanent: retrying a call we do not understand risks duplicate cards.

use std::time::Duration;

use gatehouse_chat::{ChatError, RateScope};
use reqwest::header::HeaderMap;
use serde_json::Value;

/// The channel name used in routes, locators and errors.
pub(crate) const CHANNEL: &str = "discord";

/// Used when a 429 names no wait at all; Discord always does, a proxy might not.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// Longest platform message echoed into an error.
const MAX_MESSAGE_CHARS: usize = 200;

/// Discord's error code for a message that does not exist (any more).
pub(crate) const UNKNOWN_MESSAGE: i64 = 10008;

/// An unsuccessful answer: status, `Retry-After`, `X-RateLimit-Scope` and Discord's JSON error
/// body.
#[derive(Debug)]
pub(crate) struct ApiFailure {
    pub(crate) status: u16,
    header_retry: Option<Duration>,
    header_scope: Option<String>,
    body: Value,
}

impl ApiFailure {
    /// Reads the parts of `response` that classification needs.
    pub(crate) async fn read(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let header_retry = retry_after_header(response.headers());
        let header_scope = response
            .headers()
            .get("x-ratelimit-scope")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = response.json::<Value>().await.unwrap_or(Value::Null);
        Self {
            status,
            header_retry,
            header_scope,
            body,
        }
    }

    /// Discord's JSON error code, when the body has one.
    pub(crate) fn code(&self) -> Option<i64> {
        self.body.get("code").and_then(Value::as_i64)
    }

    /// The chat core's class for this answer.
    pub(crate) fn into_error(self) -> ChatError {
        from_parts(
            self.status,
            self.header_retry,
            self.header_scope.as_deref(),
            &self.body,
        )
    }
}

/// A request that never got an answer. The URL is dropped: interaction webhook URLs carry the
/// interaction token.
pub(crate) fn transport(error: reqwest::Error) -> ChatError {
    let error = error.without_url();
    let reason = if error.is_timeout() {
        "the request timed out".to_owned()
    } else if error.is_connect() {
        format!("could not connect: {error}")
    } else {
        error.to_string()
    };
    if error.is_builder() {
        return permanent(format!("the request could not be built: {reason}"));
    }
    ChatError::Transient {
        channel: CHANNEL.to_owned(),
        reason,
    }
}

/// serenity's own failures on the rate-limited path (it retries 429s itself there).
pub(crate) fn serenity(error: serenity::Error) -> ChatError {
    match error {
        serenity::Error::Http(serenity::http::HttpError::Request(error)) => transport(error),
        other => permanent(format!("serenity refused the call: {other}")),
    }
}

/// The class of an error answer, from its parts. A 429 pauses what Discord names: the whole
/// bot on its global limit, else the route's bucket (the kind of call in that channel).
pub(crate) fn from_parts(
    status: u16,
    header_retry: Option<Duration>,
    header_scope: Option<&str>,
    body: &Value,
) -> ChatError {
    let code = body.get("code").and_then(Value::as_i64);
    let message: String = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_MESSAGE_CHARS)
        .collect();
    if status == 429 {
        let retry_after = body
            .get("retry_after")
            .and_then(Value::as_f64)
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .or(header_retry)
            .unwrap_or(DEFAULT_RETRY_AFTER);
        let global = body.get("global").and_then(Value::as_bool) == Some(true)
            || header_scope == Some("global");
        return ChatError::RateLimited {
            channel: CHANNEL.to_owned(),
            retry_after,
            scope: if global {
                RateScope::Bot
            } else {
                RateScope::Route
            },
        };
    }
    if (500..=599).contains(&status) {
        return ChatError::Transient {
            channel: CHANNEL.to_owned(),
            reason: format!("HTTP {status}: {message}"),
        };
    }
    let fix = match (status, code) {
        (401, _) => {
            "the bot token was rejected; reset it in the Developer Portal (Bot > Reset Token)"
        }
        (_, Some(50007)) => {
            "the user does not accept direct messages from the bot: they must share a server with it and allow direct messages from its members"
        }
        (_, Some(50001 | 50013)) => {
            "the bot lacks access here: grant it View Channel, Send Messages, Embed Links and Send Messages in Threads"
        }
        (_, Some(10003)) => "the channel does not exist or the bot cannot see it",
        (_, Some(UNKNOWN_MESSAGE)) => "the message no longer exists",
        (_, Some(10062)) => "the interaction expired (not acknowledged within 3 seconds)",
        (_, Some(50027)) => "the interaction token expired (follow-ups live 15 minutes)",
        _ => "",
    };
    let code = code.map(|c| format!(" code {c}")).unwrap_or_default();
    let reason = if fix.is_empty() {
        format!("HTTP {status}{code}: {message}")
    } else {
        format!("HTTP {status}{code}: {fix}")
    };
    permanent(reason)
}

pub(crate) fn permanent(reason: String) -> ChatError {
    ChatError::Permanent {
        channel: CHANNEL.to_owned(),
        reason,
    }
}

fn retry_after_header(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_fractional_retry_after_from_the_body() {
        let body =
            json!({"message": "You are being rate limited.", "retry_after": 1.5, "global": false});
        assert_eq!(
            from_parts(429, Some(Duration::from_secs(2)), Some("user"), &body),
            ChatError::RateLimited {
                channel: "discord".into(),
                retry_after: Duration::from_millis(1500),
                scope: RateScope::Route,
            }
        );
        let global =
            json!({"message": "You are being rate limited.", "retry_after": 0.8, "global": true});
        assert!(matches!(
            from_parts(429, None, Some("global"), &global),
            ChatError::RateLimited {
                scope: RateScope::Bot,
                ..
            }
        ));
    }

    #[test]
    fn falls_back_to_the_header_then_a_second() {
        let limited = |header| match from_parts(429, header, None, &Value::Null) {
            ChatError::RateLimited { retry_after, .. } => retry_after,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            limited(Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(limited(None), Duration::from_secs(1));
        let negative = json!({"retry_after": -4.0});
        assert!(matches!(
            from_parts(429, None, None, &negative),
            ChatError::RateLimited { retry_after, .. } if retry_after == Duration::from_secs(1)
        ));
    }

    #[test]
    fn retries_server_errors_only() {
        assert!(from_parts(502, None, None, &Value::Null).is_retryable());
        assert!(
            !from_parts(
                400,
                None,
                None,
                &json!({"code": 50035, "message": "Invalid Form Body"})
            )
            .is_retryable()
        );
    }

    #[test]
    fn spells_out_the_fix_for_closed_dms() {
        let error = from_parts(
            403,
            None,
            None,
            &json!({"code": 50007, "message": "Cannot send messages to this user"}),
        );
        let ChatError::Permanent { reason, .. } = error else {
            panic!()
        };
        assert!(
            reason.starts_with("HTTP 403 code 50007: the user does not accept direct messages")
        );
    }

    #[test]
    fn strips_control_characters_from_echoed_messages() {
        let error = from_parts(
            400,
            None,
            None,
            &json!({"code": 1, "message": "bad\u{1b}[2Jthing"}),
        );
        assert_eq!(error, permanent("HTTP 400 code 1: bad[2Jthing".to_owned()));
    }
}
