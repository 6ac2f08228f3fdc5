//! Lookup by full id or unique case-insensitive prefix, and its distinct errors.

use gatehouse_approvals::{ApprovalError, CreateApproval, IdDisclosure, ListFilter, NewApproval};
use gatehouse_policy::ApprovalDecision;
use uuid::Uuid;

use crate::support::{Harness, persistable, request, sqlite, start, start_paused};

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

/// The ids an operator is shown for an ambiguous prefix.
async fn candidates(h: &Harness, prefix: &str) -> Vec<String> {
    let revealed = h
        .manager
        .get(prefix, IdDisclosure::Revealed)
        .await
        .unwrap_err();
    let ApprovalError::AmbiguousPrefix {
        candidates: Some(ids),
        ..
    } = revealed
    else {
        panic!("expected candidates, got {revealed:?}");
    };
    ids.iter().map(Uuid::to_string).collect()
}

async fn assert_undecided(h: &Harness, ids: &[&str]) {
    for id in ids {
        let record = h.manager.get(id, IdDisclosure::Hidden).await.unwrap();
        assert!(record.decision.is_none(), "{id} was left alone");
    }
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

    assert_eq!(candidates(&h, "a1b2").await, vec![A, B]);
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
    assert_undecided(&h, &[A, B]).await;
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
            resolved_by: Some(ref who),
            ..
        }) if who == "alice"
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_found_as_soon_as_it_is_announced() {
    let mut h = start().await;
    // Another connection holds the write lock, so the insert stays queued after the announce.
    let blocker = rusqlite::Connection::open(h.dir.path().join("approvals.sqlite")).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let creator = h.manager.clone();
    let created = tokio::spawn(async move { creator.create(persistable("make x")).await });
    let announced = h.events.recv().await.unwrap();
    let (getter, lister) = (h.manager.clone(), h.manager.clone());
    let key = announced.id.to_string();
    let got = tokio::spawn(async move { getter.get(&key, IdDisclosure::Hidden).await });
    let listed = tokio::spawn(async move { lister.list(ListFilter::default()).await });
    // Both reads start while the insert cannot commit; they must wait for it, not miss it.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    blocker.execute_batch("COMMIT").unwrap();
    let record = got.await.unwrap().unwrap();
    assert_eq!(record.id, announced.id.to_string());
    let ids: Vec<String> = listed
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, vec![announced.id.to_string()]);
    assert_eq!(created.await.unwrap().unwrap().id, announced.id);
}

/// The approval a prefix names is found among those in memory and those stored, together: a
/// prefix unique in memory may still match a stored approval (here one another process wrote),
/// and the person who typed it may mean either.
#[tokio::test]
async fn refuses_a_prefix_matching_one_approval_in_memory_and_another_in_the_store() {
    let h = with_ids(&[A]).await;
    let stored = "a1b2c3d4-ffff-4000-8000-00000000000c";
    sqlite(h.dir.path())
        .insert(&NewApproval {
            id: stored.to_owned(),
            request: request("rm -rf /tmp/important"),
            created_at_ms: 1,
            expires_at_ms: u64::MAX,
        })
        .unwrap();
    let refused = h
        .answer("a1b2c3d4", ApprovalDecision::AllowOnce)
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            ApprovalError::AmbiguousPrefix {
                count: 2,
                candidates: None
            }
        ),
        "{refused:?}"
    );
    assert_eq!(candidates(&h, "A1B2C3D4").await, vec![A, stored]);
    assert_undecided(&h, &[A, stored]).await;
}
