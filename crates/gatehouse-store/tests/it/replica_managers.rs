//! Approval managers on several PostgreSQL stores sharing one database, as replicas run them:
//! a decision given on one replica reaches the requester waiting on another, a replica
//! starting adopts the others' pending approvals rather than cancelling them, and an approval
//! whose replica is gone still expires, once; and all of it carries on after the database
//! itself was killed and started again.

use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalError, ApprovalManager, ApprovalRequest, ApprovalState, CreateApproval, EventKind,
    EventSubscription, IdDisclosure, ManagerConfig, SystemClock,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};
use gatehouse_store::approvals_file::ExecApprovalsStore;
use uuid::Uuid;

/// How long a notice may take to cross from one replica to another on this (loaded) machine.
pub(crate) const CROSSING: Duration = Duration::from_secs(20);

pub(crate) struct Replica {
    pub(crate) manager: ApprovalManager,
    pub(crate) events: EventSubscription,
    _dir: tempfile::TempDir,
}

pub(crate) async fn replica(url: &str) -> Replica {
    let dir = tempfile::tempdir().unwrap();
    let store = PgApprovalStore::connect(url, PgOptions::default())
        .await
        .unwrap();
    let file = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
    let (manager, events) = ApprovalManager::start(
        Arc::new(store),
        Arc::new(file),
        Arc::new(SystemClock),
        ManagerConfig::default(),
    )
    .await
    .unwrap();
    Replica {
        manager,
        events,
        _dir: dir,
    }
}

pub(crate) fn request(timeout: Option<Duration>) -> CreateApproval {
    CreateApproval {
        id: None,
        request: ApprovalRequest {
            command: "make deploy".to_owned(),
            argv: vec!["make".to_owned(), "deploy".to_owned()],
            agent_id: Some("main".to_owned()),
            ..ApprovalRequest::default()
        },
        timeout,
        allow_always_patterns: Vec::new(),
    }
}

/// The next event on `events` that concerns `id`, skipping others.
async fn next_about(events: &mut EventSubscription, id: Uuid) -> EventKind {
    tokio::time::timeout(CROSSING, async {
        loop {
            let event = events.recv().await.unwrap();
            if event.id == id {
                return event.kind;
            }
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_on_one_replica_answers_the_requester_waiting_on_another() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let mut a = replica(database.url()).await;
    let mut b = replica(database.url()).await;

    let (created, decision) = a.manager.create_awaited(request(None)).await.unwrap();
    // B hears of it and announces it to its own operators.
    assert!(matches!(
        next_about(&mut b.events, created.id).await,
        EventKind::Requested { .. }
    ));
    let resolved = b
        .manager
        .resolve(
            &created.id.to_string(),
            ApprovalDecision::AllowOnce,
            "bob",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    assert!(resolved.outcome.applied());

    let record = tokio::time::timeout(CROSSING, decision.decided())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.state, ApprovalState::Allowed);
    assert_eq!(record.resolved_by.as_deref(), Some("bob"));
    // A's operators see the outcome as one event, and the run is A's to take, once.
    assert!(matches!(
        next_about(&mut a.events, created.id).await,
        EventKind::Requested { .. }
    ));
    assert!(matches!(
        next_about(&mut a.events, created.id).await,
        EventKind::Resolved {
            decision: ApprovalDecision::AllowOnce,
            ..
        }
    ));
    a.manager.consume_allow_once(created.id).await.unwrap();
    assert!(b.manager.consume_allow_once(created.id).await.is_err());
    // A later answer on A loses to B's, as it would on one node.
    let late = a
        .manager
        .resolve(
            &created.id.to_string(),
            ApprovalDecision::Deny,
            "alice",
            IdDisclosure::Hidden,
        )
        .await;
    match late {
        Ok(resolved) => assert!(!resolved.outcome.applied()),
        Err(error) => assert!(
            matches!(error, ApprovalError::AlreadyResolved { .. }),
            "{error}"
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_starting_adopts_pending_approvals_and_expires_them_when_their_replica_is_gone() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = replica(database.url()).await;
    let created = a
        .manager
        .create(request(Some(Duration::from_secs(3))))
        .await
        .unwrap();
    drop(a);

    // Started after the approval was created, by a replica that is gone: adopted, not
    // cancelled, and expired on time.
    let mut b = replica(database.url()).await;
    let mut c = replica(database.url()).await;
    let expired_on_b = next_about(&mut b.events, created.id).await;
    let expired_on_c = next_about(&mut c.events, created.id).await;
    for kind in [expired_on_b, expired_on_c] {
        assert!(
            matches!(&kind, EventKind::Expired { reason } if reason == "timeout"),
            "{kind:?}"
        );
    }
    let record = b.manager.await_decision(created.id).await.unwrap();
    assert_eq!(record.state, ApprovalState::Expired);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_carry_on_after_the_database_restarts() {
    let mut cluster = gatehouse_fakes::postgres::TempCluster::start().unwrap();
    let url = cluster.url();
    let a = replica(&url).await;
    let mut b = replica(&url).await;

    cluster.kill().unwrap();
    cluster.start_again().unwrap();

    // The first write may meet a connection the crash broke; the pool then opens a new one.
    let (created, decision) = tokio::time::timeout(CROSSING, async {
        loop {
            match a.manager.create_awaited(request(None)).await {
                Ok(created) => return created,
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    })
    .await
    .unwrap();
    // B's listener reconnected and read what it missed, or heard it: either way it knows.
    assert!(matches!(
        next_about(&mut b.events, created.id).await,
        EventKind::Requested { .. }
    ));
    b.manager
        .resolve(
            &created.id.to_string(),
            ApprovalDecision::Deny,
            "bob",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    let record = tokio::time::timeout(CROSSING, decision.decided())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.state, ApprovalState::Denied);
}
