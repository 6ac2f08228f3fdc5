//! The one error type of the chat core: configuration refusals, button-token refusals and the
//! platform failures adapters report, each variant carrying the context a log line needs.

use std::time::Duration;

/// Everything the chat core can refuse or fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    /// A `sessionFilter` regex longer than the cap; refused before compiling it.
    #[error("sessionFilter pattern is {len} characters long (at most {max} allowed)")]
    FilterTooLong {
        /// The pattern's length in characters.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// A `sessionFilter` entry written `re:<pattern>` that does not compile within the size limit.
    #[error("invalid sessionFilter regex {pattern:?}: {reason}")]
    InvalidFilterRegex {
        /// The pattern as written, without `re:`.
        pattern: String,
        /// The regex engine's explanation.
        reason: String,
    },
    /// An empty filter entry, which would otherwise match every session.
    #[error("empty sessionFilter entry")]
    EmptyFilter,
    /// A forwarding target or approver that cannot name a destination.
    #[error("invalid {field} entry {value:?}: {reason}")]
    InvalidTarget {
        /// The config key (`approvals.exec.targets`, `channels.discord.execApprovals.approvers`).
        field: String,
        /// The value as written.
        value: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A setting refused for another of these reasons, with the config key that holds it.
    #[error("{inner}")]
    Setting {
        /// The dotted config key, e.g. `approvals.exec.sessionFilter`.
        key: String,
        /// Why it was refused.
        inner: Box<ChatError>,
    },
    /// A native approval client switched on explicitly with nobody allowed to decide.
    #[error("channels.{channel}.execApprovals is enabled but has no approvers")]
    NoApprovers {
        /// The channel whose client is misconfigured.
        channel: String,
    },
    /// A button token this gateway never issued (or has forgotten).
    #[error("unknown button token")]
    TokenUnknown,
    /// A token pressed in a chat other than the one it was sent to.
    #[error("button token for approval {approval_id} was used outside its chat")]
    TokenWrongChat {
        /// The approval the token belongs to.
        approval_id: String,
    },
    /// A token pressed on a message other than the one it was attached to.
    #[error("button token for approval {approval_id} was used on another message")]
    TokenWrongMessage {
        /// The approval the token belongs to.
        approval_id: String,
    },
    /// A token whose approval has expired.
    #[error("button token for approval {approval_id} has expired")]
    TokenExpired {
        /// The approval the token belongs to.
        approval_id: String,
    },
    /// The platform asked us to slow down; retried after `retry_after`, and nothing in `scope`
    /// is called before then.
    #[error("{channel} rate limited the call ({scope}); retry after {retry_after:?}")]
    RateLimited {
        /// The channel that answered 429.
        channel: String,
        /// How long the platform asked us to wait.
        retry_after: Duration,
        /// What the limit covers, as the platform named it.
        scope: RateScope,
    },
    /// A failure worth retrying (network error, 5xx, timeout).
    #[error("{channel} call failed, may succeed later: {reason}")]
    Transient {
        /// The channel that failed.
        channel: String,
        /// What the platform or transport said.
        reason: String,
    },
    /// A failure that retrying cannot fix (blocked by the user, chat not found, bad request).
    #[error("{channel} refused the call: {reason}")]
    Permanent {
        /// The channel that refused.
        channel: String,
        /// What the platform said, including the fix when the adapter knows it.
        reason: String,
    },
}

/// What a 429 holds back: the platform says which of its limits was hit, and only that one
/// waits, so a flood in one chat does not stall every other chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateScope {
    /// Every call into the chat the refused call addressed (Telegram's flood control).
    Chat,
    /// Calls of the refused kind into that chat (a Discord route bucket).
    Route,
    /// Calls of the refused kind into any chat (a Slack method tier).
    Method,
    /// Every call of the bot (Discord's global limit).
    Bot,
}

impl std::fmt::Display for RateScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RateScope::Chat => "this chat",
            RateScope::Route => "this kind of call in this chat",
            RateScope::Method => "this kind of call everywhere",
            RateScope::Bot => "every call of the bot",
        })
    }
}

impl ChatError {
    /// Whether the delivery helper should try again after this error.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ChatError::RateLimited { .. } | ChatError::Transient { .. }
        )
    }
}
