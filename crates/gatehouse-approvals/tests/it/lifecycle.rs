//! Every state transition of an approval, through the manager and the real store.

use gatehouse_approvals::{
    AllowlistWrite, ApprovalError, ApprovalState, CreateApproval, EventKind, IdDisclosure,
    ListFilter, ResolveOutcome,
};
use gatehouse_policy::{ApprovalDecision, Ask};
use uuid::Uuid;

use crate::support::{drain_kinds, kind_name, next_event, persistable, start};

#[tokio::test]
async fn creates_a_durable_pending_approval_and_announces_it() {
    let mut h = start().await;
    let created = h.manager.create(persistable("make deploy")).await.unwrap();
    // A minted id ends with its creation time, so the store's id index is written in order.
    assert_eq!(created.id.get_version_num(), 8);
    assert!(
        created
            .id
            .to_string()
            .ends_with(&format!("-{:012x}", created.created_at_ms)),
        "{} was created at {}",
        created.id,
        created.created_at_ms
    );
    assert_eq!(
        created.expires_at_ms - created.created_at_ms,
        30 * 60 * 1000
    );

    let record = h
        .manager
        .get(&created.id.to_string(), IdDisclosure::Hidden)
        .await
        .unwrap();
    assert_eq!(record.state, ApprovalState::Pending);
    assert_eq!(record.request.command, "make deploy");

    let event = next_event(&mut h.events);
    assert_eq!(
        (event.seq, event.id, kind_name(&event)),
        (1, created.id, "requested")
    );
    let EventKind::Requested { offered, .. } = event.kind else {
        unreachable!()
    };
    assert_eq!(
        offered.decisions(),
        vec![
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowAlways,
            ApprovalDecision::Deny
        ]
    );
}

#[tokio::test]
async fn pending_to_allowed_by_allow_once() {
    let mut h = start().await;
    let id = h.create("make a").await;
    let resolved = h.decide(id, ApprovalDecision::AllowOnce).await;
    assert!(resolved.outcome.applied());
    let record = h.manager.await_decision(id).await.unwrap();
    assert_eq!(
        (record.state, record.decision, record.resolved_by.as_deref()),
        (
            ApprovalState::Allowed,
            Some(ApprovalDecision::AllowOnce),
            Some("alice")
        )
    );
    next_event(&mut h.events);
    let event = next_event(&mut h.events);
    assert_eq!((event.seq, kind_name(&event)), (2, "resolved"));
}

#[tokio::test]
async fn a_creator_that_waits_is_handed_a_decision_given_before_it_waited() {
    let h = start().await;
    let (created, pending) = h
        .manager
        .create_awaited(persistable("make a"))
        .await
        .unwrap();
    h.decide(created.id, ApprovalDecision::AllowOnce).await;
    // With the row gone, only a record handed over in memory can answer.
    let conn = rusqlite::Connection::open(h.dir.path().join("approvals.sqlite")).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn.execute(
        "DELETE FROM approvals WHERE id = ?1",
        [created.id.to_string()],
    )
    .unwrap();

    let record = pending.decided().await.unwrap();
    assert_eq!(
        (record.state, record.resolved_by.as_deref()),
        (ApprovalState::Allowed, Some("alice"))
    );
    // A waiter that came after the decision reads it back, and finds nothing.
    assert!(matches!(
        h.manager.await_decision(created.id).await,
        Err(ApprovalError::Unknown { .. })
    ));
}

#[tokio::test]
async fn pending_to_denied() {
    let h = start().await;
    let id = h.create("make b").await;
    h.manager
        .resolve(
            &id.to_string(),
            ApprovalDecision::Deny,
            "bob",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    let record = h.manager.await_decision(id).await.unwrap();
    assert_eq!(record.state, ApprovalState::Denied);
    assert!(matches!(
        h.manager.consume_allow_once(id).await,
        Err(ApprovalError::NotAllowOnce {
            state: ApprovalState::Denied,
            ..
        })
    ));
}

#[tokio::test]
async fn pending_to_cancelled_and_answers_after_it_fail() {
    let mut h = start().await;
    let id = h.create("make c").await;
    let outcome = h.manager.cancel(id, "requester-gone").await.unwrap();
    assert!(outcome.applied());
    assert_eq!(
        h.manager.await_decision(id).await.unwrap().state,
        ApprovalState::Cancelled
    );
    let late = h.answer(&id.to_string(), ApprovalDecision::AllowOnce).await;
    assert!(
        matches!(late, Err(ApprovalError::Cancelled { reason, .. }) if reason == "requester-gone")
    );
    next_event(&mut h.events);
    assert_eq!(kind_name(&next_event(&mut h.events)), "cancelled");
    assert!(
        h.events.try_recv().is_none(),
        "a refused answer emits nothing"
    );
}

#[tokio::test]
async fn pending_to_expired_without_an_approval_route() {
    let mut h = start().await;
    let id = h.create("make d").await;
    assert!(h.manager.expire_no_route(id).await.unwrap().applied());
    let record = h.manager.await_decision(id).await.unwrap();
    assert_eq!(
        (record.state, record.reason.as_deref()),
        (ApprovalState::Expired, Some("no-approval-route"))
    );
    next_event(&mut h.events);
    let event = next_event(&mut h.events);
    assert!(
        matches!(event.kind, EventKind::Expired { ref reason } if reason == "no-approval-route")
    );
}

#[tokio::test]
async fn repeating_the_winning_answer_is_an_idempotent_success() {
    let h = start().await;
    let key = h.create("make e").await.to_string();
    let decide = |decision| {
        h.manager
            .resolve(&key, decision, "carol", IdDisclosure::Hidden)
    };
    decide(ApprovalDecision::Deny).await.unwrap();
    let again = decide(ApprovalDecision::Deny).await.unwrap();
    assert!(matches!(again.outcome, ResolveOutcome::Repeated(_)));
    let different = decide(ApprovalDecision::AllowOnce).await.unwrap();
    assert!(!different.outcome.applied());
    assert_eq!(
        different.outcome.winner().decision,
        Some(ApprovalDecision::Deny)
    );
}

#[tokio::test]
async fn allow_always_adds_the_patterns_to_the_agents_allowlist() {
    let h = start().await;
    let key = h.create("make f").await.to_string();
    let resolved = h.answer(&key, ApprovalDecision::AllowAlways).await.unwrap();
    let AllowlistWrite::Added(added) = resolved.allowlist else {
        panic!(
            "expected the patterns to be added, got {:?}",
            resolved.allowlist
        );
    };
    assert_eq!(added.len(), 1);
    assert!(added[0].added);
    let file = std::fs::read_to_string(h.dir.path().join("exec-approvals.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&file).unwrap();
    let entry = &json["agents"]["main"]["allowlist"][0];
    assert_eq!(entry["pattern"], "/usr/bin/make");
    assert_eq!(entry["id"].as_str().map(str::len), Some(36));
}

#[tokio::test]
async fn allow_always_is_not_offered_when_ask_is_always_or_it_cannot_persist() {
    let h = start().await;
    let mut always = persistable("make g");
    always.request.ask = Some(Ask::Always);
    let no_patterns = CreateApproval {
        allow_always_patterns: Vec::new(),
        ..persistable("make h")
    };
    let mut no_agent = persistable("make agentless");
    no_agent.request.agent_id = None;
    for create in [always, no_patterns, no_agent] {
        let created = h.manager.create(create).await.unwrap();
        assert!(!created.offered.allow_always);
        let refused = h
            .manager
            .resolve(
                &created.id.to_string(),
                ApprovalDecision::AllowAlways,
                "alice",
                IdDisclosure::Hidden,
            )
            .await;
        assert!(matches!(
            refused,
            Err(ApprovalError::DecisionNotOffered { .. })
        ));
        let deny = h
            .manager
            .resolve(
                &created.id.to_string(),
                ApprovalDecision::Deny,
                "alice",
                IdDisclosure::Hidden,
            )
            .await;
        assert!(deny.unwrap().outcome.applied(), "deny is always offered");
    }
    assert!(!h.dir.path().join("exec-approvals.json").exists());
}

#[tokio::test]
async fn refuses_an_explicit_id_already_in_use() {
    let mut h = start().await;
    let id = Uuid::new_v4().to_string();
    let explicit = || CreateApproval {
        id: Some(id.clone()),
        ..persistable("make i")
    };
    let created = h.manager.create(explicit()).await.unwrap();
    assert_eq!(created.id.to_string(), id);
    assert_eq!(drain_kinds(&mut h.events), ["requested"]);
    assert!(matches!(
        h.manager.create(explicit()).await,
        Err(ApprovalError::IdInUse { .. })
    ));
    h.manager.cancel(created.id, "test").await.unwrap();
    assert_eq!(
        drain_kinds(&mut h.events),
        ["cancelled"],
        "a chosen id is announced only once stored, so a taken one is never announced"
    );
    assert!(
        matches!(
            h.manager.create(explicit()).await,
            Err(ApprovalError::IdInUse { .. })
        ),
        "ids are never reused, even after they settle"
    );
    assert_eq!(drain_kinds(&mut h.events), Vec::<&str>::new());
    let bad = CreateApproval {
        id: Some("not-a-uuid".to_owned()),
        ..persistable("make j")
    };
    assert!(matches!(
        h.manager.create(bad).await,
        Err(ApprovalError::InvalidId { .. })
    ));
}

#[tokio::test]
async fn lists_pending_approvals_from_the_store() {
    let h = start().await;
    let first = h.create("make k").await;
    let second = h.create("make l").await;
    h.manager.cancel(first, "test").await.unwrap();
    let pending = h
        .manager
        .list(ListFilter {
            state: Some(ApprovalState::Pending),
            ..ListFilter::default()
        })
        .await
        .unwrap();
    let ids: Vec<String> = pending.into_iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![second.to_string()]);
}

#[tokio::test]
async fn the_row_is_durable_when_create_returns() {
    use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
    let h = start().await;
    let id = h.create("make durable").await;
    // A second connection, as another process would open it, already sees the row.
    let other = SqliteApprovalStore::open(
        h.dir.path().join("approvals.sqlite"),
        SqliteOptions::default(),
    )
    .unwrap();
    let row = other.get(&id.to_string()).unwrap().unwrap();
    assert_eq!(row.state, ApprovalState::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_are_woken_by_the_decision() {
    let h = start().await;
    let id = h.create("make wait").await;
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let manager = h.manager.clone();
            tokio::spawn(async move { manager.await_decision(id).await })
        })
        .collect();
    tokio::task::yield_now().await;
    h.decide(id, ApprovalDecision::Deny).await;
    for waiter in waiters {
        let record = waiter.await.unwrap().unwrap();
        assert_eq!(record.decision, Some(ApprovalDecision::Deny));
    }
}

#[tokio::test]
async fn waiting_on_an_unknown_id_fails_at_once() {
    let h = start().await;
    let id = Uuid::new_v4();
    assert!(matches!(
        h.manager.await_decision(id).await,
        Err(ApprovalError::Unknown { .. })
    ));
}

#[tokio::test]
async fn a_failed_allowlist_write_leaves_the_decision_standing() {
    let h = start().await;
    // A directory where the file should be: every write fails.
    std::fs::create_dir(h.dir.path().join("exec-approvals.json")).unwrap();
    let id = h.create("make stubborn").await;
    let resolved = h.decide(id, ApprovalDecision::AllowAlways).await;
    assert!(resolved.outcome.applied());
    assert!(matches!(resolved.allowlist, AllowlistWrite::Failed(_)));
    let record = h.manager.await_decision(id).await.unwrap();
    assert_eq!(record.decision, Some(ApprovalDecision::AllowAlways));
}
