//! Shared fixtures: a manager on a real SQLite store and exec-approvals.json in a temp dir.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalError, ApprovalEvent, ApprovalManager, ApprovalRecord, ApprovalRequest, ApprovalStore,
    Clock, Completion, ConsumeOutcome, CreateApproval, DeliveredMessage, EventKind,
    EventSubscription, GrantStore, IdDisclosure, ListFilter, ManagerConfig, NewApproval, Reading,
    Resolution, ResolveOutcome, Resolved, StoredGrant, TokioClock,
};
use gatehouse_policy::{ApprovalDecision, Ask, Security};
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
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
/// a write was being committed hours could pass. Here writes run on tokio's blocking pool,
/// which holds paused time still, and reads go straight through (they already run there).
struct PausedTimeStore(Arc<SqliteApprovalStore>);

impl PausedTimeStore {
    /// Runs one of the store's blocking writes on the blocking pool and answers `done`.
    fn write<T: Send + 'static>(
        &self,
        write: impl FnOnce(&SqliteApprovalStore) -> Result<T, gatehouse_store::StoreError>
        + Send
        + 'static,
        done: Completion<T>,
    ) {
        let store = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || done(write(&store).map_err(Into::into)));
    }
}

impl ApprovalStore for PausedTimeStore {
    fn insert(&self, approval: NewApproval, done: Completion<ApprovalRecord>) {
        self.write(move |store| store.insert(&approval), done);
    }

    fn resolve(
        &self,
        id: String,
        resolution: Resolution,
        at_ms: u64,
        done: Completion<ResolveOutcome>,
    ) {
        self.write(move |store| store.resolve(&id, &resolution, at_ms), done);
    }

    fn consume_allow_once(&self, id: String, at_ms: u64, done: Completion<ConsumeOutcome>) {
        self.write(move |store| store.consume_allow_once(&id, at_ms), done);
    }

    fn record_delivery(&self, id: String, message: DeliveredMessage, done: Completion<()>) {
        self.write(move |store| store.record_delivery(&id, &message), done);
    }

    fn cancel_all_pending(
        &self,
        reason: String,
        at_ms: u64,
        done: Completion<Vec<ApprovalRecord>>,
    ) {
        self.write(move |store| store.cancel_all_pending(&reason, at_ms), done);
    }

    fn prune_terminal_before(&self, cutoff_ms: u64, limit: usize, done: Completion<Vec<String>>) {
        self.write(
            move |store| store.prune_terminal_before(cutoff_ms, limit),
            done,
        );
    }

    fn after_submitted_writes(&self, done: Completion<()>) {
        // Writes here run on the blocking pool in no set order, so there is nothing to wait
        // behind; no paused-time test reads an approval before its `create` returns.
        done(Ok(()));
    }

    fn get(&self, id: String) -> Reading<Option<ApprovalRecord>> {
        ApprovalStore::get(self.0.as_ref(), id)
    }

    fn find_by_prefix(&self, prefix: String, limit: usize) -> Reading<Vec<ApprovalRecord>> {
        ApprovalStore::find_by_prefix(self.0.as_ref(), prefix, limit)
    }

    fn short_ids(&self) -> Reading<Vec<u32>> {
        ApprovalStore::short_ids(self.0.as_ref())
    }

    fn list(&self, filter: ListFilter) -> Reading<Vec<ApprovalRecord>> {
        ApprovalStore::list(self.0.as_ref(), filter)
    }
}

impl GrantStore for PausedTimeStore {
    fn revoke_grant(&self, id: String, done: Completion<Option<StoredGrant>>) {
        self.write(move |store| store.revoke_grant(&id), done);
    }

    fn grants(&self) -> Reading<Vec<StoredGrant>> {
        GrantStore::grants(self.0.as_ref())
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
        EventKind::Run { .. } => "run",
    }
}
