//! The audit log in PostgreSQL: one chain however many stores append at once, each approval
//! transition's record committed exactly when the transition is, and the file log's verifier
//! giving the same verdict on the same records, tampered or not.

use std::collections::BTreeMap;
use std::sync::Arc;

use gatehouse_approvals::{ApprovalStore, Resolution, StoreError, mint_approval_id};
use gatehouse_fakes::postgres::TempDatabase;
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{PgApprovalStore, PgAuditLog, PgOptions};
use gatehouse_store::audit::{
    AuditEvent, AuditKind, AuditLog, AuditOptions, ProblemKind, SharedAuditLog, VerifyReport,
    verify,
};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::replicas::answer;
use crate::support::new_approval;

async fn store(url: &str) -> Arc<PgApprovalStore> {
    Arc::new(
        PgApprovalStore::connect(url, PgOptions::default())
            .await
            .unwrap(),
    )
}

async fn sql(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// Every record's line, in seq order, parsed.
async fn records(client: &tokio_postgres::Client) -> Vec<Value> {
    client
        .query("SELECT line FROM audit_records ORDER BY seq", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| serde_json::from_str(row.get::<_, &str>(0)).unwrap())
        .collect()
}

fn deny(by: &str) -> Resolution {
    Resolution::Decided {
        decision: ApprovalDecision::Deny,
        resolved_by: Some(by.to_owned()),
        reason: None,
    }
}

fn event(i: usize) -> AuditEvent {
    AuditEvent::new(AuditKind::Execution, json!({ "n": i }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_appending_at_once_make_one_chain_with_no_fork_and_no_gap() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let stores = [store(database.url()).await, store(database.url()).await];
    let logs: Vec<Arc<PgAuditLog>> = stores
        .iter()
        .map(|store| Arc::new(store.audit_log().unwrap()))
        .collect();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = Arc::clone(&stores[i % 2]);
        let log = Arc::clone(&logs[(i + 1) % 2]);
        tasks.push(tokio::spawn(async move {
            let id = mint_approval_id(1_000 + i as u64).to_string();
            answer(|done| store.insert(new_approval(&id, 1_000), done))
                .await
                .unwrap();
            // Two records from the other store's sink, in one transaction, between them.
            log.append(vec![(2_000, event(i)), (2_000, event(i + 100))])
                .await
                .unwrap();
            answer(|done| store.resolve(id.clone(), deny("op"), 3_000, done))
                .await
                .unwrap();
            id
        }));
    }
    let mut ids = Vec::new();
    for task in tasks {
        ids.push(task.await.unwrap());
    }

    let report = logs[0].verify().await.unwrap();
    assert!(report.is_valid(), "{report:?}");
    assert_eq!((report.records, report.last_seq), (160, 160));
    assert_eq!(report.anchored_seq, Some(160));
    let client = sql(database.url()).await;
    let lines = records(&client).await;
    let seqs: Vec<u64> = lines.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=160).collect::<Vec<_>>(), "no gap, no repeat");
    // Each approval: one request, then one decision, in that order.
    let mut per_approval: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for record in &lines {
        if let Some(id) = record["approvalId"].as_str() {
            per_approval
                .entry(id)
                .or_default()
                .push(record["payload"]["transition"].as_str().unwrap());
        }
    }
    assert_eq!(per_approval.len(), 40);
    for id in &ids {
        assert_eq!(per_approval[id.as_str()], ["requested", "denied"], "{id}");
    }
    // The sink's pairs stayed together: one transaction, consecutive seqs.
    for (at, record) in lines.iter().enumerate() {
        if let Some(n) = record["payload"]["n"].as_u64().filter(|n| *n < 100) {
            assert_eq!(lines[at + 1]["payload"]["n"], n + 100);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transition_and_its_record_commit_together_or_not_at_all() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (store(database.url()).await, store(database.url()).await);
    let client = sql(database.url()).await;
    let id = mint_approval_id(1_000).to_string();
    answer(|done| a.insert(new_approval(&id, 1_000), done))
        .await
        .unwrap();
    // A refused insert and a losing resolve roll back, and record nothing.
    let refused = answer(|done| b.insert(new_approval(&id, 1_000), done)).await;
    assert!(matches!(refused, Err(StoreError::DuplicateId { .. })));
    answer(|done| a.resolve(id.clone(), deny("first"), 2_000, done))
        .await
        .unwrap();
    let lost = answer(|done| b.resolve(id.clone(), deny("second"), 2_001, done))
        .await
        .unwrap();
    assert!(!lost.applied());
    let lines = records(&client).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["payload"]["resolvedBy"], "first");
    assert_eq!(lines[1]["atMs"], 2_000);

    // A record that cannot be stored takes its transition with it: the approval is not
    // created and its event is not logged.
    client
        .batch_execute("ALTER TABLE audit_records ADD CONSTRAINT at_most_two CHECK (seq <= 2)")
        .await
        .unwrap();
    let other = mint_approval_id(5_000).to_string();
    let failed = answer(|done| a.insert(new_approval(&other, 5_000), done)).await;
    assert!(failed.is_err(), "{failed:?}");
    assert!(
        answer_get(&a, &other).await.is_none(),
        "no transition without its record"
    );
    let events: i64 = client
        .query_one("SELECT count(*) FROM approval_events", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(events, 2);
    client
        .batch_execute("ALTER TABLE audit_records DROP CONSTRAINT at_most_two")
        .await
        .unwrap();
    answer(|done| a.insert(new_approval(&other, 5_000), done))
        .await
        .unwrap();
    let report = a.audit_log().unwrap().verify().await.unwrap();
    assert!(report.is_valid(), "{report:?}");
    assert_eq!(report.last_seq, 3, "the failed attempt left no hole");
}

async fn answer_get(
    store: &PgApprovalStore,
    id: &str,
) -> Option<gatehouse_approvals::ApprovalRecord> {
    store.get(id.to_owned()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consuming_an_allow_once_and_cancelling_at_restart_are_recorded_with_them() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = store(database.url()).await;
    let client = sql(database.url()).await;
    let (once, left) = (
        mint_approval_id(1_000).to_string(),
        mint_approval_id(1_001).to_string(),
    );
    for id in [&once, &left] {
        answer(|done| a.insert(new_approval(id, 1_000), done))
            .await
            .unwrap();
    }
    let allow = Resolution::Decided {
        decision: ApprovalDecision::AllowOnce,
        resolved_by: Some("op".into()),
        reason: None,
    };
    answer(|done| a.resolve(once.clone(), allow, 2_000, done))
        .await
        .unwrap();
    answer(|done| a.consume_allow_once(once.clone(), 2_500, done))
        .await
        .unwrap();
    // A second take consumes nothing and records nothing.
    answer(|done| a.consume_allow_once(once.clone(), 2_600, done))
        .await
        .unwrap();
    answer(|done| a.cancel_all_pending("gateway-restart".into(), 3_000, done))
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = records(&client)
        .await
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["payload"]["transition"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("request", "requested"),
        ("request", "requested"),
        ("decision", "allowed"),
        ("execution", "consumed"),
        ("decision", "cancelled"),
    ];
    assert_eq!(
        kinds,
        expected.map(|(k, t)| (k.to_owned(), t.to_owned())).to_vec()
    );
}

/// How a test tampers with one record, the same way in the file and in the table.
#[derive(Debug, Clone, Copy)]
enum Tamper {
    /// Edits the payload of record `n` (1-based).
    Edit(usize),
    /// Deletes record `n`.
    Delete(usize),
}

/// The same events in a file log and in the database (`log`, emptied first), verified untouched and
/// after `tamper`: both verdicts, in that order.
async fn both_verdicts(
    database: &TempDatabase,
    log: &PgAuditLog,
    events: &[(u64, AuditEvent)],
    tamper: Tamper,
) -> [(VerifyReport, VerifyReport); 2] {
    let client = sql(database.url()).await;
    client
        .batch_execute(&format!(
            "TRUNCATE audit_records; UPDATE audit_head SET last_seq = 0, line_hash = '{}'",
            gatehouse_store::audit::GENESIS_PREV
        ))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    {
        let (file, _) = AuditLog::open(&path, AuditOptions::default()).unwrap();
        for (at_ms, event) in events {
            file.append(*at_ms, event.clone()).unwrap();
        }
    }
    log.append(events.to_vec()).await.unwrap();
    let stored: Vec<String> = client
        .query("SELECT line FROM audit_records ORDER BY seq", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let file_lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(stored, file_lines, "the same records, byte for byte");
    let untouched = (verify(&path).unwrap(), log.verify().await.unwrap());

    let mut lines = file_lines;
    match tamper {
        Tamper::Edit(n) => {
            lines[n - 1] = lines[n - 1].replacen("\"text\":\"", "\"text\":\"x", 1);
            let seq = i64::try_from(n).unwrap();
            client
                .execute(
                    "UPDATE audit_records SET line = replace(line, '\"text\":\"', '\"text\":\"x') \
                     WHERE seq = $1",
                    &[&seq],
                )
                .await
                .unwrap();
        }
        Tamper::Delete(n) => {
            lines.remove(n - 1);
            let seq = i64::try_from(n).unwrap();
            client
                .execute("DELETE FROM audit_records WHERE seq = $1", &[&seq])
                .await
                .unwrap();
        }
    }
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let tampered = (verify(&path).unwrap(), log.verify().await.unwrap());
    [untouched, tampered]
}

fn events_strategy() -> impl Strategy<Value = Vec<(u64, AuditEvent)>> {
    let kind = prop_oneof![
        Just(AuditKind::Request),
        Just(AuditKind::Decision),
        Just(AuditKind::Delivery),
        Just(AuditKind::Execution),
    ];
    let one = (
        0u64..u64::MAX / 2,
        kind,
        proptest::option::of("[a-f0-9-]{1,12}"),
        any::<i64>(),
        "\\PC{0,24}",
    )
        .prop_map(|(at_ms, kind, approval, n, text)| {
            let mut event = AuditEvent::new(kind, json!({"n": n, "text": text}));
            event.approval_id = approval;
            (at_ms, event)
        });
    proptest::collection::vec(one, 2..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The file chain and the database chain of the same records are the same lines and get
    /// the same verdict; any one record edited or deleted is detected in both, the database
    /// naming the record's seq.
    #[test]
    fn file_and_database_chains_of_the_same_records_verify_alike(
        events in events_strategy(),
        pick in any::<prop::sample::Index>(),
        delete in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let database = &*SHARED_DATABASE;
        runtime.block_on(async {
            let store = store(database.url()).await;
            let log = store.audit_log().unwrap();
            let n = pick.index(events.len()) + 1;
            let tamper = if delete { Tamper::Delete(n) } else { Tamper::Edit(n) };
            let [untouched, tampered] = both_verdicts(database, &log, &events, tamper).await;
            let (file, db) = untouched;
            assert!(file.is_valid() && db.is_valid(), "{file:?} {db:?}");
            assert_eq!((file.records, file.last_seq), (db.records, db.last_seq));
            let (file, db) = tampered;
            let (Some(file_problem), Some(db_problem)) = (file.problem, db.problem) else {
                panic!("{tamper:?} not detected");
            };
            assert_eq!(file_problem.kind.code(), db_problem.kind.code(), "{tamper:?}");
            assert_eq!(file.records, db.records);
            let last = events.len();
            match tamper {
                Tamper::Edit(n) => {
                    assert_eq!(db_problem.kind, ProblemKind::ContentEdited);
                    assert_eq!(db_problem.seq, Some(n as u64));
                }
                Tamper::Delete(n) if n == last => assert!(
                    matches!(db_problem.kind, ProblemKind::TailMissing { .. }),
                    "{db_problem:?}"
                ),
                Tamper::Delete(n) => {
                    let expected = ProblemKind::SeqMismatch { expected: n as u64, found: n as u64 + 1 };
                    assert_eq!(db_problem.kind, expected);
                    assert_eq!(db_problem.seq, Some(n as u64 + 1));
                }
            }
        });
    }
}

/// One database for every case of the property: a cluster per case would take minutes.
static SHARED_DATABASE: std::sync::LazyLock<TempDatabase> =
    std::sync::LazyLock::new(|| gatehouse_fakes::postgres::database().unwrap());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_past_the_head_or_a_cut_tail_are_detected_unless_the_head_is_rewritten_too() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let store = store(database.url()).await;
    let log = store.audit_log().unwrap();
    log.append((0..5).map(|i| (1, event(i))).collect())
        .await
        .unwrap();
    let client = sql(database.url()).await;
    let head_at = |seq: i64| {
        format!(
            "UPDATE audit_head SET last_seq = {seq}, line_hash = encode(sha256(convert_to(\
             (SELECT line FROM audit_records WHERE seq = {seq}), 'UTF8')), 'hex')"
        )
    };
    // A record past the head: inserted without moving it.
    client.batch_execute(&head_at(4)).await.unwrap();
    let problem = log.verify().await.unwrap().problem.unwrap();
    assert_eq!(problem.kind, ProblemKind::BeyondHead { anchored_seq: 4 });
    assert_eq!(problem.seq, Some(5));
    client
        .batch_execute("DELETE FROM audit_records WHERE seq >= 4")
        .await
        .unwrap();
    let problem = log.verify().await.unwrap().problem.unwrap();
    assert_eq!(
        problem.kind,
        ProblemKind::TailMissing {
            last_seq: 3,
            anchored_seq: 4
        }
    );
    // Moving the head back to the cut end hides the cut: the limit docs/audit.md names.
    client.batch_execute(&head_at(3)).await.unwrap();
    assert!(log.verify().await.unwrap().is_valid());
}
