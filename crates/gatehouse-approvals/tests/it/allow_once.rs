//! Allow-once grants exactly one run, even under concurrent replays.

use gatehouse_approvals::{ApprovalError, ApprovalState};
use gatehouse_policy::ApprovalDecision;

use crate::support::start;

#[tokio::test]
async fn grants_exactly_one_run_and_refuses_the_replay() {
    let h = start().await;
    let id = h.create("make once").await;
    assert!(matches!(
        h.manager.consume_allow_once(id).await,
        Err(ApprovalError::NotAllowOnce {
            state: ApprovalState::Pending,
            ..
        })
    ));
    h.decide(id, ApprovalDecision::AllowOnce).await;
    let consumed = h.manager.consume_allow_once(id).await.unwrap();
    assert!(consumed.consumed_at_ms.is_some());
    assert!(matches!(
        h.manager.consume_allow_once(id).await,
        Err(ApprovalError::AlreadyConsumed { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_replays_get_one_run() {
    let h = start().await;
    let id = h.create("make race").await;
    h.decide(id, ApprovalDecision::AllowOnce).await;
    let attempts: Vec<_> = (0..16)
        .map(|_| {
            let manager = h.manager.clone();
            tokio::spawn(async move { manager.consume_allow_once(id).await })
        })
        .collect();
    let mut runs = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            Ok(_) => runs += 1,
            Err(ApprovalError::AlreadyConsumed { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn allow_always_grants_no_replayable_single_run() {
    let h = start().await;
    let id = h.create("make always").await;
    h.decide(id, ApprovalDecision::AllowAlways).await;
    assert!(matches!(
        h.manager.consume_allow_once(id).await,
        Err(ApprovalError::NotAllowOnce { .. })
    ));
}

#[tokio::test]
async fn consuming_an_unknown_id_is_unknown() {
    let h = start().await;
    let id = uuid::Uuid::new_v4();
    assert!(matches!(
        h.manager.consume_allow_once(id).await,
        Err(ApprovalError::Unknown { id: unknown }) if unknown == id
    ));
}
