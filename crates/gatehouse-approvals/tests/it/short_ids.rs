//! A short id (the 8 hex digits a card shows) names one approval: an id chosen to share one
//! with another approval, pending or settled, is refused, and pruning frees it again.

use std::time::Duration;

use gatehouse_approvals::{ApprovalError, CreateApproval, IdDisclosure, ManagerConfig, Retention};
use gatehouse_policy::ApprovalDecision;
use uuid::Uuid;

use crate::support::{Harness, drain_kinds, open, persistable, start, start_paused_with};

/// A chosen id that starts with `short` and ends like no other.
fn starting_with(short: &str) -> String {
    let tail = Uuid::new_v4().as_u128() & 0xffff_ffff_ffff;
    format!("{short}-dead-4bad-8bad-{tail:012x}")
}

async fn create_as(h: &Harness, id: &str, command: &str) -> Result<Uuid, ApprovalError> {
    let create = CreateApproval {
        id: Some(id.to_owned()),
        ..persistable(command)
    };
    h.manager.create(create).await.map(|created| created.id)
}

/// What an approver typing the card's short id reaches.
async fn typed(h: &Harness, short: &str) -> Result<String, ApprovalError> {
    h.answer(short, ApprovalDecision::AllowOnce)
        .await
        .map(|resolved| resolved.outcome.winner().id.clone())
}

fn short_of(id: Uuid) -> String {
    id.to_string()[..8].to_owned()
}

#[tokio::test]
async fn refuses_a_chosen_id_that_shares_a_pending_approvals_short_id() {
    let mut h = start().await;
    let victim = h.create("git status").await;
    drain_kinds(&mut h.events);
    let short = short_of(victim);
    let refused = create_as(&h, &starting_with(&short), "rm -rf /tmp/important").await;
    let Err(ApprovalError::ShortIdInUse { id }) = refused else {
        panic!("expected the short id to be refused, got {refused:?}");
    };
    let message = ApprovalError::ShortIdInUse { id }.to_string();
    assert!(!message.contains(&victim.to_string()), "{message}");
    assert_eq!(drain_kinds(&mut h.events), Vec::<&str>::new());
    assert_eq!(typed(&h, &short).await.unwrap(), victim.to_string());
}

/// The attack: an agent's approval is cancelled (its requester went away) and leaves memory
/// after its grace period; the agent then asks again under the same short id, for another
/// command, hoping the approver types the short id they saw first.
#[tokio::test(start_paused = true)]
async fn refuses_a_chosen_id_that_shares_a_settled_approvals_short_id_after_its_grace() {
    let h = start_paused_with(ManagerConfig::default()).await;
    let first = h.create("git status").await;
    h.manager.cancel(first, "requester-gone").await.unwrap();
    tokio::time::advance(Duration::from_secs(20)).await;
    tokio::task::yield_now().await;
    assert_eq!(h.manager.in_memory(), 0);
    let short = short_of(first);
    let again = starting_with(&short);
    assert!(matches!(
        create_as(&h, &again, "rm -rf /tmp/important").await,
        Err(ApprovalError::ShortIdInUse { .. })
    ));
    assert!(matches!(
        typed(&h, &short).await,
        Err(ApprovalError::Cancelled { id, .. }) if id == first
    ));
    // A restarted manager reads the short ids in use from the store.
    let dir = h.dir;
    drop(h.manager);
    let (manager, _events) = open(dir.path(), ManagerConfig::default()).await;
    let restarted = CreateApproval {
        id: Some(again),
        ..persistable("rm -rf /tmp/important")
    };
    assert!(matches!(
        manager.create(restarted).await,
        Err(ApprovalError::ShortIdInUse { .. })
    ));
}

#[tokio::test]
async fn an_id_reused_whole_is_still_id_in_use_while_in_memory() {
    let h = start().await;
    let id = Uuid::new_v4().to_string();
    create_as(&h, &id, "make a").await.unwrap();
    assert!(matches!(
        create_as(&h, &id, "make a").await,
        Err(ApprovalError::IdInUse { .. })
    ));
}

#[tokio::test]
async fn ids_with_the_same_first_seven_digits_are_both_taken() {
    let h = start().await;
    let first = create_as(&h, "a1b2c3d0-0000-4000-8000-000000000001", "make a").await;
    let second = create_as(&h, "a1b2c3d1-0000-4000-8000-000000000002", "make b").await;
    assert!(first.is_ok() && second.is_ok());
    assert!(matches!(
        h.manager.get("a1b2c3d", IdDisclosure::Hidden).await,
        Err(ApprovalError::AmbiguousPrefix { count: 2, .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_pruned_approvals_short_id_is_free_again() {
    let hour = Duration::from_secs(60 * 60);
    let h = start_paused_with(ManagerConfig {
        retention: Retention {
            history_ms: 60 * 60 * 1000,
        },
        prune_every: Duration::from_secs(10 * 60),
        ..ManagerConfig::default()
    })
    .await;
    let old = h.create("make old").await;
    h.decide(old, ApprovalDecision::Deny).await;
    tokio::time::advance(hour).await;
    // Passes run on the blocking pool, which holds paused time still, so each sleep here lets
    // a pass under way finish first.
    let mut pruned = false;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_secs(60)).await;
        if matches!(
            h.manager.get(&old.to_string(), IdDisclosure::Hidden).await,
            Err(ApprovalError::Unknown { .. })
        ) {
            pruned = true;
            break;
        }
    }
    assert!(pruned, "the settled approval was not pruned");
    let reused = create_as(&h, &starting_with(&short_of(old)), "make new").await;
    assert!(reused.is_ok(), "{reused:?}");
}
