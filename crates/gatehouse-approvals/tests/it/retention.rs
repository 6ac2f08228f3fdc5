//! History past the retention period is pruned while the manager runs, on paused time.

use std::time::Duration;

use gatehouse_approvals::{ApprovalError, IdDisclosure, ManagerConfig};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{ApprovalState, Retention};
use tokio::time::advance;

use crate::support::{start_paused_with, with_timeout};

#[tokio::test(start_paused = true)]
async fn prunes_settled_history_while_running_and_keeps_what_is_pending() {
    let hour = Duration::from_secs(60 * 60);
    let config = ManagerConfig {
        retention: Retention {
            history_ms: 60 * 60 * 1000,
        },
        prune_every: Duration::from_secs(10 * 60),
        ..ManagerConfig::default()
    };
    let h = start_paused_with(config).await;
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
