//! The storage contract the approval manager relies on.

use super::record::{
    ApprovalRecord, ConsumeOutcome, DeliveredMessage, ListFilter, NewApproval, Resolution,
    ResolveOutcome,
};
use crate::error::StoreError;

/// Where a queued store call's result goes: called once, on whichever thread finished the call.
pub type Completion<T> = Box<dyn FnOnce(Result<T, StoreError>) + Send>;

/// Durable storage for approvals.
///
/// Synchronous on purpose: the SQLite implementation blocks briefly, and an async manager calls
/// it from `spawn_blocking`; a server-database implementation can do the same. The two writes on
/// every approval's path also come queued (`*_queued`), answering through a [`Completion`], so
/// an async caller holds no thread while the write waits for its commit. Every state change
/// is a compare-and-swap inside the store, so correctness never depends on the caller holding a
/// lock, and two gateways sharing one database still agree on the winner.
///
/// Times are ms since the Unix epoch, always passed in: a store never reads the wall clock.
pub trait ApprovalStore: Send + Sync {
    /// Stores a new `Pending` approval. Fails with [`StoreError::DuplicateId`] if the id exists
    /// in any state, so an id is never reused.
    fn insert(&self, approval: &NewApproval) -> Result<ApprovalRecord, StoreError>;

    /// [`ApprovalStore::insert`], queued: returns at once (blocking only while the store's
    /// queue is full, its backpressure) and calls `done` once the row is durable or has failed,
    /// so an async caller holds no thread while the write waits for its commit.
    fn insert_queued(&self, approval: NewApproval, done: Completion<ApprovalRecord>);

    /// The approval with exactly this id.
    fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Calls `done` once every write queued before this call has committed or failed, so a
    /// read made afterwards sees them. An approval may be announced while its insert is still
    /// queued; this is how a read that follows the announcement is made to find it.
    fn after_queued_writes(&self, done: Completion<()>);

    /// Approvals whose id starts with `prefix`, ignoring ASCII case; at most `limit`, oldest
    /// first. The caller decides what several matches mean (ambiguity).
    fn find_by_prefix(&self, prefix: &str, limit: usize)
    -> Result<Vec<ApprovalRecord>, StoreError>;

    /// The short id ([`super::short_id`]) of every stored approval whose id is a UUID, in no
    /// set order and with repeats, for a caller that keeps them in memory (the approval
    /// manager, which refuses to give a new approval a short id already in use). Reads every
    /// row: for start-up, never for a request.
    fn short_ids(&self) -> Result<Vec<u32>, StoreError>;

    /// Approvals matching `filter`, oldest first.
    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// Moves a `Pending` approval to the resolution's state; the first resolution wins.
    /// Fails with [`StoreError::NotFound`] for an unknown id.
    fn resolve(
        &self,
        id: &str,
        resolution: &Resolution,
        at_ms: u64,
    ) -> Result<ResolveOutcome, StoreError>;

    /// [`ApprovalStore::resolve`], queued like [`ApprovalStore::insert_queued`].
    fn resolve_queued(
        &self,
        id: String,
        resolution: Resolution,
        at_ms: u64,
        done: Completion<ResolveOutcome>,
    );

    /// Takes the single run of an `allow-once` approval; succeeds exactly once per approval.
    /// Fails with [`StoreError::NotFound`] for an unknown id.
    fn consume_allow_once(&self, id: &str, at_ms: u64) -> Result<ConsumeOutcome, StoreError>;

    /// Remembers a chat message that shows the approval. Recording the same message twice is a
    /// no-op. Fails with [`StoreError::NotFound`] for an unknown id.
    fn record_delivery(&self, id: &str, message: &DeliveredMessage) -> Result<(), StoreError>;

    /// Cancels every `Pending` approval with `reason` (on start: `gateway-restart`) and returns
    /// them with their delivered messages, so those messages can be updated.
    fn cancel_all_pending(
        &self,
        reason: &str,
        at_ms: u64,
    ) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// Deletes up to `limit` terminal approvals resolved before `cutoff_ms` (see
    /// [`super::record::Retention::cutoff`]), oldest first, with their messages; returns their
    /// ids, so a caller that keeps their short ids can forget them. Pending rows are never
    /// pruned. The limit keeps each write short, since every other write waits behind it: fewer
    /// than `limit` deleted means none are left.
    fn prune_terminal_before(
        &self,
        cutoff_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError>;
}
