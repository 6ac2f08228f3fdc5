//! Every way a request or a connection can fail, each mapped to one stable wire code.
//!
//! Clients branch on [`Error::code`], never on the message, so a code is never renamed or reused;
//! the message is for people and may improve.

use axum::http::StatusCode;
use gatehouse_approvals::ApprovalError;

/// A failure answered to a client, or raised while building the gateway.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A WebSocket request arrived before a successful `connect`.
    #[error("the first request must be `connect {{token, client}}`, got `{method}`")]
    HandshakeRequired {
        /// The method the client sent instead.
        method: String,
    },
    /// `connect` arrived on a connection that is already authenticated.
    #[error("this connection is already connected")]
    AlreadyConnected,
    /// No `connect` arrived within the handshake window.
    #[error("no `connect` request within {timeout_ms} ms")]
    HandshakeTimeout {
        /// The window that elapsed.
        timeout_ms: u64,
    },
    /// The token is missing or matches no configured token.
    #[error("missing or unknown token")]
    Unauthorized,
    /// The token is valid but lacks the scope the method requires.
    #[error("method `{method}` requires scope `{required}`")]
    Forbidden {
        /// The refused method.
        method: String,
        /// The scope it requires.
        required: &'static str,
    },
    /// The token is restricted to other agents than the one the request names.
    #[error("token `{token}` may not act for agent `{agent}`")]
    AgentNotAllowed {
        /// The token's name.
        token: String,
        /// The agent id the request named.
        agent: String,
    },
    /// The session was bound by another token, whose agent host owns its `/elevated` level.
    #[error("session `{session_key}` is bound by another token than `{token}`")]
    SessionNotOwned {
        /// The calling token's name.
        token: String,
        /// The session the call named.
        session_key: String,
    },
    /// The request asked for an elevated level that the elevated gates do not allow; refused
    /// rather than run under a level the caller did not ask for.
    #[error("`{method}` asked for elevated level `{level}`, but {reason}")]
    ElevatedUnavailable {
        /// The refused method.
        method: String,
        /// The level the request asked for.
        level: &'static str,
        /// Which gate is closed, naming its config key.
        reason: String,
    },
    /// No method of this name is registered.
    #[error("unknown method `{method}`")]
    UnknownMethod {
        /// The name the client sent.
        method: String,
    },
    /// The frame or body is not a request this protocol understands.
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// What was wrong with it.
        reason: String,
    },
    /// The request is well formed but its params do not fit the method.
    #[error("invalid params for `{method}`: {reason}")]
    InvalidParams {
        /// The method whose params were refused.
        method: String,
        /// What was wrong with them.
        reason: String,
    },
    /// A WebSocket frame exceeded the configured limit.
    #[error("frame of {size} bytes exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The size received.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// An HTTP request body exceeded the configured limit.
    #[error("request body exceeds the limit of {limit} bytes")]
    BodyTooLarge {
        /// The configured limit.
        limit: usize,
    },
    /// Too many WebSockets are open without having sent `connect`; this one is refused before
    /// it upgrades, and may retry shortly.
    #[error("{limit} WebSocket connections are already waiting to authenticate; retry shortly")]
    HandshakeLimit {
        /// How many may wait at once.
        limit: usize,
    },
    /// The token has used up its request budget for now.
    #[error("rate limit exceeded for token `{token}`; retry in {retry_after_ms} ms")]
    RateLimited {
        /// The name (never the secret) of the limited token.
        token: String,
        /// When one request is available again.
        retry_after_ms: u64,
    },
    /// The connection read its events too slowly and its queue overflowed.
    #[error("event queue of {capacity} frames overflowed; reconnect and resync")]
    SlowConsumer {
        /// The per-connection queue capacity.
        capacity: usize,
    },
    /// The gateway is shutting down and takes no new work.
    #[error("the gateway is shutting down")]
    ShuttingDown,
    /// The gateway settings are unusable; raised before the server starts.
    #[error("invalid gateway settings: {reason}")]
    InvalidSettings {
        /// What is wrong with them.
        reason: String,
    },
    /// A chat approval setting is unusable; `key` names it so the caller can point at it.
    #[error("`{key}`: {message}")]
    ChatSetting {
        /// The dotted config key, e.g. `channels.telegram.execApprovals.approvers[0]`.
        key: String,
        /// Why it was refused.
        message: String,
    },
    /// No approval has this id or prefix, or the caller may not see it.
    #[error("{reason}")]
    NotFound {
        /// Which lookup failed.
        reason: String,
    },
    /// Several approvals match the prefix; ids are listed only for operators.
    #[error("{count} approvals match that prefix; give more of the id{}", candidates_note(.candidates))]
    AmbiguousPrefix {
        /// How many matched.
        count: usize,
        /// The matching ids, for callers allowed to see them.
        candidates: Option<Vec<String>>,
    },
    /// The approval expired before this answer.
    #[error("approval {id} expired ({reason})")]
    ApprovalExpired {
        /// The approval.
        id: String,
        /// `timeout` or `no-approval-route`.
        reason: String,
    },
    /// The approval was cancelled before this answer.
    #[error("approval {id} was cancelled ({reason})")]
    ApprovalCancelled {
        /// The approval.
        id: String,
        /// Why, e.g. `gateway-restart`.
        reason: String,
    },
    /// The approval was decided and its grace period is over; says who decided, as the
    /// answer within the grace period does.
    #[error("approval {id} was already resolved ({decision}{})", by_note(.resolved_by))]
    AlreadyResolved {
        /// The approval.
        id: String,
        /// The winning decision.
        decision: &'static str,
        /// Who gave it, when the record says.
        resolved_by: Option<String>,
    },
    /// An explicit approval id is already taken, or its short id (first 8 hex digits) is
    /// another approval's; the message says which, never whose.
    #[error("{reason}")]
    IdInUse {
        /// Why, naming the refused id.
        reason: String,
    },
    /// The decision is not offered for this approval (allow-always when it cannot persist).
    #[error("{decision} is not offered for approval {id}")]
    DecisionNotOffered {
        /// The approval.
        id: String,
        /// The refused decision.
        decision: &'static str,
    },
    /// The agent, or the token over all its agents, already has as many pending approvals as
    /// allowed.
    #[error(
        "{holder} already has {limit} pending approvals{}; wait for one to settle",
        .holder.scope()
    )]
    PendingLimit {
        /// Whose cap is full.
        holder: PendingHolder,
        /// The cap.
        limit: usize,
    },
    /// `exec.approvals.set` was based on a file that changed meanwhile.
    #[error(
        "exec-approvals.json changed since it was read (baseHash {expected}, now {actual}); read it again"
    )]
    Conflict {
        /// The `baseHash` sent.
        expected: String,
        /// The hash of the file now.
        actual: String,
    },
    /// The approvals database or file failed; nothing was changed.
    #[error("store error: {reason}")]
    Store {
        /// What failed, without secrets.
        reason: String,
    },
    /// A bug or an unexpected condition inside the gateway.
    #[error("internal error: {reason}")]
    Internal {
        /// What failed, without secrets.
        reason: String,
    },
}

/// Whose pending approvals reached their cap: an agent's (per token), or a token's over every
/// agent id it names, since agent ids are the requester's word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingHolder {
    /// `gateway.limits.maxPendingPerAgent`, for this agent id.
    Agent(String),
    /// `gateway.limits.maxPendingPerToken`, for this token name.
    Token(String),
}

impl PendingHolder {
    fn scope(&self) -> &'static str {
        match self {
            Self::Agent(_) => "",
            Self::Token(_) => " across its agents",
        }
    }
}

impl std::fmt::Display for PendingHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Agent(agent) => write!(f, "agent `{agent}`"),
            Self::Token(token) => write!(f, "token `{token}`"),
        }
    }
}

impl Error {
    /// The stable code clients branch on; documented in `docs/protocol.md`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::HandshakeRequired { .. } => "handshake_required",
            Self::AlreadyConnected => "already_connected",
            Self::HandshakeTimeout { .. } => "handshake_timeout",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden { .. } => "forbidden",
            Self::AgentNotAllowed { .. } => "agent_forbidden",
            Self::SessionNotOwned { .. } => "session_forbidden",
            Self::ElevatedUnavailable { .. } => "elevated_unavailable",
            Self::UnknownMethod { .. } => "unknown_method",
            Self::InvalidRequest { .. } => "invalid_request",
            Self::InvalidParams { .. } => "invalid_params",
            Self::FrameTooLarge { .. } => "frame_too_large",
            Self::BodyTooLarge { .. } => "body_too_large",
            Self::HandshakeLimit { .. } => "handshake_limit",
            Self::RateLimited { .. } => "rate_limited",
            Self::SlowConsumer { .. } => "slow_consumer",
            Self::ShuttingDown => "shutting_down",
            Self::InvalidSettings { .. } => "invalid_settings",
            Self::ChatSetting { .. } => "invalid_chat_settings",
            Self::NotFound { .. } => "not_found",
            Self::AmbiguousPrefix { .. } => "ambiguous_prefix",
            Self::ApprovalExpired { .. } => "approval_expired",
            Self::ApprovalCancelled { .. } => "approval_cancelled",
            Self::AlreadyResolved { .. } => "already_resolved",
            Self::IdInUse { .. } => "id_in_use",
            Self::DecisionNotOffered { .. } => "decision_not_offered",
            Self::PendingLimit { .. } => "pending_limit",
            Self::Conflict { .. } => "conflict",
            Self::Store { .. } => "store",
            Self::Internal { .. } => "internal",
        }
    }

    /// The HTTP status `POST /rpc` answers with, so plain HTTP tooling sees the failure too.
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::HandshakeRequired { .. }
            | Self::AlreadyConnected
            | Self::InvalidRequest { .. }
            | Self::InvalidParams { .. } => StatusCode::BAD_REQUEST,
            Self::HandshakeTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. }
            | Self::AgentNotAllowed { .. }
            | Self::SessionNotOwned { .. }
            | Self::ElevatedUnavailable { .. } => StatusCode::FORBIDDEN,
            Self::UnknownMethod { .. } => StatusCode::NOT_FOUND,
            Self::FrameTooLarge { .. } | Self::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::HandshakeLimit { .. } | Self::SlowConsumer { .. } | Self::ShuttingDown => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::NotFound { .. } => StatusCode::NOT_FOUND,
            Self::AmbiguousPrefix { .. }
            | Self::ApprovalExpired { .. }
            | Self::ApprovalCancelled { .. }
            | Self::AlreadyResolved { .. }
            | Self::IdInUse { .. }
            | Self::DecisionNotOffered { .. }
            | Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::PendingLimit { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::InvalidSettings { .. }
            | Self::ChatSetting { .. }
            | Self::Internal { .. }
            | Self::Store { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The WebSocket close code sent when this error ends a connection (RFC 6455 §7.4.1).
    pub fn close_code(&self) -> u16 {
        match self {
            Self::FrameTooLarge { .. } => 1009,
            Self::ShuttingDown => 1001,
            Self::Internal { .. } | Self::InvalidSettings { .. } | Self::ChatSetting { .. } => 1011,
            _ => 1008,
        }
    }
}

fn by_note(resolved_by: &Option<String>) -> String {
    resolved_by
        .as_deref()
        .map(|who| format!(" by {who}"))
        .unwrap_or_default()
}

fn candidates_note(candidates: &Option<Vec<String>>) -> String {
    match candidates {
        Some(ids) => format!(": {}", ids.join(", ")),
        None => String::new(),
    }
}

impl From<ApprovalError> for Error {
    fn from(error: ApprovalError) -> Self {
        match error {
            // The methods that take ids answer these as `invalid_params` under their own name
            // (`methods::approval::manager_error`); this is the fallback for any other path.
            ApprovalError::InvalidKey { .. } | ApprovalError::InvalidId { .. } => {
                Error::InvalidRequest {
                    reason: error.to_string(),
                }
            }
            ApprovalError::Unknown { .. } | ApprovalError::UnknownPrefix => Error::NotFound {
                reason: error.to_string(),
            },
            ApprovalError::AmbiguousPrefix { count, candidates } => Error::AmbiguousPrefix {
                count,
                candidates: candidates.map(|ids| ids.iter().map(ToString::to_string).collect()),
            },
            ApprovalError::Expired { id, reason } => Error::ApprovalExpired {
                id: id.to_string(),
                reason,
            },
            ApprovalError::Cancelled { id, reason } => Error::ApprovalCancelled {
                id: id.to_string(),
                reason,
            },
            ApprovalError::AlreadyResolved {
                id,
                decision,
                resolved_by,
            } => Error::AlreadyResolved {
                id: id.to_string(),
                decision: decision.as_str(),
                resolved_by,
            },
            ApprovalError::IdInUse { .. } | ApprovalError::ShortIdInUse { .. } => Error::IdInUse {
                reason: error.to_string(),
            },
            ApprovalError::DecisionNotOffered { id, decision } => Error::DecisionNotOffered {
                id: id.to_string(),
                decision: decision.as_str(),
            },
            ApprovalError::Store(_)
            | ApprovalError::NoFreeShortId { .. }
            | ApprovalError::Task(_)
            | ApprovalError::Unanswered
            | ApprovalError::CorruptId { .. } => Error::Store {
                reason: error.to_string(),
            },
            ApprovalError::AlreadyConsumed { .. } | ApprovalError::NotAllowOnce { .. } => {
                Error::Internal {
                    reason: error.to_string(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_every_variant_a_distinct_code() {
        let all = [
            Error::HandshakeRequired { method: "x".into() },
            Error::AlreadyConnected,
            Error::HandshakeTimeout { timeout_ms: 1 },
            Error::Unauthorized,
            Error::Forbidden {
                method: "x".into(),
                required: "agent",
            },
            Error::ElevatedUnavailable {
                method: "x".into(),
                level: "full",
                reason: "x".into(),
            },
            Error::UnknownMethod { method: "x".into() },
            Error::InvalidRequest { reason: "x".into() },
            Error::InvalidParams {
                method: "x".into(),
                reason: "x".into(),
            },
            Error::FrameTooLarge { size: 2, limit: 1 },
            Error::BodyTooLarge { limit: 1 },
            Error::HandshakeLimit { limit: 1 },
            Error::RateLimited {
                token: "t".into(),
                retry_after_ms: 1,
            },
            Error::SlowConsumer { capacity: 1 },
            Error::ShuttingDown,
            Error::AgentNotAllowed {
                token: "t".into(),
                agent: "a".into(),
            },
            Error::SessionNotOwned {
                token: "t".into(),
                session_key: "s".into(),
            },
            Error::InvalidSettings { reason: "x".into() },
            Error::ChatSetting {
                key: "k".into(),
                message: "x".into(),
            },
            Error::NotFound { reason: "x".into() },
            Error::AmbiguousPrefix {
                count: 2,
                candidates: None,
            },
            Error::ApprovalExpired {
                id: "x".into(),
                reason: "x".into(),
            },
            Error::ApprovalCancelled {
                id: "x".into(),
                reason: "x".into(),
            },
            Error::AlreadyResolved {
                id: "x".into(),
                decision: "deny",
                resolved_by: None,
            },
            Error::IdInUse { reason: "x".into() },
            Error::DecisionNotOffered {
                id: "x".into(),
                decision: "allow-always",
            },
            Error::PendingLimit {
                holder: PendingHolder::Agent("a".into()),
                limit: 1,
            },
            Error::Conflict {
                expected: "a".into(),
                actual: "b".into(),
            },
            Error::Store { reason: "x".into() },
            Error::Internal { reason: "x".into() },
        ];
        let mut codes: Vec<_> = all.iter().map(Error::code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }

    #[test]
    fn closes_oversized_frames_with_message_too_big() {
        assert_eq!(
            Error::FrameTooLarge { size: 2, limit: 1 }.close_code(),
            1009
        );
        assert_eq!(Error::ShuttingDown.close_code(), 1001);
        assert_eq!(Error::Unauthorized.close_code(), 1008);
    }
}
