//! The one error type of the service: why a use case refused or failed, as data a transport
//! maps to its own codes (the gateway does so in one place, `gatehouse_gateway::Error`).
//!
//! Messages are for people and read the same whatever the transport; a variant never names a
//! transport's method except where the use case records its own name (an elevated refusal is
//! audited with it).

use gatehouse_approvals::{ApprovalError, StoreError};

/// A use case's refusal or failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServiceError {
    /// The input does not fit the use case (an empty argv, a command that does not describe its
    /// argv, an id that is not one); the transport names what it received.
    #[error("{reason}")]
    Invalid {
        /// What was wrong with it.
        reason: String,
    },
    /// An approval key that reached a path taking no keys from people; kept apart from
    /// [`ServiceError::Invalid`] so transports can tell a bad request from bad params.
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// What was wrong with it.
        reason: String,
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
        /// The use case, by the name its audit records carry.
        method: String,
        /// The level the request asked for.
        level: &'static str,
        /// Which gate is closed, naming its config key.
        reason: String,
    },
    /// The service is shutting down and takes no new work.
    #[error("the gateway is shutting down")]
    ShuttingDown,
    /// The service was set up wrongly (chat started twice); raised before it serves.
    #[error("invalid gateway settings: {reason}")]
    InvalidSettings {
        /// What is wrong.
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
    /// A replacement of `exec-approvals.json` was based on a file that changed meanwhile.
    #[error(
        "exec-approvals.json changed since it was read (baseHash {expected}, now {actual}); read it again"
    )]
    Conflict {
        /// The `baseHash` sent.
        expected: String,
        /// The hash of the file now.
        actual: String,
    },
    /// The approvals database cannot take a write now (its queue is full); nothing was
    /// changed, and the same request may succeed shortly.
    #[error("store busy: {reason}")]
    StoreBusy {
        /// What is full, as the store says it.
        reason: String,
    },
    /// The approvals database or file failed; nothing was changed.
    #[error("store error: {reason}")]
    Store {
        /// What failed, without secrets.
        reason: String,
    },
    /// A bug or an unexpected condition inside the service.
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
    /// What the refusal adds after the count: a token's cap is over all its agents.
    pub fn scope(&self) -> &'static str {
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

impl ServiceError {
    /// A store or file failure, as its message reads.
    pub fn store(error: impl std::fmt::Display) -> Self {
        ServiceError::Store {
            reason: error.to_string(),
        }
    }

    pub(crate) fn internal(error: impl std::fmt::Display) -> Self {
        ServiceError::Internal {
            reason: error.to_string(),
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

impl From<ApprovalError> for ServiceError {
    fn from(error: ApprovalError) -> Self {
        match error {
            // The use cases that take keys from people answer these as `Invalid`
            // (`approvals::key_error`); this is the fallback for any other path.
            ApprovalError::InvalidKey { .. } | ApprovalError::InvalidId { .. } => {
                ServiceError::InvalidRequest {
                    reason: error.to_string(),
                }
            }
            ApprovalError::Unknown { .. }
            | ApprovalError::UnknownPrefix
            | ApprovalError::UnknownGrant { .. } => ServiceError::NotFound {
                reason: error.to_string(),
            },
            ApprovalError::AmbiguousPrefix { count, candidates } => ServiceError::AmbiguousPrefix {
                count,
                candidates: candidates.map(|ids| ids.iter().map(ToString::to_string).collect()),
            },
            // A grant's id is the id of the approval that made it.
            ApprovalError::AmbiguousGrant { ids, .. } => ServiceError::AmbiguousPrefix {
                count: ids.len(),
                candidates: Some(ids),
            },
            ApprovalError::Expired { id, reason } => ServiceError::ApprovalExpired {
                id: id.to_string(),
                reason,
            },
            ApprovalError::Cancelled { id, reason } => ServiceError::ApprovalCancelled {
                id: id.to_string(),
                reason,
            },
            ApprovalError::AlreadyResolved {
                id,
                decision,
                resolved_by,
            } => ServiceError::AlreadyResolved {
                id: id.to_string(),
                decision: decision.as_str(),
                resolved_by,
            },
            ApprovalError::IdInUse { .. } | ApprovalError::ShortIdInUse { .. } => {
                ServiceError::IdInUse {
                    reason: error.to_string(),
                }
            }
            ApprovalError::DecisionNotOffered { id, decision } => {
                ServiceError::DecisionNotOffered {
                    id: id.to_string(),
                    decision: decision.as_str(),
                }
            }
            ApprovalError::Store(StoreError::Busy { reason }) => ServiceError::StoreBusy { reason },
            ApprovalError::Store(StoreError::PendingLimit {
                token,
                agent,
                limit,
            }) => ServiceError::PendingLimit {
                holder: agent.map_or(PendingHolder::Token(token), PendingHolder::Agent),
                limit,
            },
            ApprovalError::Store(_)
            | ApprovalError::NoFreeShortId { .. }
            | ApprovalError::Task(_)
            | ApprovalError::Unanswered
            | ApprovalError::CorruptId { .. } => ServiceError::store(error),
            ApprovalError::AlreadyConsumed { .. } | ApprovalError::NotAllowOnce { .. } => {
                ServiceError::internal(error)
            }
        }
    }
}
