//! Shared fixtures: a manager on a real SQLite store and exec-approvals.json in a temp dir.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalError, ApprovalEvent, ApprovalManager, Clock, CreateApproval, EventKind,
    EventSubscription, IdDisclosure, ManagerConfig, Resolved, TokioClock,
};
use gatehouse_policy::{ApprovalDecision, Ask, Security};
use gatehouse_store::approvals_db::{ApprovalRequest, SqliteApprovalStore, SqliteOptions};
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

/// Starts a manager on the state in `dir`, as a gateway start would.
pub(crate) async fn open(
    dir: &Path,
    config: ManagerConfig,
) -> (ApprovalManager, EventSubscription) {
    let store =
        SqliteApprovalStore::open(dir.join("approvals.sqlite"), SqliteOptions::default()).unwrap();
    let file = ExecApprovalsStore::new(dir.join("exec-approvals.json"));
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    ApprovalManager::start(Arc::new(store), Arc::new(file), clock, config)
        .await
        .unwrap()
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
    events
        .try_recv()
        .expect("the subscription is alive")
        .expect("an event is queued")
}

/// Every event already queued, as variant names.
pub(crate) fn drain_kinds(events: &mut EventSubscription) -> Vec<&'static str> {
    std::iter::from_fn(|| events.try_recv().unwrap())
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
