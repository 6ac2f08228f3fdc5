//! Shared fixtures: a manager on a real SQLite store and exec-approvals.json in a temp dir.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalError, ApprovalEvent, ApprovalManager, Clock, CreateApproval, EventKind,
    EventSubscription, IdDisclosure, ManagerConfig, Resolved, TokioClock,
};
use gatehouse_policy::{ApprovalDecision, Ask, Security};
use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::{
    ApprovalRecord, ApprovalRequest, ApprovalStore, Completion, ConsumeOutcome, DeliveredMessage,
    ListFilter, NewApproval, Resolution, ResolveOutcome, SqliteApprovalStore, SqliteOptions,
};
use gatehouse_store::approvals_file::ExecApprovalsStore;
use uuid::Uuid;

/// A running manager with its state directory and the first event subscription.
pub(crate) struct Harness {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) manager: ApprovalManager,
    pub(crate) events: EventSubscription,
}

impl Harness {
    /// Creates a persistable approval and returns its id.
    pub(crate) async fn create(&self, command: &str) -> Uuid {
        self.manager.create(persistable(command)).await.unwrap().id
    }

    /// Answers by full id as `alice`, expecting success.
    pub(crate) async fn decide(&self, id: Uuid, decision: ApprovalDecision) -> Resolved {
        self.answer(&id.to_string(), decision).await.unwrap()
    }

    /// Answers by id or prefix as `alice`, as an unprivileged surface would.
    pub(crate) async fn answer(
        &self,
        key: &str,
        decision: ApprovalDecision,
    ) -> Result<Resolved, ApprovalError> {
        self.manager
            .resolve(key, decision, "alice", IdDisclosure::Hidden)
            .await
    }
}

pub(crate) async fn start() -> Harness {
    start_with(ManagerConfig::default()).await
}

pub(crate) async fn start_with(config: ManagerConfig) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let (manager, events) = open(dir.path(), config).await;
    Harness {
        dir,
        manager,
        events,
    }
}

/// [`start`] for tests on paused time (see [`PausedTimeStore`]).
pub(crate) async fn start_paused() -> Harness {
    start_paused_with(ManagerConfig::default()).await
}

/// [`start_with`] for tests on paused time (see [`PausedTimeStore`]).
pub(crate) async fn start_paused_with(config: ManagerConfig) -> Harness {
    start_paused_in(tempfile::tempdir().unwrap(), config).await
}

/// [`start_paused_with`] on the state a test already put in `dir` (see [`sqlite`]).
pub(crate) async fn start_paused_in(dir: tempfile::TempDir, config: ManagerConfig) -> Harness {
    let store = PausedTimeStore(Arc::new(sqlite(dir.path())));
    let (manager, events) = start_manager(dir.path(), Arc::new(store), config).await;
    Harness {
        dir,
        manager,
        events,
    }
}

/// [`start`] with the store's options chosen by the test.
pub(crate) async fn start_with_store(options: SqliteOptions) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteApprovalStore::open(dir.path().join("approvals.sqlite"), options).unwrap();
    let (manager, events) =
        start_manager(dir.path(), Arc::new(store), ManagerConfig::default()).await;
    Harness {
        dir,
        manager,
        events,
    }
}

/// Starts a manager on the state in `dir`, as a gateway start would.
pub(crate) async fn open(
    dir: &Path,
    config: ManagerConfig,
) -> (ApprovalManager, EventSubscription) {
    start_manager(dir, Arc::new(sqlite(dir)), config).await
}

/// The store a harness in `dir` opens.
pub(crate) fn sqlite(dir: &Path) -> SqliteApprovalStore {
    SqliteApprovalStore::open(dir.join("approvals.sqlite"), SqliteOptions::default()).unwrap()
}

async fn start_manager(
    dir: &Path,
    store: Arc<dyn ApprovalStore>,
    config: ManagerConfig,
) -> (ApprovalManager, EventSubscription) {
    let file = ExecApprovalsStore::new(dir.join("exec-approvals.json"));
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    ApprovalManager::start(store, Arc::new(file), clock, config)
        .await
        .unwrap()
}

/// The real SQLite store for tests on paused time. Tokio moves paused time on to the next
/// timer whenever every task is waiting, and it cannot see the store's writer thread, so while
/// a queued write was being committed hours could pass. Here queued writes run on tokio's
/// blocking pool, which holds paused time still, and everything else goes straight through.
struct PausedTimeStore(Arc<SqliteApprovalStore>);

impl ApprovalStore for PausedTimeStore {
    fn insert(&self, approval: &NewApproval) -> Result<ApprovalRecord, StoreError> {
        self.0.insert(approval)
    }

    fn insert_queued(&self, approval: NewApproval, done: Completion<ApprovalRecord>) {
        let store = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || done(store.insert(&approval)));
    }

    fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        self.0.get(id)
    }

    fn after_queued_writes(&self, done: Completion<()>) {
        // Queued writes here run on the blocking pool in no set order, so there is nothing to
        // wait behind; no paused-time test reads an approval before its `create` returns.
        done(Ok(()));
    }

    fn find_by_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.0.find_by_prefix(prefix, limit)
    }

    fn short_ids(&self) -> Result<Vec<u32>, StoreError> {
        self.0.short_ids()
    }

    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.0.list(filter)
    }

    fn resolve(
        &self,
        id: &str,
        resolution: &Resolution,
        at_ms: u64,
    ) -> Result<ResolveOutcome, StoreError> {
        self.0.resolve(id, resolution, at_ms)
    }

    fn resolve_queued(
        &self,
        id: String,
        resolution: Resolution,
        at_ms: u64,
        done: Completion<ResolveOutcome>,
    ) {
        let store = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || done(store.resolve(&id, &resolution, at_ms)));
    }

    fn consume_allow_once(&self, id: &str, at_ms: u64) -> Result<ConsumeOutcome, StoreError> {
        self.0.consume_allow_once(id, at_ms)
    }

    fn record_delivery(&self, id: &str, message: &DeliveredMessage) -> Result<(), StoreError> {
        self.0.record_delivery(id, message)
    }

    fn cancel_all_pending(
        &self,
        reason: &str,
        at_ms: u64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.0.cancel_all_pending(reason, at_ms)
    }

    fn prune_terminal_before(
        &self,
        cutoff_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        self.0.prune_terminal_before(cutoff_ms, limit)
    }
}

pub(crate) fn request(command: &str) -> ApprovalRequest {
    ApprovalRequest {
        command: command.to_owned(),
        argv: command.split(' ').map(str::to_owned).collect(),
        cwd: Some("/srv/app".to_owned()),
        agent_id: Some("main".to_owned()),
        session_key: Some("agent:main:main".to_owned()),
        resolved_path: Some("/usr/bin/make".to_owned()),
        security: Some(Security::Allowlist),
        ask: Some(Ask::OnMiss),
        ..ApprovalRequest::default()
    }
}

/// A request allow-always can persist (`/usr/bin/make`).
pub(crate) fn persistable(command: &str) -> CreateApproval {
    CreateApproval {
        id: None,
        request: request(command),
        timeout: None,
        allow_always_patterns: vec!["/usr/bin/make".to_owned()],
    }
}

pub(crate) fn with_timeout(command: &str, timeout: Duration) -> CreateApproval {
    CreateApproval {
        timeout: Some(timeout),
        ..persistable(command)
    }
}

/// The next event, which must already be queued.
pub(crate) fn next_event(events: &mut EventSubscription) -> ApprovalEvent {
    events.try_recv().expect("an event is queued")
}

/// Every event already queued, as variant names.
pub(crate) fn drain_kinds(events: &mut EventSubscription) -> Vec<&'static str> {
    std::iter::from_fn(|| events.try_recv())
        .map(|event| kind_name(&event))
        .collect()
}

/// The variant name of an event, for compact comparisons.
pub(crate) fn kind_name(event: &ApprovalEvent) -> &'static str {
    match event.kind {
        EventKind::Requested { .. } => "requested",
        EventKind::Resolved { .. } => "resolved",
        EventKind::Expired { .. } => "expired",
        EventKind::Cancelled { .. } => "cancelled",
    }
}
