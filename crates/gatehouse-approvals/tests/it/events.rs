//! The event stream: ordered sequence numbers, and slow subscribers dropped, never waited for.

use gatehouse_approvals::{IdDisclosure, ManagerConfig, SubscriptionEnded};
use gatehouse_policy::ApprovalDecision;

use crate::support::{kind_name, persistable, start_with};

#[tokio::test]
async fn sequence_numbers_increase_by_one_across_kinds() {
    let mut h = start_with(ManagerConfig::default()).await;
    let first = h.create("make one").await;
    let second = h.create("make two").await;
    h.manager
        .resolve(
            &first.to_string(),
            ApprovalDecision::Deny,
            "alice",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    h.manager.cancel(second, "requester-gone").await.unwrap();
    let events: Vec<(u64, &str)> = std::iter::from_fn(|| h.events.try_recv().unwrap())
        .map(|event| (event.seq, kind_name(&event)))
        .collect();
    assert_eq!(
        events,
        vec![
            (1, "requested"),
            (2, "requested"),
            (3, "resolved"),
            (4, "cancelled")
        ]
    );
}

#[tokio::test]
async fn a_slow_subscriber_is_dropped_and_never_blocks_the_manager() {
    let config = ManagerConfig {
        event_capacity: 4,
        ..ManagerConfig::default()
    };
    let h = start_with(config).await;
    let mut slow = h.events;
    let mut fast = h.manager.subscribe();
    let mut seen = 0;
    for n in 0..20 {
        // The manager keeps working although `slow` reads nothing.
        h.manager
            .create(persistable(&format!("make {n}")))
            .await
            .unwrap();
        while fast.try_recv().unwrap().is_some() {
            seen += 1;
        }
    }
    assert_eq!(seen, 20, "a subscriber that keeps up sees everything");
    assert_eq!(
        slow.recv().await.unwrap_err(),
        SubscriptionEnded::Lagged { missed: 16 }
    );
    h.manager.create(persistable("make more")).await.unwrap();
    assert!(
        matches!(slow.recv().await, Err(SubscriptionEnded::Lagged { .. })),
        "a dropped subscriber stays dropped"
    );
    assert!(fast.try_recv().unwrap().is_some());
    assert!(
        matches!(slow.try_recv(), Err(SubscriptionEnded::Lagged { .. })),
        "draining a dropped subscriber ends instead of spinning"
    );
}
