//! A store other gateways share (it has a change feed): a minted id whose short id another
//! gateway already holds is refused by the store and replaced by a fresh one, and nobody is
//! shown the refused one. The sharing is played by a wrapper around the real SQLite store
//! that refuses the first insert as PostgreSQL's unique constraint would.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gatehouse_approvals::{
    ApprovalManager, ApprovalRecord, ApprovalStore, ChangeFeed, Completion, ConsumeOutcome,
    DeliveredMessage, GrantStore, IdDisclosure, ListFilter, ManagerConfig, NewApproval, Reading,
    Resolution, ResolveOutcome, StoreError, StoredGrant, TokioClock,
};
use gatehouse_store::approvals_db::SqliteApprovalStore;
use gatehouse_store::approvals_file::ExecApprovalsStore;

use crate::support::{drain_kinds, persistable, sqlite};

/// SQLite, posing as a shared store whose first insert meets a short id in use.
struct SharedWithATakenShortId {
    store: SqliteApprovalStore,
    refused_one: AtomicBool,
    /// Kept so the feed stays open; nothing is ever sent on it.
    changes_open:
        std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<gatehouse_approvals::Change>>>,
}

impl ApprovalStore for SharedWithATakenShortId {
    fn insert(&self, approval: NewApproval, done: Completion<ApprovalRecord>) {
        if !self.refused_one.swap(true, Ordering::SeqCst) {
            done(Err(StoreError::ShortIdInUse {
                approval_id: approval.id,
            }));
            return;
        }
        ApprovalStore::insert(&self.store, approval, done);
    }
    fn resolve(&self, id: String, r: Resolution, at_ms: u64, done: Completion<ResolveOutcome>) {
        ApprovalStore::resolve(&self.store, id, r, at_ms, done);
    }
    fn consume_allow_once(&self, id: String, at_ms: u64, done: Completion<ConsumeOutcome>) {
        ApprovalStore::consume_allow_once(&self.store, id, at_ms, done);
    }
    fn record_delivery(&self, id: String, message: DeliveredMessage, done: Completion<()>) {
        ApprovalStore::record_delivery(&self.store, id, message, done);
    }
    fn cancel_all_pending(
        &self,
        reason: String,
        at_ms: u64,
        done: Completion<Vec<ApprovalRecord>>,
    ) {
        ApprovalStore::cancel_all_pending(&self.store, reason, at_ms, done);
    }
    fn prune_terminal_before(&self, cutoff_ms: u64, limit: usize, done: Completion<Vec<String>>) {
        ApprovalStore::prune_terminal_before(&self.store, cutoff_ms, limit, done);
    }
    fn after_submitted_writes(&self, done: Completion<()>) {
        ApprovalStore::after_submitted_writes(&self.store, done);
    }
    fn get(&self, id: String) -> Reading<Option<ApprovalRecord>> {
        ApprovalStore::get(&self.store, id)
    }
    fn find_by_prefix(&self, prefix: String, limit: usize) -> Reading<Vec<ApprovalRecord>> {
        ApprovalStore::find_by_prefix(&self.store, prefix, limit)
    }
    fn short_ids(&self) -> Reading<Vec<u32>> {
        ApprovalStore::short_ids(&self.store)
    }
    fn list(&self, filter: ListFilter) -> Reading<Vec<ApprovalRecord>> {
        ApprovalStore::list(&self.store, filter)
    }
    fn changes(&self) -> Option<ChangeFeed> {
        let (sender, feed) = tokio::sync::mpsc::unbounded_channel();
        *self.changes_open.lock().unwrap() = Some(sender);
        Some(feed)
    }
}

impl GrantStore for SharedWithATakenShortId {
    fn revoke_grant(&self, id: String, done: Completion<Option<StoredGrant>>) {
        GrantStore::revoke_grant(&self.store, id, done);
    }
    fn grants(&self) -> Reading<Vec<StoredGrant>> {
        GrantStore::grants(&self.store)
    }
}

#[tokio::test]
async fn a_minted_id_refused_for_its_short_id_is_replaced_and_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let store = SharedWithATakenShortId {
        store: sqlite(dir.path()),
        refused_one: AtomicBool::new(false),
        changes_open: std::sync::Mutex::new(None),
    };
    let file = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
    let (manager, mut events) = ApprovalManager::start(
        Arc::new(store),
        Arc::new(file),
        Arc::new(TokioClock::new()),
        ManagerConfig::default(),
    )
    .await
    .unwrap();

    let created = manager.create(persistable("make deploy")).await.unwrap();

    assert_eq!(drain_kinds(&mut events), ["requested"]);
    let record = manager
        .get(&created.id.to_string(), IdDisclosure::Hidden)
        .await
        .unwrap();
    assert_eq!(record.id, created.id.to_string());
}
