//! The event stream: ordered sequence numbers, and no subscriber waited for or left behind.

use std::time::Duration;

use gatehouse_approvals::{IdDisclosure, ManagerConfig};
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
    let events: Vec<(u64, &str)> = std::iter::from_fn(|| h.events.try_recv())
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
async fn a_subscriber_that_reads_nothing_never_blocks_the_manager_and_misses_nothing() {
    let h = start_with(ManagerConfig::default()).await;
    let mut slow = h.events;
    let mut fast = h.manager.subscribe();
    let mut seen = 0;
    for n in 0..20 {
        // The manager keeps working although `slow` reads nothing.
        h.manager
            .create(persistable(&format!("make {n}")))
            .await
            .unwrap();
        while fast.try_recv().is_some() {
            seen += 1;
        }
    }
    assert_eq!(seen, 20, "a subscriber that keeps up sees everything");
    let late: Vec<u64> = std::iter::from_fn(|| slow.try_recv())
        .map(|event| event.seq)
        .collect();
    assert_eq!(
        late,
        (1..=20).collect::<Vec<u64>>(),
        "and so does a late one"
    );
}

#[tokio::test]
async fn a_subscription_ends_once_the_manager_is_gone() {
    let h = start_with(ManagerConfig::default()).await;
    let mut events = h.events;
    h.manager.create(persistable("make last")).await.unwrap();
    drop(h.manager);
    assert!(
        events.recv().await.is_some(),
        "queued events are still delivered"
    );
    let ended = tokio::time::timeout(Duration::from_secs(30), events.recv()).await;
    assert!(matches!(ended, Ok(None)), "the subscription ends");
}
