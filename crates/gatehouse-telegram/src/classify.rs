//! Telegram failures mapped onto the chat core's delivery classes, so the core's `Deliverer`
//! decides retries for Telegram exactly as for every other channel.
//!
//! teloxide drops the HTTP status and keeps only the description, so classes are chosen from its
//! typed errors and, for descriptions it does not know, from Telegram's documented wording.
//! Anything unrecognised is permanent: retrying a call we do not understand risks duplicates.

use std::time::Duration;

use gatehouse_chat::{ChatError, RateScope};
use gatehouse_config::Secret;
use teloxide::{ApiError, RequestError};

/// The channel name used in routes, locators and errors.
pub(crate) const CHANNEL: &str = "telegram";

/// Descriptions Telegram (or a proxy in front of it) gives 5xx answers.
const SERVER_ERRORS: [&str; 4] = [
    "Internal Server Error",
    "Bad Gateway",
    "Service Unavailable",
    "Gateway Timeout",
];

/// Classifies a failed call. `token` is scrubbed from transport errors, whose text can
/// include the request URL and so the bot token.
pub(crate) fn classify(error: &RequestError, token: &Secret, bot_username: &str) -> ChatError {
    match error {
        // Flood control is counted per chat; a bot past its overall limit hears it in every
        // chat it writes to, and each of those pauses in turn.
        RequestError::RetryAfter(seconds) => ChatError::RateLimited {
            channel: CHANNEL.to_owned(),
            retry_after: seconds.duration(),
            scope: RateScope::Chat,
        },
        RequestError::MigrateToChatId(chat) => permanent(format!(
            "the group was upgraded to a supergroup; use chat id {chat} in the configuration"
        )),
        RequestError::Network(error) => transient(scrub(&with_causes(error.as_ref()), token)),
        RequestError::InvalidJson { .. } => {
            transient("unreadable answer from the Bot API (a proxy error page?)".to_owned())
        }
        RequestError::Io(error) => transient(scrub(&error.to_string(), token)),
        RequestError::Api(api) => classify_api(api, bot_username),
    }
}

/// The error for a call cut short by `call_timeout` (slow network, or teloxide's 10 s sleep
/// after a 5xx).
pub(crate) fn timed_out(after: Duration) -> ChatError {
    transient(format!(
        "no answer within {after:?} (network problem or a Bot API server error)"
    ))
}

fn classify_api(error: &ApiError, bot_username: &str) -> ChatError {
    match error {
        ApiError::CantInitiateConversation => cant_initiate(bot_username),
        ApiError::Unknown(text) if text.contains("bot can't initiate conversation") => {
            cant_initiate(bot_username)
        }
        ApiError::BotBlocked => permanent(format!(
            "the user blocked the bot; they must open the chat with @{bot_username} and press \
             Restart"
        )),
        ApiError::InvalidToken => permanent(
            "Telegram does not accept the bot token; check the token channels.telegram sets \
             (botToken, tokenFile or tokenEnv)"
                .to_owned(),
        ),
        ApiError::Unknown(text) if SERVER_ERRORS.iter().any(|s| text.contains(s)) => {
            transient(text.clone())
        }
        ApiError::TerminatedByOtherGetUpdates => transient(
            "another process is polling updates for this bot token; run one gateway per bot"
                .to_owned(),
        ),
        other => permanent(other.to_string()),
    }
}

/// Telegram's 403 for a user who never opened a chat with the bot, with the fix spelled out.
fn cant_initiate(bot_username: &str) -> ChatError {
    permanent(format!(
        "Telegram refuses the direct message because this user never opened a chat with the bot; \
         the approver must open https://t.me/{bot_username} (or search @{bot_username}) and \
         press Start, then later approvals reach them"
    ))
}

fn permanent(reason: String) -> ChatError {
    ChatError::Permanent {
        channel: CHANNEL.to_owned(),
        reason,
    }
}

fn transient(reason: String) -> ChatError {
    ChatError::Transient {
        channel: CHANNEL.to_owned(),
        reason,
    }
}

/// The error and its causes: reqwest's own text ("error sending request") says nothing about
/// what went wrong; the cause ("Connection refused") does.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

fn scrub(text: &str, token: &Secret) -> String {
    text.replace(token.expose(), "<bot token>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use teloxide::types::Seconds;

    fn check(error: RequestError) -> ChatError {
        classify(&error, &Secret::new("1:SECRET"), "gatebot")
    }

    #[test]
    fn rate_limits_carry_retry_after() {
        assert_eq!(
            check(RequestError::RetryAfter(Seconds::from_seconds(3))),
            ChatError::RateLimited {
                channel: "telegram".into(),
                retry_after: Duration::from_secs(3),
                scope: RateScope::Chat,
            }
        );
    }

    #[test]
    fn explains_the_fix_for_users_who_never_started_the_bot() {
        let wordings = [
            ApiError::CantInitiateConversation,
            ApiError::Unknown("Forbidden: bot can't initiate conversation with a user".into()),
        ];
        for api in wordings {
            let ChatError::Permanent { reason, .. } = check(RequestError::Api(api)) else {
                panic!("not permanent");
            };
            assert!(reason.contains("press Start"), "{reason}");
            assert!(reason.contains("@gatebot"), "{reason}");
        }
    }

    #[test]
    fn server_errors_are_transient_and_unknown_errors_permanent() {
        let server = check(RequestError::Api(ApiError::Unknown("Bad Gateway".into())));
        assert!(server.is_retryable());
        let odd = check(RequestError::Api(ApiError::Unknown(
            "Bad Request: something new".into(),
        )));
        assert!(matches!(odd, ChatError::Permanent { .. }));
        let chat = check(RequestError::Api(ApiError::ChatNotFound));
        assert!(matches!(chat, ChatError::Permanent { .. }));
    }

    #[test]
    fn scrubs_the_token_from_transport_errors() {
        assert_eq!(
            scrub(
                "error sending request for url (http://x/bot1:SECRET/SendMessage)",
                &Secret::new("1:SECRET")
            ),
            "error sending request for url (http://x/bot<bot token>/SendMessage)"
        );
    }
}
