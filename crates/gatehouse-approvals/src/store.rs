//! The storage contracts the manager relies on: [`ApprovalStore`] for approvals, and
//! [`AllowlistStore`] for the patterns an allow-always decision persists.
//!
//! They are shaped for any transactional store, embedded or on a server: every state change is
//! a conditional update inside the store (first answer wins, allow-once is taken once), times
//! are passed in, and no call hands back a driver's type. `gatehouse-store` implements both
//! (SQLite; `exec-approvals.json`).

use std::future::Future;
use std::pin::Pin;

use uuid::Uuid;

use crate::grants::StoredGrant;
use crate::record::{
    ApprovalRecord, ConsumeOutcome, DeliveredMessage, ListFilter, NewApproval, Resolution,
    ResolveOutcome,
};

/// Why a store call failed, in the terms the manager acts on; everything else a store reports
/// is carried as it describes itself, without its driver's types.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An approval with this id already exists, in any state.
    #[error("approval {approval_id} already exists")]
    DuplicateId {
        /// The refused id.
        approval_id: String,
    },
    /// Another stored approval has this id's short id. Only a store shared by several
    /// gateways reports it (a unique constraint): each gateway keeps the short ids it knows
    /// unique in memory, but not another gateway's that appeared since it started.
    #[error("the short id of approval {approval_id} is in use")]
    ShortIdInUse {
        /// The refused id.
        approval_id: String,
    },
    /// No approval has this id.
    #[error("approval {approval_id} not found")]
    NotFound {
        /// The id that was looked up.
        approval_id: String,
    },
    /// A store shared by several gateways counted the requester's pending approvals across
    /// all of them and found a cap reached (`gateway.limits.maxPendingPerAgent`, counted per
    /// token and agent, or `maxPendingPerToken`, over every agent the token names).
    #[error(
        "{} already has {limit} pending approvals{}; wait for one to settle",
        match agent { Some(agent) => format!("agent `{agent}`"), None => format!("token `{token}`") },
        if agent.is_some() { "" } else { " across its agents" }
    )]
    PendingLimit {
        /// The requesting token's name.
        token: String,
        /// The agent whose cap was reached; `None` when it was the token's, over all its agents.
        agent: Option<String>,
        /// The cap.
        limit: usize,
    },
    /// The store cannot take the write now (its queue is full: the database is slower than
    /// the writes arriving). Nothing changed; the same call may succeed shortly.
    #[error("{reason}")]
    Busy {
        /// What is full, as the store says it.
        reason: String,
    },
    /// Any other failure (I/O, a corrupt row, a stopped writer, a lost connection); the change
    /// did not happen, or, for a write whose answer was lost, may have.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

/// Where a write's result goes: called exactly once, on whichever thread finished the write,
/// once the change is durable (or has failed).
pub type Completion<T> = Box<dyn FnOnce(Result<T, StoreError>) + Send>;

/// A read in progress. It holds no async thread while the store works.
pub type Reading<T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send>>;

/// A write in progress, for callers that wait for it anyway (the chat outbox); it resolves
/// once the change is durable (or has failed).
pub type Writing<T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send>>;

/// Durable storage for approvals.
///
/// **Writes** are submitted when the call returns (a call may block its thread only while the
/// store's queue is full, its backpressure) and are applied in submission order; each answers
/// through a [`Completion`], so the caller holds no thread while the write commits, and the
/// manager's memory follows the store's answer even when nobody waits for it any more. An
/// embedded store may call `done` from its writer thread, a server-database store from a task
/// of its own. **Reads** are futures.
///
/// Every state change is a compare-and-swap inside the store, so correctness never depends on
/// the caller holding a lock, and several gateways sharing one database still agree on the
/// winner. Times are ms since the Unix epoch, always passed in: a store never reads the wall
/// clock. Ids are stored as given; short ids (`crate::short_id`) are not the store's to keep
/// unique, but [`ApprovalStore::short_ids`] lets the manager load the ones in use.
pub trait ApprovalStore: GrantStore + Send + Sync {
    /// Stores a new `Pending` approval. Fails with [`StoreError::DuplicateId`] if the id exists
    /// in any state, so an id is never reused; a shared store also refuses an id whose short id
    /// another approval holds ([`StoreError::ShortIdInUse`]).
    fn insert(&self, approval: NewApproval, done: Completion<ApprovalRecord>);

    /// Moves a `Pending` approval to the resolution's state; the first resolution wins (see
    /// [`ResolveOutcome`]). Fails with [`StoreError::NotFound`] for an unknown id.
    ///
    /// An applied `allow-always` of a tool approval that carries a grant
    /// ([`crate::ToolRequest::grant`]) stores that grant in the same transaction, under the
    /// approval's id, for the approval's agent: the decision and the grant are durable together
    /// or not at all.
    fn resolve(
        &self,
        id: String,
        resolution: Resolution,
        at_ms: u64,
        done: Completion<ResolveOutcome>,
    );

    /// Takes the single run of an `allow-once` approval; succeeds exactly once per approval.
    /// Fails with [`StoreError::NotFound`] for an unknown id.
    fn consume_allow_once(&self, id: String, at_ms: u64, done: Completion<ConsumeOutcome>);

    /// Remembers a chat message that shows the approval (the locator of a delivered card).
    /// Recording the same message twice is a no-op. Fails with [`StoreError::NotFound`] for an
    /// unknown id.
    fn record_delivery(&self, id: String, message: DeliveredMessage, done: Completion<()>);

    /// Cancels every `Pending` approval with `reason` (on start: `gateway-restart`) and returns
    /// them with their delivered messages, so those messages can be updated.
    fn cancel_all_pending(&self, reason: String, at_ms: u64, done: Completion<Vec<ApprovalRecord>>);

    /// Deletes up to `limit` terminal approvals resolved before `cutoff_ms` (see
    /// [`crate::Retention::cutoff`]), oldest first, with their messages; returns their ids, so
    /// a caller that keeps their short ids can forget them. Pending rows are never pruned. The
    /// limit keeps each write short: fewer than `limit` deleted means none are left.
    fn prune_terminal_before(&self, cutoff_ms: u64, limit: usize, done: Completion<Vec<String>>);

    /// Calls `done` once every write submitted before this call has committed or failed, so a
    /// read made afterwards sees them. An approval may be announced while its insert is still
    /// being committed; this is how a read that follows the announcement is made to find it.
    fn after_submitted_writes(&self, done: Completion<()>);

    /// The approval with exactly this id.
    fn get(&self, id: String) -> Reading<Option<ApprovalRecord>>;

    /// Approvals whose id starts with `prefix`, ignoring ASCII case; at most `limit`, oldest
    /// first. The caller decides what several matches mean (ambiguity).
    fn find_by_prefix(&self, prefix: String, limit: usize) -> Reading<Vec<ApprovalRecord>>;

    /// The short id of every stored approval whose id is a UUID, in no set order and with
    /// repeats, for the manager, which refuses to give a new approval a short id already in use.
    /// Reads every row: for start-up, never for a request.
    fn short_ids(&self) -> Reading<Vec<u32>>;

    /// Approvals matching `filter`, in its order.
    fn list(&self, filter: ListFilter) -> Reading<Vec<ApprovalRecord>>;

    /// For a store other gateways write too: a feed of their writes, which wakes the manager to
    /// follow the [`EventLog`] (adopting approvals they create, settling those they settle); it
    /// adopts the pending approvals it finds at start instead of cancelling them. `None`, the default, for a store this gateway
    /// alone writes. Called once, at start, from within a tokio runtime.
    fn changes(&self) -> Option<ChangeFeed> {
        None
    }

    /// For a store other gateways write too: the event log every transition appends to in its
    /// own transaction, which numbers approval events once for every gateway. `None`, the
    /// default, for a store this gateway alone writes (its manager numbers events itself).
    fn event_log(&self) -> Option<&dyn EventLog> {
        None
    }
}

/// A shared store's log of events: one row per approval's creation and one per settling, each
/// written in the transaction of the transition it records, and one per run event
/// (`exec.running`, …) a gateway logged, all numbered `1, 2, 3, …` without gaps in the order
/// the transactions committed. So a reader that has seen every event up to `n` and reads those
/// after `n` can never skip one that commits later with a lower number, and every gateway (and
/// every client reconnecting to another gateway) agrees on what event `n` is. Approval events
/// leave the log with their approvals, run events once as old, when history is pruned.
pub trait EventLog: Send + Sync {
    /// Names the log (the database), the same for every gateway on it and across restarts: a
    /// `seq` is meaningful wherever this is the same.
    fn instance(&self) -> &str;

    /// The number of the last event appended so far.
    fn head(&self) -> Reading<u64>;

    /// The events numbered above `after`, oldest first, at most `limit`, each approval event
    /// with its approval as it is now, and the head when they were read. Numbers missing
    /// between `after` and the head belong to history pruned since.
    fn events_after(&self, after: u64, limit: usize) -> Reading<LoggedEvents>;

    /// Appends a run's event, dated `at_ms` (for pruning), after every write this gateway
    /// submitted before it, and wakes the other gateways; answers its number once committed.
    fn append_run(&self, note: RunNote, at_ms: u64) -> Writing<u64>;
}

/// A page of an [`EventLog`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvents {
    /// The events, by increasing `seq`.
    pub events: Vec<LoggedEvent>,
    /// The number of the last event appended when the page was read; every event up to it was
    /// committed then, so a page that is not full covers everything up to it.
    pub head: u64,
}

/// One entry of an [`EventLog`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    /// Its number in the log.
    pub seq: u64,
    /// What it records.
    pub entry: LogEntry,
}

/// What one [`LoggedEvent`] records.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// An approval was created, or it settled.
    Approval {
        /// Whether it settled (how is in its record, which a settled approval never changes
        /// again); false for its creation.
        settled: bool,
        /// The approval as it is now (boxed: a run's entry is far smaller).
        record: Box<ApprovalRecord>,
    },
    /// A run's event, as the gateway that ran it logged it.
    Run(RunNote),
}

/// A run event in the log. The manager only carries it, in log order, to its subscribers
/// ([`EventKind::Run`](crate::EventKind::Run)); what the body says is the writer's business.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunNote {
    /// The run it concerns.
    pub run_id: Uuid,
    /// The event, encoded by whoever logged it.
    pub body: String,
}

/// What a shared store tells a gateway of the other gateways' writes. Notices are wake-ups,
/// not the state: the manager reads its [`EventLog`] after the last event it saw, so a late,
/// repeated or lost notice is harmless.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Another gateway wrote to the event log: created or settled this approval, or logged
    /// an event of the run with this id.
    Approval(String),
    /// Notices may have been lost (the feed's connection was re-established): every approval
    /// must be read again.
    Resync,
}

/// The receiving end of [`ApprovalStore::changes`].
pub type ChangeFeed = tokio::sync::mpsc::UnboundedReceiver<Change>;

/// Where allow-always grants of tool calls live, beside the approvals whose decisions made
/// them (an [`ApprovalStore::resolve`] stores each grant with its decision).
pub trait GrantStore: Send + Sync {
    /// Deletes the grant with this id and returns it; `None` when there is none.
    fn revoke_grant(&self, id: String, done: Completion<Option<StoredGrant>>);

    /// Every stored grant, oldest first. Read at start: the manager keeps them in memory.
    fn grants(&self) -> Reading<Vec<StoredGrant>>;
}

/// The `source` written on allowlist entries an allow-always decision adds.
pub const ALLOW_ALWAYS_SOURCE: &str = "allow-always";

/// One allowlist entry an allow-always decision asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedEntry {
    /// The id of the new entry, or of the existing entry for the same rule.
    pub id: String,
    /// False when an entry for the same rule was already there.
    pub added: bool,
}

/// Where allow-always decisions persist their patterns: each agent's allowlist.
///
/// Blocking (a file is read, replaced and synced): the manager calls it off the async threads.
pub trait AllowlistStore: Send + Sync {
    /// Adds `pattern` to `agent_id`'s allowlist with source [`ALLOW_ALWAYS_SOURCE`], unless an
    /// entry for the same rule exists.
    fn add_allow_always(
        &self,
        agent_id: &str,
        pattern: &str,
        now_ms: u64,
    ) -> Result<AddedEntry, StoreError>;
}
