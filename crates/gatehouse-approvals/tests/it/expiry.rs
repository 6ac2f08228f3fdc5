//! Timeouts and the grace period, on tokio's paused clock: time is advanced, never slept.

use std::time::Duration;

use gatehouse_approvals::{
    ApprovalError, ApprovalState, EventKind, IdDisclosure, ManagerConfig, ResolveOutcome,
};
use gatehouse_policy::ApprovalDecision;
use tokio::time::advance;

use crate::support::{drain_kinds, next_event, start_paused, start_paused_with, with_timeout};

#[tokio::test(start_paused = true)]
async fn expires_after_the_default_thirty_minutes() {
    let mut h = start_paused().await;
    let id = h.create("make slow").await;
    next_event(&mut h.events);

    advance(Duration::from_secs(29 * 60 + 59)).await;
    let record = h
        .manager
        .get(&id.to_string(), IdDisclosure::Hidden)
        .await
        .unwrap();
    assert_eq!(
        record.state,
        ApprovalState::Pending,
        "not expired a second early"
    );

    let record = h.manager.await_decision(id).await.unwrap();
    assert_eq!(
        (record.state, record.reason.as_deref()),
        (ApprovalState::Expired, Some("timeout"))
    );
    let event = next_event(&mut h.events);
    assert!(matches!(event.kind, EventKind::Expired { ref reason } if reason == "timeout"));
}

#[tokio::test(start_paused = true)]
async fn honours_a_per_request_timeout() {
    let h = start_paused().await;
    let created = h
        .manager
        .create(with_timeout("make quick", Duration::from_millis(1500)))
        .await
        .unwrap();
    assert_eq!(created.expires_at_ms - created.created_at_ms, 1500);
    let record = h.manager.await_decision(created.id).await.unwrap();
    assert_eq!(record.state, ApprovalState::Expired);
    assert!(record.resolved_at_ms.unwrap() >= created.expires_at_ms);
}

#[tokio::test(start_paused = true)]
async fn an_earlier_deadline_preempts_a_later_one() {
    let h = start_paused().await;
    let late = h
        .manager
        .create(with_timeout("make late", Duration::from_secs(3600)))
        .await
        .unwrap();
    let early = h
        .manager
        .create(with_timeout("make early", Duration::from_secs(5)))
        .await
        .unwrap();
    let record = h.manager.await_decision(early.id).await.unwrap();
    assert_eq!(record.state, ApprovalState::Expired);
    let late_record = h
        .manager
        .get(&late.id.to_string(), IdDisclosure::Hidden)
        .await
        .unwrap();
    assert_eq!(late_record.state, ApprovalState::Pending);
}

#[tokio::test(start_paused = true)]
async fn answers_after_expiry_are_refused_as_expired() {
    let h = start_paused().await;
    let id = h
        .manager
        .create(with_timeout("make gone", Duration::from_secs(1)))
        .await
        .unwrap()
        .id;
    h.manager.await_decision(id).await.unwrap();
    let key = id.to_string();
    let in_grace = h.answer(&key, ApprovalDecision::AllowOnce).await;
    assert!(
        matches!(in_grace, Err(ApprovalError::Expired { ref reason, .. }) if reason == "timeout")
    );
    advance(Duration::from_secs(60)).await;
    let after_grace = h.answer(&key, ApprovalDecision::AllowOnce).await;
    assert!(matches!(after_grace, Err(ApprovalError::Expired { .. })));
}

#[tokio::test(start_paused = true)]
async fn a_resolved_approval_answers_with_the_winner_for_the_grace_period() {
    let h = start_paused_with(ManagerConfig::default()).await;
    let id = h.create("make graceful").await;
    let key = id.to_string();
    h.answer(&key, ApprovalDecision::Deny).await.unwrap();

    advance(Duration::from_secs(14)).await;
    let late = h
        .manager
        .resolve(
            &key[..8],
            ApprovalDecision::AllowOnce,
            "bob",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    assert!(matches!(late.outcome, ResolveOutcome::Rejected { .. }));
    assert_eq!(late.outcome.winner().resolved_by.as_deref(), Some("alice"));
    assert_eq!(h.manager.in_memory(), 1);

    advance(Duration::from_secs(2)).await;
    tokio::task::yield_now().await;
    assert_eq!(
        h.manager.in_memory(),
        0,
        "evicted when the grace period ends"
    );
    let after = h
        .manager
        .resolve(
            &key,
            ApprovalDecision::AllowOnce,
            "bob",
            IdDisclosure::Hidden,
        )
        .await;
    assert!(matches!(
        after,
        Err(ApprovalError::AlreadyResolved {
            decision: ApprovalDecision::Deny,
            ..
        })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_decision_just_before_the_deadline_beats_the_timeout() {
    let mut h = start_paused().await;
    let id = h
        .manager
        .create(with_timeout("make close", Duration::from_secs(10)))
        .await
        .unwrap()
        .id;
    advance(Duration::from_millis(9_999)).await;
    h.decide(id, ApprovalDecision::AllowOnce).await;
    advance(Duration::from_secs(60)).await;
    let record = h.manager.await_decision(id).await.unwrap();
    assert_eq!(record.state, ApprovalState::Allowed);
    assert_eq!(
        drain_kinds(&mut h.events),
        vec!["requested", "resolved"],
        "no expiry event after the decision"
    );
}
