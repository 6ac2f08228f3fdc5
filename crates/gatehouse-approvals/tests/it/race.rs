//! Many concurrent resolvers: exactly one winner, one event, and everyone learns the winner.

use std::collections::HashSet;

use gatehouse_approvals::{EventKind, IdDisclosure, ResolveOutcome};
use gatehouse_policy::ApprovalDecision;

use crate::support::{next_event, persistable, start};

const RESOLVERS: usize = 32;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn exactly_one_of_many_concurrent_resolvers_wins() {
    let mut h = start().await;
    let id = h.create("make contested").await;
    next_event(&mut h.events);

    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(RESOLVERS));
    let resolvers: Vec<_> = (0..RESOLVERS)
        .map(|n| {
            let manager = h.manager.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                let decision = if n % 2 == 0 {
                    ApprovalDecision::AllowOnce
                } else {
                    ApprovalDecision::Deny
                };
                barrier.wait().await;
                let key = id.to_string();
                let resolved = manager
                    .resolve(
                        &key,
                        decision,
                        &format!("approver-{n}"),
                        IdDisclosure::Hidden,
                    )
                    .await
                    .unwrap();
                (decision, resolved.outcome)
            })
        })
        .collect();

    let mut applied = 0;
    let mut winners = HashSet::new();
    let mut outcomes = Vec::new();
    for resolver in resolvers {
        let (decision, outcome) = resolver.await.unwrap();
        applied += usize::from(outcome.applied());
        let winner = outcome.winner();
        winners.insert((winner.decision, winner.resolved_by.clone()));
        outcomes.push((decision, outcome));
    }
    assert_eq!(applied, 1, "exactly one resolver applied");
    assert_eq!(winners.len(), 1, "everyone was told the same winner");
    let (winning_decision, _) = winners.into_iter().next().unwrap();
    for (decision, outcome) in outcomes {
        match outcome {
            ResolveOutcome::Applied(_) => assert_eq!(Some(decision), winning_decision),
            ResolveOutcome::Repeated(_) => assert_eq!(Some(decision), winning_decision),
            ResolveOutcome::Rejected { .. } => assert_ne!(Some(decision), winning_decision),
        }
    }

    let event = next_event(&mut h.events);
    assert!(
        matches!(event.kind, EventKind::Resolved { decision, .. } if Some(decision) == winning_decision)
    );
    assert!(h.events.try_recv().is_none(), "one resolution, one event");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_and_resolves_keep_every_approval_consistent() {
    let h = start().await;
    let tasks: Vec<_> = (0..64)
        .map(|n| {
            let manager = h.manager.clone();
            tokio::spawn(async move {
                let id = manager
                    .create(persistable(&format!("make job-{n}")))
                    .await
                    .unwrap()
                    .id;
                let key = id.to_string();
                manager
                    .resolve(&key, ApprovalDecision::Deny, "ops", IdDisclosure::Hidden)
                    .await
                    .unwrap();
                manager.await_decision(id).await.unwrap().decision
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), Some(ApprovalDecision::Deny));
    }
}
