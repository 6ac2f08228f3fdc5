//! Several PostgreSQL stores on one database, as several gateways would hold them: the
//! database decides every race, whichever store the answers arrive through.

use std::sync::Arc;

use gatehouse_approvals::{
    ApprovalStore, ConsumeOutcome, Resolution, ResolveOutcome, StoreError, mint_approval_id,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};
use tokio::sync::oneshot;

use crate::support::new_approval;

async fn stores(url: &str, count: usize) -> Vec<Arc<PgApprovalStore>> {
    let connecting = (0..count).map(|_| {
        let url = url.to_owned();
        async move { PgApprovalStore::connect(&url, PgOptions::default()).await }
    });
    all_at_once(connecting)
        .await
        .into_iter()
        .map(|store| Arc::new(store.unwrap()))
        .collect()
}

/// Runs the futures at once (each store connecting and migrating concurrently).
async fn all_at_once<F: std::future::Future + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let tasks: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// A write's answer, awaited.
pub(crate) async fn answer<T: Send + 'static>(
    submit: impl FnOnce(gatehouse_approvals::Completion<T>),
) -> Result<T, StoreError> {
    let (sender, receiver) = oneshot::channel();
    submit(Box::new(move |result| {
        let _ = sender.send(result);
    }));
    receiver.await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_stores_starting_at_once_apply_each_migration_once() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let started = stores(database.url(), 4).await;
    assert_eq!(started.len(), 4);
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let versions: Vec<i64> = client
        .query("SELECT version FROM gatehouse_schema ORDER BY version", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, (1..=versions.len() as i64).collect::<Vec<_>>());
    assert!(!versions.is_empty());
    // A database migrated by a newer build is refused rather than written.
    client
        .execute("INSERT INTO gatehouse_schema (version) VALUES (999)", &[])
        .await
        .unwrap();
    let refused = PgApprovalStore::connect(database.url(), PgOptions::default())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("999"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_resolvers_over_two_stores_get_one_winner_and_one_run() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let replicas = stores(database.url(), 2).await;
    let id = mint_approval_id(1_000).to_string();
    let approval = new_approval(&id, 1_000);
    answer(|done| replicas[0].insert(approval, done))
        .await
        .unwrap();

    let resolvers = (0..32).map(|i| {
        let store = Arc::clone(&replicas[i % 2]);
        let id = id.clone();
        async move {
            let decision = if i % 3 == 0 {
                ApprovalDecision::Deny
            } else {
                ApprovalDecision::AllowOnce
            };
            let resolution = Resolution::Decided {
                decision,
                resolved_by: Some(format!("op{i}")),
                reason: None,
            };
            answer(|done| store.resolve(id, resolution, 2_000 + i as u64, done))
                .await
                .unwrap()
        }
    });
    let outcomes = all_at_once(resolvers).await;
    let winners: Vec<_> = outcomes.iter().filter(|o| o.applied()).collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    let winner = winners[0].winner().clone();
    for outcome in &outcomes {
        // Every loser is told the same winner.
        match outcome {
            ResolveOutcome::Applied(_) => {}
            ResolveOutcome::Repeated(record) | ResolveOutcome::Rejected { winner: record } => {
                assert_eq!(record.resolved_by, winner.resolved_by);
                assert_eq!(record.decision, winner.decision);
            }
        }
    }

    if winner.decision == Some(ApprovalDecision::AllowOnce) {
        let consumers = (0..8).map(|i| {
            let store = Arc::clone(&replicas[i % 2]);
            let id = id.clone();
            async move {
                answer(|done| store.consume_allow_once(id, 3_000, done))
                    .await
                    .unwrap()
            }
        });
        let consumed = all_at_once(consumers).await;
        let runs = consumed
            .iter()
            .filter(|c| matches!(c, ConsumeOutcome::Consumed(_)))
            .count();
        assert_eq!(runs, 1, "{consumed:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_written_through_one_store_is_read_and_refused_through_another() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let replicas = stores(database.url(), 2).await;
    let id = mint_approval_id(5_000).to_string();
    answer(|done| replicas[0].insert(new_approval(&id, 5_000), done))
        .await
        .unwrap();
    let read = replicas[1].get(id.clone()).await.unwrap().unwrap();
    assert_eq!(read.id, id);
    assert_eq!(replicas[1].short_ids().await.unwrap().len(), 1);
    let again = answer(|done| replicas[1].insert(new_approval(&id, 5_001), done)).await;
    assert!(
        matches!(again, Err(StoreError::DuplicateId { .. })),
        "{again:?}"
    );
}
