//! Upgrading a PostgreSQL database replicas share: a migration replicas of the previous build
//! cannot keep running across (docs/high-availability.md, "Backups and upgrades") is applied
//! only once every other gateway has disconnected, and refused, changing nothing, while one
//! stays; the others are crossed with replicas of the previous build still running; and what
//! the database held before the upgrade is there after it, decidable.
//!
//! A database at an earlier version is made the way that build left it: migrated to the
//! current version, then the later migrations' tables dropped and their versions forgotten
//! (every migration since the first only adds tables). A replica of the previous build is a
//! connection under the gateways' `application_name`, as its pool holds.

use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{ApprovalStore, Resolution, ResolveOutcome, mint_approval_id};
use gatehouse_fakes::postgres::TempDatabase;
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};

use crate::replicas::answer;
use crate::support::new_approval;

/// How each migration is undone, newest first, to take a database back to an earlier version:
/// its tables dropped, or (6) the log's run rows and columns removed.
const UNDONE_BY: &[(i64, &str)] = &[
    (8, "DROP TABLE chat_requests_seen"),
    (7, "DROP TABLE audit_head, audit_records"),
    (
        6,
        "DELETE FROM approval_events WHERE kind = 'run'; \
         DROP INDEX approval_events_runs_by_age; \
         ALTER TABLE approval_events DROP CONSTRAINT approval_events_subject_check, \
             DROP CONSTRAINT approval_events_kind_check, \
             DROP COLUMN run_id, DROP COLUMN run_body, DROP COLUMN at_ms, \
             ALTER COLUMN approval_id SET NOT NULL, \
             ADD CONSTRAINT approval_events_kind_check \
             CHECK (kind IN ('requested', 'allowed', 'denied', 'expired', 'cancelled'))",
    ),
    (5, "DROP TABLE gatehouse_routes"),
    (4, "DROP TABLE gatehouse_documents"),
    (3, "DROP TABLE chat_buttons, chat_outbox"),
    (2, "DROP TABLE approval_events, event_log"),
];

/// A plain connection to `url` under `application_name`, kept open until dropped.
async fn connection(url: &str, application_name: &str) -> tokio_postgres::Client {
    let url = format!("{url}?application_name={application_name}");
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

fn waiting(upgrade_wait: Duration) -> PgOptions {
    PgOptions {
        upgrade_wait,
        ..PgOptions::default()
    }
}

async fn schema_version(url: &str) -> i64 {
    PgApprovalStore::check(url, PgOptions::default())
        .await
        .unwrap()
        .schema_version
}

/// The version this build migrates to.
async fn current_version() -> i64 {
    let database = gatehouse_fakes::postgres::database().unwrap();
    PgApprovalStore::check(database.url(), PgOptions::default())
        .await
        .unwrap()
        .supported_version
}

/// A database the current build migrated, holding one pending approval, taken back to
/// `version`; the approval's id.
async fn database_at(database: &TempDatabase, version: i64) -> String {
    let store = PgApprovalStore::connect(database.url(), PgOptions::default())
        .await
        .unwrap();
    let id = mint_approval_id(5_000).to_string();
    answer(|done| store.insert(new_approval(&id, 5_000), done))
        .await
        .unwrap();
    drop(store);
    let admin = connection(database.url(), "test_admin").await;
    for (added, undo) in UNDONE_BY.iter().filter(|(added, _)| *added > version) {
        admin
            .batch_execute(&format!(
                "{undo}; DELETE FROM gatehouse_schema WHERE version = {added}"
            ))
            .await
            .unwrap();
    }
    assert_eq!(schema_version(database.url()).await, version);
    id
}

/// Decides `id` through `store`: true when this decision won.
async fn decide(store: &PgApprovalStore, id: &str) -> bool {
    let decided = Resolution::Decided {
        decision: ApprovalDecision::Deny,
        resolved_by: Some("operator".to_owned()),
        reason: None,
    };
    let outcome = answer(|done| store.resolve(id.to_owned(), decided, 6_000, done))
        .await
        .unwrap();
    matches!(outcome, ResolveOutcome::Applied(_))
}

/// With a gateway connected to `database` at `version`: `doctor`'s check names `migration` as
/// the one needing every replica stopped, a start refuses it and leaves the version as it
/// was; the refusal's message.
async fn refused_while_connected(database: &TempDatabase, version: i64, migration: i64) -> String {
    let checked = PgApprovalStore::check(database.url(), PgOptions::default())
        .await
        .unwrap();
    assert_eq!(
        checked.stop_every_replica.map(|(to, _)| to),
        Some(migration)
    );
    let refused = PgApprovalStore::connect(database.url(), waiting(Duration::from_millis(600)))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, StoreError::ReplicasStillConnected { migration: due, .. } if *due == migration),
        "{refused:?}"
    );
    assert_eq!(schema_version(database.url()).await, version);
    refused.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_the_previous_build_cannot_run_across_waits_for_its_replicas_to_stop() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let pending = database_at(&database, 3).await;
    let previous_build = connection(database.url(), "gatehouse").await;
    // Migration 4 moves allowlists into the database: refused while the old replica is there,
    // naming the migration and the connection, and nothing is applied.
    let message = refused_while_connected(&database, 3, 4).await;
    assert!(message.contains("127.0.0.1 connected since"), "{message}");
    assert!(message.contains("Stop every replica"), "{message}");

    // The operator stops it while two upgraded replicas are starting: they wait, then one
    // migrates (the other, waiting for the migration lock, is not taken for an old replica).
    let starting: Vec<_> = (0..2)
        .map(|_| {
            let url = database.url().to_owned();
            tokio::spawn(async move {
                PgApprovalStore::connect(&url, waiting(Duration::from_secs(20))).await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop(previous_build);
    let mut upgraded = Vec::new();
    for store in starting {
        upgraded.push(Arc::new(store.await.unwrap().unwrap()));
    }
    assert_eq!(
        schema_version(database.url()).await,
        current_version().await
    );

    // What the database held is there, and decided once.
    assert!(upgraded[1].get(pending.clone()).await.unwrap().is_some());
    assert!(decide(&upgraded[0], &pending).await);
    assert!(!decide(&upgraded[1], &pending).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_chain_waits_for_the_previous_builds_replicas_to_stop() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let pending = database_at(&database, 6).await;
    let previous_build = connection(database.url(), "gatehouse").await;
    // Their transitions would be recorded in their own files, not in the one chain.
    refused_while_connected(&database, 6, 7).await;
    drop(previous_build);
    let upgraded = PgApprovalStore::connect(database.url(), waiting(Duration::from_secs(20)))
        .await
        .unwrap();
    assert_eq!(
        schema_version(database.url()).await,
        current_version().await
    );
    assert!(decide(&upgraded, &pending).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_with_no_migration_due_does_not_look_for_other_gateways() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let pending = database_at(&database, current_version().await).await;
    let _running = connection(database.url(), "gatehouse").await;
    let checked = PgApprovalStore::check(database.url(), PgOptions::default())
        .await
        .unwrap();
    assert_eq!(checked.stop_every_replica, None);
    // No wait at all: another replica of this build is running, as every start meets.
    let started = PgApprovalStore::connect(database.url(), waiting(Duration::ZERO))
        .await
        .unwrap();
    assert!(decide(&started, &pending).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_of_other_applications_do_not_hold_an_upgrade_back() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    database_at(&database, 1).await;
    let _reporting = connection(database.url(), "grafana").await;
    PgApprovalStore::connect(database.url(), waiting(Duration::ZERO))
        .await
        .unwrap();
    assert_eq!(
        schema_version(database.url()).await,
        current_version().await
    );
}
