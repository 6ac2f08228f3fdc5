//! The Gatehouse approval domain and its manager: the human-in-the-loop half of an exec decision.
//!
//! This crate owns what an approval is ([`ApprovalRequest`], [`ApprovalRecord`],
//! [`ApprovalState`], [`Resolution`], [`ResolveOutcome`], …), the id layout ([`mint_approval_id`],
//! [`short_id`]) and the storage contracts ([`ApprovalStore`], [`AllowlistStore`], the chat
//! [`outbox`]'s [`ChatOutbox`], [`SharedChat`] for gateways sharing a store, and
//! [`DocumentStore`] for per-host state replicas share) that `gatehouse-store` implements for
//! SQLite, PostgreSQL and `exec-approvals.json`. It names no store.
//!
//! A pending approval is created durably (through the [`ApprovalStore`]) before the requester
//! is acknowledged, announced on an event stream, and settled exactly once:
//! by a person (`allow-once`, `allow-always`, `deny`), by its timeout, for lack of an approval
//! route, or by cancellation. The store's compare-and-swap decides every race; the manager's
//! in-memory index only follows the winner.
//!
//! **Invariants.** A settled approval never changes again; the first answer wins. An allow-once
//! run is handed out at most once. Allow-always is offered only when it can be persisted and the
//! effective ask is not `always`; deny is always offered. A short id (an id's first 8 hex digits, what
//! people type) names one approval: a new approval never gets one already in use, and a prefix
//! matching several approvals, in memory or stored, is refused. Ambiguous prefixes never reveal
//! other ids to callers not allowed to see them. The manager never waits for an event subscriber, and a
//! subscriber misses no event.
//! The manager never reads the system clock directly: time comes from a [`Clock`].
//!
//! **Entry point.** [`ApprovalManager::start`]; then `create`, `resolve`, `await_decision` and
//! `consume_allow_once`. [`run_binding`] and [`binding_of`] carry the policy core's approval
//! binding to and from the store. The store is any [`ApprovalStore`]; the example uses
//! `gatehouse-store`'s SQLite one.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use gatehouse_approvals::{
//!     ApprovalManager, ApprovalRequest, CreateApproval, IdDisclosure, ManagerConfig, SystemClock,
//! };
//! use gatehouse_policy::ApprovalDecision;
//! use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
//! use gatehouse_store::approvals_file::ExecApprovalsStore;
//!
//! let store = Arc::new(SqliteApprovalStore::open("approvals.db", SqliteOptions::default())?);
//! let file = Arc::new(ExecApprovalsStore::new("exec-approvals.json"));
//! let (manager, _events) =
//!     ApprovalManager::start(store, file, Arc::new(SystemClock), ManagerConfig::default()).await?;
//! let created = manager
//!     .create(CreateApproval {
//!         id: None,
//!         request: ApprovalRequest { command: "make deploy".into(), ..Default::default() },
//!         timeout: None,
//!         allow_always_patterns: vec!["/usr/bin/make".into()],
//!     })
//!     .await?;
//! let key = created.id.to_string();
//! manager.resolve(&key[..8], ApprovalDecision::AllowOnce, "alice", IdDisclosure::Hidden).await?;
//! let record = manager.await_decision(created.id).await?;
//! manager.consume_allow_once(created.id).await?; // a second call would be a replay
//! # let _ = record; Ok(()) }
//! ```

mod clock;
mod deadlines;
mod documents;
mod error;
mod events;
mod grants;
mod ids;
mod index;
mod manager;
pub mod outbox;
mod presence;
mod record;
mod replicas;
mod run_binding;
mod shared_chat;
mod short_ids;
mod state;
mod store;

pub use clock::{Clock, SystemClock, TokioClock};
pub use documents::{DocumentBytes, DocumentChange, DocumentStore};
pub use error::ApprovalError;
pub use events::{ApprovalEvent, EventKind, EventSubscription, Offered};
pub use grants::StoredGrant;
pub use ids::{SHORT_ID_DIGITS, mint_approval_id, minted_at_ms, short_id};
pub use manager::{
    AllowlistWrite, ApprovalManager, CreateApproval, Created, IdDisclosure, ManagerConfig,
    PendingDecision, REASON_NO_ROUTE, REASON_RESTART, REASON_STORE_FAILED, REASON_TIMEOUT,
    Resolved, SharedSequence,
};
pub use outbox::{
    ChatOutbox, OutboxEntry, OutboxMessage, OutboxRoute, OutboxState, OutboxStep, StepOutcome,
};
pub use presence::RoutePresence;
pub use record::{
    ApprovalRecord, ApprovalRequest, ApprovalState, ConsumeOutcome, DeliveredMessage, ListFilter,
    ListOrder, NewApproval, Resolution, ResolveOutcome, Retention, RunBinding, Severity,
    ToolRequest, TurnSource,
};
pub use run_binding::{binding_of, run_binding};
pub use shared_chat::{HeldLease, SharedChat, StoredButton};
pub use store::{
    ALLOW_ALWAYS_SOURCE, AddedEntry, AllowlistStore, ApprovalStore, Change, ChangeFeed, Completion,
    EventLog, GrantStore, LogEntry, LoggedEvent, LoggedEvents, Reading, RunNote, StoreError,
    Writing,
};
