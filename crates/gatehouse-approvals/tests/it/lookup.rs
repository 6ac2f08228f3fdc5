//! Lookup by full id or unique case-insensitive prefix, and its distinct errors.

use gatehouse_approvals::{ApprovalError, CreateApproval, IdDisclosure};
use gatehouse_policy::ApprovalDecision;
use uuid::Uuid;

use crate::support::{Harness, persistable, start, start_paused};

/// Creates approvals with chosen ids so prefixes collide on purpose.
async fn with_ids(ids: &[&str]) -> Harness {
    add_ids(start().await, ids).await
}

async fn add_ids(h: Harness, ids: &[&str]) -> Harness {
    for id in ids {
        h.manager
            .create(CreateApproval {
                id: Some((*id).to_owned()),
                ..persistable("make x")
            })
            .await
            .unwrap();
    }
    h
}

const A: &str = "a1b2c3d4-0000-4000-8000-00000000000a";
const B: &str = "a1b2ffff-0000-4000-8000-00000000000b";

#[tokio::test]
async fn resolves_by_a_unique_prefix_in_any_case() {
    let h = with_ids(&[A, B]).await;
    let record = h.manager.get("A1B2C3", IdDisclosure::Hidden).await.unwrap();
    assert_eq!(record.id, A);
    let resolved = h
        .manager
        .resolve(
            "a1b2f",
            ApprovalDecision::Deny,
            "alice",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    assert_eq!(resolved.outcome.winner().id, B);
}

#[tokio::test]
async fn an_ambiguous_prefix_hides_other_ids_from_unauthorized_callers() {
    let h = with_ids(&[A, B]).await;
    let hidden = h
        .manager
        .resolve(
            "a1b2",
            ApprovalDecision::Deny,
            "mallory",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap_err();
    assert!(matches!(
        hidden,
        ApprovalError::AmbiguousPrefix {
            count: 2,
            candidates: None
        }
    ));
    assert!(
        !hidden.to_string().contains("a1b2c3"),
        "the message leaks no id: {hidden}"
    );

    let revealed = h
        .manager
        .get("a1b2", IdDisclosure::Revealed)
        .await
        .unwrap_err();
    let ApprovalError::AmbiguousPrefix {
        candidates: Some(ids),
        ..
    } = revealed
    else {
        panic!("expected candidates, got {revealed:?}");
    };
    let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
    assert_eq!(ids, vec![A, B]);
}

#[tokio::test]
async fn an_ambiguous_prefix_resolves_nothing() {
    let h = with_ids(&[A, B]).await;
    let _ = h
        .manager
        .resolve(
            "a1b2",
            ApprovalDecision::AllowOnce,
            "alice",
            IdDisclosure::Revealed,
        )
        .await;
    for id in [A, B] {
        let record = h.manager.get(id, IdDisclosure::Hidden).await.unwrap();
        assert!(record.decision.is_none(), "{id} was left alone");
    }
}

#[tokio::test]
async fn unknown_expired_and_resolved_are_distinct_errors() {
    let h = with_ids(&[A, B]).await;
    let unknown = Uuid::new_v4();
    assert!(matches!(
        h.manager
            .resolve(&unknown.to_string(), ApprovalDecision::Deny, "a", IdDisclosure::Hidden)
            .await,
        Err(ApprovalError::Unknown { id }) if id == unknown
    ));
    assert!(matches!(
        h.manager.get("ffff", IdDisclosure::Hidden).await,
        Err(ApprovalError::UnknownPrefix)
    ));
    assert!(matches!(
        h.manager.get("not an id", IdDisclosure::Hidden).await,
        Err(ApprovalError::InvalidKey { .. })
    ));
    h.manager
        .expire_no_route(Uuid::parse_str(A).unwrap())
        .await
        .unwrap();
    assert!(matches!(
        h.manager
            .resolve(A, ApprovalDecision::Deny, "a", IdDisclosure::Hidden)
            .await,
        Err(ApprovalError::Expired { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn finds_settled_approvals_by_prefix_in_the_store_after_eviction() {
    let h = add_ids(start_paused().await, &[A]).await;
    h.manager
        .resolve(A, ApprovalDecision::Deny, "alice", IdDisclosure::Hidden)
        .await
        .unwrap();
    tokio::time::advance(std::time::Duration::from_secs(20)).await;
    tokio::task::yield_now().await;
    assert_eq!(h.manager.in_memory(), 0);
    let record = h
        .manager
        .get("A1B2C3D4", IdDisclosure::Hidden)
        .await
        .unwrap();
    assert_eq!(record.id, A);
    assert!(matches!(
        h.manager
            .resolve(
                "a1b2c3d4",
                ApprovalDecision::AllowOnce,
                "bob",
                IdDisclosure::Hidden
            )
            .await,
        Err(ApprovalError::AlreadyResolved {
            decision: ApprovalDecision::Deny,
            ..
        })
    ));
}
