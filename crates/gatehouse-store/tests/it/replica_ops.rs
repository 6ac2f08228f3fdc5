//! Operating PostgreSQL stores shared by replicas: a writer queue that refuses instead of
//! growing while the database does not answer, pending caps counted over every replica, and
//! each replica's approval routes seen by the others while they are fresh.

use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{ApprovalRecord, ApprovalStore, RoutePresence, StoreError};
use gatehouse_fakes::postgres::TempCluster;
use gatehouse_store::approvals_db::{PendingCaps, PgApprovalStore, PgOptions};
use tokio::sync::mpsc;

use crate::support::new_approval;

/// The database's processes, stopped with SIGSTOP (a server that accepts bytes and answers
/// nothing, as a hung or overloaded one does) until this is dropped, which continues them.
struct Paused(Vec<u32>);

impl Paused {
    fn server_of(cluster: &TempCluster) -> Paused {
        let pids = cluster.server_pids();
        assert!(!pids.is_empty());
        signal("STOP", &pids);
        Paused(pids)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal("CONT", &self.0);
    }
}

/// Sends SIGname to `pids` through the shell's own `kill` (no procps needed).
fn signal(name: &str, pids: &[u32]) {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -{name} {}", pids.join(" ")))
        .status()
        .unwrap();
    assert!(status.success());
}

type Answer = (String, Result<ApprovalRecord, StoreError>);

/// Inserts approval `id`; its answer goes to `answers`.
fn insert(store: &PgApprovalStore, id: &str, answers: &mpsc::UnboundedSender<Answer>) {
    let answers = answers.clone();
    let named = id.to_owned();
    store.insert(
        new_approval(id, 1_000),
        Box::new(move |result| {
            let _ = answers.send((named, result));
        }),
    );
}

#[tokio::test]
async fn a_full_write_queue_refuses_at_once_and_what_was_queued_commits_when_the_database_answers()
{
    let cluster = tokio::task::spawn_blocking(TempCluster::start)
        .await
        .unwrap()
        .unwrap();
    let options = PgOptions {
        queue_capacity: 4,
        ..PgOptions::default()
    };
    let store = PgApprovalStore::connect(&cluster.url(), options)
        .await
        .unwrap();
    let (answers, mut answered) = mpsc::unbounded_channel();

    let paused = Paused::server_of(&cluster);
    // The writer takes the first write and waits on the database; four more fill its queue.
    insert(&store, "first", &answers);
    tokio::time::sleep(Duration::from_millis(300)).await;
    for n in 0..4 {
        insert(&store, &format!("queued-{n}"), &answers);
    }
    assert!(answered.try_recv().is_err(), "answered while paused");
    // One more is refused at once, saying so, rather than queued.
    insert(&store, "refused", &answers);
    let (id, refused) = answered.try_recv().expect("the refusal is immediate");
    assert_eq!(id, "refused");
    let error = refused.unwrap_err();
    assert!(matches!(error, StoreError::Busy { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "approvals database (PostgreSQL) is not keeping up: 4 writes are already queued; \
         nothing was changed, try again shortly"
    );

    // Once the database answers again, every queued write commits, in order.
    drop(paused);
    let mut committed = Vec::new();
    for _ in 0..5 {
        let (id, result) = tokio::time::timeout(Duration::from_secs(30), answered.recv())
            .await
            .expect("queued writes commit once the database answers")
            .unwrap();
        result.unwrap();
        committed.push(id);
    }
    assert_eq!(
        committed,
        ["first", "queued-0", "queued-1", "queued-2", "queued-3"]
    );
    assert!(store.get("refused".to_owned()).await.unwrap().is_none());
    insert(&store, "later", &answers);
    let (_, later) = answered.recv().await.unwrap();
    later.unwrap();
}

/// Approval `id` asked for by token `token` for agent `agent`.
fn asked_by(id: &str, token: &str, agent: &str) -> gatehouse_approvals::NewApproval {
    let mut approval = new_approval(id, 1_000);
    approval.request.requested_by = Some(token.to_owned());
    approval.request.agent_id = Some(agent.to_owned());
    approval
}

/// Inserts `approvals` all at once, alternating between `stores`; their answers in order.
async fn all_at_once(
    stores: &[Arc<PgApprovalStore>],
    approvals: impl Iterator<Item = gatehouse_approvals::NewApproval>,
) -> Vec<Result<ApprovalRecord, StoreError>> {
    let tasks: Vec<_> = approvals
        .zip(stores.iter().cycle())
        .map(|(approval, store)| {
            let store = Arc::clone(store);
            tokio::spawn(async move { inserted(&store, approval).await })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

/// An insert's answer, awaited.
async fn inserted(
    store: &PgApprovalStore,
    approval: gatehouse_approvals::NewApproval,
) -> Result<ApprovalRecord, StoreError> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    store.insert(
        approval,
        Box::new(move |result| {
            let _ = sender.send(result);
        }),
    );
    receiver.await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_caps_hold_across_two_stores_inserting_at_once() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let options = PgOptions {
        pending_caps: Some(PendingCaps {
            per_agent: 3,
            per_token: 5,
        }),
        ..PgOptions::default()
    };
    let mut stores = Vec::new();
    for _ in 0..2 {
        let store = PgApprovalStore::connect(database.url(), options).await;
        stores.push(Arc::new(store.unwrap()));
    }
    let (a, b) = (&stores[0], &stores[1]);

    // Sixteen inserts for one agent, spread over both stores at once: three pass.
    let answers = all_at_once(
        &stores,
        (0..16).map(|n| asked_by(&format!("main-{n}"), "agent-token", "main")),
    )
    .await;
    let passed = answers.iter().filter(|answer| answer.is_ok()).count();
    assert_eq!(passed, 3, "{answers:?}");
    for refused in answers.iter().filter_map(|answer| answer.as_ref().err()) {
        assert!(
            matches!(refused, StoreError::PendingLimit { agent: Some(agent), limit: 3, .. } if agent == "main"),
            "{refused:?}"
        );
        assert_eq!(
            refused.to_string(),
            "agent `main` already has 3 pending approvals; wait for one to settle"
        );
    }

    // The token's cap counts over its agents, whichever store they asked through; another
    // token is counted apart.
    let answers = all_at_once(
        &stores,
        (0..8).map(|n| asked_by(&format!("other-{n}"), "agent-token", &format!("agent-{n}"))),
    )
    .await;
    let passed = answers.iter().filter(|answer| answer.is_ok()).count();
    assert_eq!(passed, 2, "{answers:?}");
    let refused = answers.iter().find_map(|answer| answer.as_ref().err());
    assert_eq!(
        refused.map(ToString::to_string).as_deref(),
        Some(
            "token `agent-token` already has 5 pending approvals across its agents; wait for one to settle"
        )
    );
    inserted(b, asked_by("elsewhere", "second-token", "main"))
        .await
        .unwrap();

    // A settled approval frees its place, on every store.
    let first_pending = answers
        .iter()
        .find_map(|answer| answer.as_ref().ok())
        .unwrap();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    a.resolve(
        first_pending.id.clone(),
        gatehouse_approvals::Resolution::Expired {
            reason: "timeout".to_owned(),
        },
        2_000,
        Box::new(move |result| {
            let _ = sender.send(result);
        }),
    );
    receiver.await.unwrap().unwrap();
    inserted(b, asked_by("freed", "agent-token", "agent-9"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_replica_sees_another_replicas_route_while_its_heartbeat_is_fresh() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = PgApprovalStore::connect(database.url(), PgOptions::default())
        .await
        .unwrap();
    let b = PgApprovalStore::connect(database.url(), PgOptions::default())
        .await
        .unwrap();
    let live = Duration::from_secs(60);

    // A's own route is not "elsewhere" for A; it is for B.
    assert!(!a.heartbeat(true, live).await.unwrap());
    assert!(b.heartbeat(false, live).await.unwrap());
    // A lost its operators: B sees no route.
    assert!(!a.heartbeat(false, live).await.unwrap());
    assert!(!b.heartbeat(false, live).await.unwrap());
    // A's route counts only while its record is younger than the reader's `live_for`: a
    // replica that stopped heartbeating (dead, cut off) stops counting.
    assert!(!a.heartbeat(true, live).await.unwrap());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !b.heartbeat(false, Duration::from_millis(100))
            .await
            .unwrap()
    );
    assert!(b.heartbeat(false, live).await.unwrap());
}
