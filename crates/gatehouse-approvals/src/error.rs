//! The one error type of the approval manager.

use crate::record::ApprovalState;
use crate::store::StoreError;
use gatehouse_policy::ApprovalDecision;
use uuid::Uuid;

/// Why an approval operation was refused. Unknown, expired, already-resolved and cancelled are
/// distinct so surfaces can tell a person exactly what happened.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// The text is neither an approval id nor a prefix of one.
    #[error("{key:?} is not an approval id or id prefix")]
    InvalidKey {
        /// The text as given.
        key: String,
    },
    /// An explicit id must be a UUID, like the ids the manager mints.
    #[error("{id:?} is not a valid approval id (expected a uuid)")]
    InvalidId {
        /// The refused id.
        id: String,
    },
    /// No approval has this id.
    #[error("unknown approval {id}")]
    Unknown {
        /// The id that was looked up.
        id: Uuid,
    },
    /// No approval id starts with this prefix.
    #[error("no approval matches that prefix")]
    UnknownPrefix,
    /// Several approvals match the prefix. The candidates are listed only to callers allowed
    /// to see every approval; others learn just the count.
    #[error("{count} approvals match that prefix; give more of the id")]
    AmbiguousPrefix {
        /// How many approvals match.
        count: usize,
        /// The matching ids, when the caller may see them.
        candidates: Option<Vec<Uuid>>,
    },
    /// The approval expired before this answer (`timeout` or `no-approval-route`).
    #[error("approval {id} expired ({reason})")]
    Expired {
        /// The approval.
        id: Uuid,
        /// Why it expired.
        reason: String,
    },
    /// The approval was cancelled before this answer.
    #[error("approval {id} was cancelled ({reason})")]
    Cancelled {
        /// The approval.
        id: Uuid,
        /// Why it was cancelled.
        reason: String,
    },
    /// The approval was decided and its grace period is over. Says who won, as an answer in
    /// the grace period does.
    #[error("approval {id} was already resolved ({decision}{})", by_note(.resolved_by))]
    AlreadyResolved {
        /// The approval.
        id: Uuid,
        /// The decision that won.
        decision: ApprovalDecision,
        /// Who gave it, as stored (`None` for rows that do not say).
        resolved_by: Option<String>,
    },
    /// An approval with this id exists already (pending or not); ids are never reused.
    #[error("approval id {id} is already in use")]
    IdInUse {
        /// The refused id.
        id: Uuid,
    },
    /// A chosen id whose short id (its first 8 hex digits, what cards show and people type)
    /// is already another approval's, pending or settled: a person who typed it could be
    /// answering the wrong one. Says nothing of that approval.
    #[error(
        "approval id {id} starts with {}, the short id of an existing approval; choose an id that starts differently",
        short_text(.id)
    )]
    ShortIdInUse {
        /// The refused id.
        id: Uuid,
    },
    /// Every id minted for a new approval had a short id already in use: the database holds so
    /// many approvals (a good fraction of 2^32) that short ids no longer name one approval.
    #[error(
        "no free short id in {attempts} minted ids: the approvals history is too large for short \
         ids to stay unique; shorten gateway.limits.historyDays"
    )]
    NoFreeShortId {
        /// How many ids were minted.
        attempts: usize,
    },
    /// The decision was not offered for this approval (allow-always when it cannot persist).
    #[error("{decision} is not offered for approval {id}")]
    DecisionNotOffered {
        /// The approval.
        id: Uuid,
        /// The refused decision.
        decision: ApprovalDecision,
    },
    /// The single run of this allow-once approval was already taken; this is a replay.
    #[error("approval {id} was already used")]
    AlreadyConsumed {
        /// The approval.
        id: Uuid,
    },
    /// The approval does not grant an allow-once run.
    #[error("approval {id} does not grant a single run (state {state}, decision {decision:?})")]
    NotAllowOnce {
        /// The approval.
        id: Uuid,
        /// Its state.
        state: ApprovalState,
        /// Its decision, if any.
        decision: Option<ApprovalDecision>,
    },
    /// The store failed; the operation did not happen (or, for a state change, did not win).
    #[error("approval store: {0}")]
    Store(#[from] StoreError),
    /// A background task of the manager could not run to completion (the runtime is shutting
    /// down); the operation may or may not have reached the store.
    #[error("approval task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The store dropped a queued write without answering it; whether it applied is unknown.
    #[error("the approval store dropped a write without answering it")]
    Unanswered,
    /// No grant has this id or an id starting with it.
    #[error("no grant matches {key:?}")]
    UnknownGrant {
        /// The id or prefix as given.
        key: String,
    },
    /// Several grants match the prefix.
    #[error("{} grants match {key:?}; give more of the id", .ids.len())]
    AmbiguousGrant {
        /// The prefix as given.
        key: String,
        /// The matching grant ids.
        ids: Vec<String>,
    },
    /// A stored row's id is not a uuid; the row was not written by this manager.
    #[error("stored approval id {id:?} is not a uuid")]
    CorruptId {
        /// The stored id.
        id: String,
    },
}

fn by_note(resolved_by: &Option<String>) -> String {
    resolved_by
        .as_deref()
        .map(|who| format!(" by {who}"))
        .unwrap_or_default()
}

fn short_text(id: &Uuid) -> String {
    format!("{:08x}", crate::ids::short_id(id))
}
