//! Sorting slack-morphism's errors into the chat core's three kinds, because the core's
//! [`gatehouse_chat::delivery::Deliverer`] retries on that classification alone.

use std::time::Duration;

use gatehouse_chat::{ChatError, RateScope};
use slack_morphism::errors::SlackClientError;

/// The channel name every error carries.
pub(crate) const CHANNEL: &str = "slack";

/// A 429 without `Retry-After` still pauses the channel, for Slack's smallest window.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// Slack API error codes that say "try again later" rather than "this request is wrong".
const TRANSIENT_CODES: &[&str] = &[
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
    "team_added_to_org",
];

/// Maps one failed call. API errors keep Slack's code, plus the fix when the adapter knows one.
/// A 429 names the conversation (`chat.postMessage` is limited per channel); see
/// [`per_method`] for the methods Slack limits across the workspace.
pub(crate) fn classify(error: &SlackClientError) -> ChatError {
    match error {
        SlackClientError::RateLimitError(limit) => ChatError::RateLimited {
            channel: CHANNEL.to_owned(),
            retry_after: limit.retry_after.unwrap_or(DEFAULT_RETRY_AFTER),
            scope: RateScope::Chat,
        },
        SlackClientError::ApiError(api) if TRANSIENT_CODES.contains(&api.code.as_str()) => {
            transient(format!("slack api error {}", api.code))
        }
        SlackClientError::ApiError(api) => permanent(api_reason(&api.code)),
        SlackClientError::HttpError(http) if http.status_code.as_u16() == 429 => {
            ChatError::RateLimited {
                channel: CHANNEL.to_owned(),
                retry_after: DEFAULT_RETRY_AFTER,
                scope: RateScope::Chat,
            }
        }
        SlackClientError::HttpError(http) if http.status_code.is_server_error() => {
            transient(format!("http status {}", http.status_code))
        }
        SlackClientError::HttpError(http) => permanent(format!("http status {}", http.status_code)),
        SlackClientError::HttpProtocolError(_)
        | SlackClientError::EndOfStream(_)
        | SlackClientError::SystemError(_)
        | SlackClientError::SocketModeProtocolError(_) => transient(error.to_string()),
        SlackClientError::ProtocolError(protocol) => permanent(format!(
            "unexpected response from slack: {}",
            protocol.json_error
        )),
    }
}

/// [`classify`] for a method Slack limits per workspace (`chat.update`, `chat.delete`,
/// `chat.postEphemeral`: the numbered tiers): its 429 pauses that method everywhere.
pub(crate) fn per_method(error: &SlackClientError) -> ChatError {
    match classify(error) {
        ChatError::RateLimited {
            channel,
            retry_after,
            ..
        } => ChatError::RateLimited {
            channel,
            retry_after,
            scope: RateScope::Method,
        },
        other => other,
    }
}

fn api_reason(code: &str) -> String {
    let fix = match code {
        "not_in_channel" | "channel_not_found" => {
            "; invite the app to the channel (/invite @Gatehouse) or check the channel id"
        }
        "invalid_auth" | "not_authed" | "token_revoked" | "account_inactive" => {
            "; check the bot token channels.slack sets (botToken, tokenFile or tokenEnv; \
             reinstall the app to get a fresh xoxb- token)"
        }
        "missing_scope" => "; add the scope from deploy/slack-app-manifest.json and reinstall",
        "cannot_dm_bot" | "user_not_found" => "; approvers must be Slack user ids (U…)",
        _ => "",
    };
    format!("slack api error {code}{fix}")
}

fn transient(reason: String) -> ChatError {
    ChatError::Transient {
        channel: CHANNEL.to_owned(),
        reason,
    }
}

fn permanent(reason: String) -> ChatError {
    ChatError::Permanent {
        channel: CHANNEL.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use slack_morphism::errors::{SlackClientApiError, SlackRateLimitError};

    use super::*;

    fn api(code: &str) -> SlackClientError {
        SlackClientError::ApiError(SlackClientApiError::new(code.to_owned()))
    }

    #[test]
    fn maps_retry_after_to_rate_limited() {
        let error = SlackClientError::RateLimitError(
            SlackRateLimitError::new().with_retry_after(Duration::from_secs(7)),
        );
        assert_eq!(
            classify(&error),
            ChatError::RateLimited {
                channel: "slack".into(),
                retry_after: Duration::from_secs(7),
                scope: RateScope::Chat,
            }
        );
        assert!(matches!(
            per_method(&error),
            ChatError::RateLimited {
                scope: RateScope::Method,
                ..
            }
        ));
    }

    #[test]
    fn retries_slack_side_failures_only() {
        assert!(classify(&api("internal_error")).is_retryable());
        assert!(!classify(&api("channel_not_found")).is_retryable());
        assert!(!classify(&api("invalid_blocks")).is_retryable());
    }

    #[test]
    fn names_the_fix_for_a_channel_the_bot_is_not_in() {
        let ChatError::Permanent { reason, .. } = classify(&api("not_in_channel")) else {
            panic!("not permanent")
        };
        assert!(reason.contains("/invite"), "{reason}");
    }
}
