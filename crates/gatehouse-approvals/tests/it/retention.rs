//! History past the retention period is pruned while the manager runs, on paused time.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalError, ApprovalManager, ApprovalState, ApprovalStore, IdDisclosure, ManagerConfig,
    NewApproval, Resolution, Retention, mint_approval_id,
};
use gatehouse_policy::ApprovalDecision;
use tokio::time::advance;

use crate::support::{request, sqlite, start_paused_in, start_paused_with, with_timeout};

/// A retention of one hour, pruned every ten minutes.
fn hourly() -> ManagerConfig {
    ManagerConfig {
        retention: Retention {
            history_ms: 60 * 60 * 1000,
        },
        prune_every: Duration::from_secs(10 * 60),
        ..ManagerConfig::default()
    }
}

/// Whether the manager still finds the approval.
async fn kept(manager: &ApprovalManager, id: &str) -> bool {
    match manager.get(id, IdDisclosure::Hidden).await {
        Ok(_) => true,
        Err(ApprovalError::Unknown { .. }) => false,
        Err(other) => panic!("get {id}: {other}"),
    }
}

/// Stores `count` approvals denied in 1970, oldest first, in a few batched writes.
fn settled_long_ago(dir: &Path, count: u64) -> Vec<String> {
    let store = sqlite(dir);
    let ids: Vec<String> = (1..=count)
        .map(|n| mint_approval_id(n * 1_000).to_string())
        .collect();
    let (sent, done) = mpsc::channel();
    for (n, id) in (1..).zip(&ids) {
        let approval = NewApproval {
            id: id.clone(),
            request: request("make old"),
            created_at_ms: n * 1_000,
            expires_at_ms: n * 1_000 + 500,
        };
        let sent = sent.clone();
        ApprovalStore::insert(
            &store,
            approval,
            Box::new(move |r| sent.send(r.map(drop)).unwrap()),
        );
    }
    for (n, id) in (1..).zip(&ids) {
        let deny = Resolution::Decided {
            decision: ApprovalDecision::Deny,
            resolved_by: Some("alice".to_owned()),
            reason: None,
        };
        let sent = sent.clone();
        ApprovalStore::resolve(
            &store,
            id.clone(),
            deny,
            n * 1_000 + 1,
            Box::new(move |r| sent.send(r.map(drop)).unwrap()),
        );
    }
    for _ in 0..2 * count {
        done.recv().unwrap().unwrap();
    }
    ids
}

#[tokio::test(start_paused = true)]
async fn prunes_settled_history_while_running_and_keeps_what_is_pending() {
    let hour = Duration::from_secs(60 * 60);
    let h = start_paused_with(hourly()).await;
    let settled = h.create("make old").await;
    h.decide(settled, ApprovalDecision::Deny).await;
    let pending = h
        .manager
        .create(with_timeout("make waiting", 3 * hour))
        .await
        .unwrap()
        .id;
    let get = |id: uuid::Uuid| {
        let manager = h.manager.clone();
        async move { manager.get(&id.to_string(), IdDisclosure::Hidden).await }
    };

    // A pass has run; the settled approval is not an hour old yet.
    advance(Duration::from_secs(55 * 60)).await;
    let kept = get(settled).await.unwrap();
    assert_eq!(kept.state, ApprovalState::Denied);

    // A pass after it turned an hour old deletes it. Passes run on the blocking pool, which
    // holds paused time still, so each sleep here lets a pass under way finish first.
    let mut gone = false;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_secs(60)).await;
        if matches!(get(settled).await, Err(ApprovalError::Unknown { .. })) {
            gone = true;
            break;
        }
    }
    assert!(gone, "the settled approval was not pruned");
    assert_eq!(get(pending).await.unwrap().state, ApprovalState::Pending);
}

#[tokio::test(start_paused = true)]
async fn prunes_a_large_history_beside_the_manager_in_paced_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let ids = settled_long_ago(dir.path(), 250);
    let (oldest, newest) = (&ids[0], &ids[249]);
    let h = start_paused_in(dir, hourly()).await;

    // The manager serves before the pruning ends: the newest needs a third chunk of 100.
    assert!(
        kept(&h.manager, newest).await,
        "start waited for the pruning"
    );
    // Paused time stands still while this task keeps running, so the pruner can finish its
    // first chunk but not sit out the pause after it.
    let mut first_chunk_done = false;
    for _ in 0..5_000 {
        if !kept(&h.manager, oldest).await {
            first_chunk_done = true;
            break;
        }
        settle().await;
    }
    assert!(first_chunk_done, "the first chunk never ran");
    for _ in 0..50 {
        settle().await;
    }
    assert!(kept(&h.manager, newest).await, "chunks ran back to back");

    let mut left = true;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        left = kept(&h.manager, newest).await;
        if !left {
            break;
        }
    }
    assert!(!left, "the pruning did not finish");
}

/// Lets other tasks and the blocking pool run for a real millisecond without moving paused time.
async fn settle() {
    tokio::task::yield_now().await;
    std::thread::sleep(Duration::from_millis(1));
}
