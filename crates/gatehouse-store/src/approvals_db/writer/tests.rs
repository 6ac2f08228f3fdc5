//! Batches built by hand, so which operations share a transaction is certain rather than timed.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use gatehouse_approvals::{ApprovalRequest, NewApproval, Resolution, ResolveOutcome};
use gatehouse_policy::ApprovalDecision;
use pretty_assertions::assert_eq;
use rusqlite::Connection;

use super::{BatchLimits, BatchWriter, Completion, Job, commit_batch, queued};
use crate::approvals_db::checkpoint::LogRestart;
use crate::approvals_db::{rows, schema, write_ops};
use crate::error::StoreError;

fn test_path() -> Arc<Path> {
    Arc::from(Path::new("approvals.sqlite"))
}

/// A running writer on `conn` with small batches and queue.
fn small_writer(conn: Arc<Mutex<Connection>>) -> BatchWriter {
    let limits = BatchLimits {
        max_batch: 8,
        queue_capacity: 8,
    };
    let restart = Arc::new(LogRestart::default());
    BatchWriter::start(conn, "test.sqlite".into(), limits, restart).unwrap()
}

fn database() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    schema::migrate(&mut conn).unwrap();
    conn
}

fn approval(id: &str) -> NewApproval {
    NewApproval {
        id: id.to_owned(),
        request: ApprovalRequest {
            command: "ls".to_owned(),
            ..ApprovalRequest::default()
        },
        created_at_ms: 1,
        expires_at_ms: 2,
    }
}

fn decided(decision: ApprovalDecision, by: &str) -> Resolution {
    Resolution::Decided {
        decision,
        resolved_by: Some(by.to_owned()),
        reason: None,
    }
}

fn insert_job(id: &str) -> (Box<dyn Job>, Receiver<Result<String, StoreError>>) {
    let approval = approval(id);
    queued(
        move |conn| write_ops::insert(conn, approval).map(|record| record.id),
        test_path(),
    )
}

fn resolve_job(
    id: &str,
    resolution: Resolution,
) -> (Box<dyn Job>, Receiver<Result<ResolveOutcome, StoreError>>) {
    let id = id.to_owned();
    queued(
        move |conn| write_ops::resolve(conn, &id, &resolution, 10),
        test_path(),
    )
}

/// Commits `jobs` as one batch and answers them, as the writer thread does.
fn run_batch(conn: &Connection, mut jobs: Vec<Box<dyn Job>>) -> Result<(), String> {
    let committed = commit_batch(conn, &mut jobs);
    for job in jobs {
        job.reply(committed.as_ref().map(|_| ()));
    }
    committed.map_err(|e| e.to_string())
}

fn ids(conn: &Connection) -> Vec<String> {
    rows::list(
        conn,
        &gatehouse_approvals::ListFilter {
            limit: usize::MAX,
            ..Default::default()
        },
    )
    .unwrap()
    .into_iter()
    .map(|record| record.id)
    .collect()
}

#[test]
fn the_first_answer_in_a_batch_wins_and_later_ones_see_it() {
    let conn = database();
    let (insert, inserted) = insert_job("a");
    let (first, first_out) = resolve_job("a", decided(ApprovalDecision::AllowOnce, "alice"));
    let (other, other_out) = resolve_job("a", decided(ApprovalDecision::Deny, "bob"));
    let (same, same_out) = resolve_job("a", decided(ApprovalDecision::AllowOnce, "carol"));
    run_batch(&conn, vec![insert, first, other, same]).unwrap();

    assert_eq!(inserted.recv().unwrap().unwrap(), "a");
    let first = first_out.recv().unwrap().unwrap();
    assert!(matches!(first, ResolveOutcome::Applied(_)), "{first:?}");
    let winner = first.winner().clone();
    assert_eq!(winner.resolved_by.as_deref(), Some("alice"));
    match other_out.recv().unwrap().unwrap() {
        ResolveOutcome::Rejected { winner: seen } => assert_eq!(seen, winner),
        other => panic!("expected Rejected, got {other:?}"),
    }
    match same_out.recv().unwrap().unwrap() {
        ResolveOutcome::Repeated(seen) => assert_eq!(seen, winner),
        other => panic!("expected Repeated, got {other:?}"),
    }
    assert_eq!(rows::fetch(&conn, "a").unwrap(), Some(winner));
}

#[test]
fn a_failing_operation_is_rolled_back_alone() {
    let conn = database();
    let (a, a_out) = insert_job("a");
    let (dup, dup_out) = insert_job("a");
    // Writes a row, then fails: its savepoint must take the row back with it.
    let (half, half_out) = queued(
        |conn| {
            write_ops::insert(conn, approval("half"))?;
            conn.execute("UPDATE approvals SET state = 'bogus' WHERE id = 'half'", [])?;
            Ok(())
        },
        test_path(),
    );
    let (missing, missing_out) = resolve_job("nope", decided(ApprovalDecision::Deny, "bob"));
    let (b, b_out) = insert_job("b");
    run_batch(&conn, vec![a, dup, half, missing, b]).unwrap();

    assert_eq!(a_out.recv().unwrap().unwrap(), "a");
    assert!(matches!(
        dup_out.recv().unwrap(),
        Err(StoreError::DuplicateId { approval_id }) if approval_id == "a"
    ));
    assert!(matches!(
        half_out.recv().unwrap(),
        Err(StoreError::Database(_))
    ));
    assert!(matches!(
        missing_out.recv().unwrap(),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(b_out.recv().unwrap().unwrap(), "b");
    assert_eq!(ids(&conn), vec!["a", "b"]);
}

#[test]
fn a_batch_that_cannot_take_the_write_lock_acknowledges_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    let mut conn = conn;
    schema::migrate(&mut conn).unwrap();
    // Another connection holds the write lock, and the writer does not wait for it.
    let other = Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn.busy_timeout(std::time::Duration::ZERO).unwrap();

    let (a, a_out) = insert_job("a");
    let (b, b_out) = insert_job("b");
    assert!(run_batch(&conn, vec![a, b]).is_err());
    for out in [a_out, b_out] {
        assert!(matches!(
            out.recv().unwrap(),
            Err(StoreError::Database(error))
                if matches!(error.engine(), rusqlite::Error::SqliteFailure(code, _)
                    if code.code == rusqlite::ErrorCode::DatabaseBusy)
        ));
    }

    other.execute_batch("ROLLBACK").unwrap();
    let (c, c_out) = insert_job("c");
    run_batch(&conn, vec![c]).unwrap();
    assert_eq!(c_out.recv().unwrap().unwrap(), "c");
    assert_eq!(ids(&conn), vec!["c"]);
}

#[test]
fn a_writer_that_died_answers_every_caller_with_an_error() {
    let writer = small_writer(Arc::new(Mutex::new(database())));
    let died = writer.submit(|_| -> Result<(), StoreError> { panic!("writer bug") });
    assert!(
        matches!(died, Err(StoreError::WriterStopped { .. })),
        "{died:?}"
    );
    let after = writer.submit(|conn| write_ops::insert(conn, approval("late")));
    assert!(
        matches!(after, Err(StoreError::WriterStopped { .. })),
        "{after:?}"
    );
}

#[test]
fn a_closed_writer_refuses_writes() {
    let conn = Arc::new(Mutex::new(database()));
    let writer = small_writer(Arc::clone(&conn));
    writer
        .submit(|conn| write_ops::insert(conn, approval("before")))
        .unwrap();
    writer.close();
    let after = writer.submit(|conn| write_ops::insert(conn, approval("after")));
    assert!(
        matches!(after, Err(StoreError::WriterStopped { .. })),
        "{after:?}"
    );
    assert_eq!(ids(&super::lock(&conn)), vec!["before"]);
}

#[test]
fn answers_queued_operations_through_their_completion() {
    let writer = small_writer(Arc::new(Mutex::new(database())));
    let (answers, answered) = std::sync::mpsc::channel();
    let insert = |id: &'static str| {
        let answers = answers.clone();
        let op = move |conn: &Connection| write_ops::insert(conn, approval(id)).map(|r| r.id);
        let done = Box::new(move |result| answers.send(result).unwrap());
        (op, done)
    };
    let (op, done) = insert("queued");
    writer.submit_then(op, done);
    assert_eq!(answered.recv().unwrap().unwrap(), "queued");
    writer.close();
    let (op, done) = insert("late");
    writer.submit_then(op, done);
    let late = answered.recv().unwrap();
    assert!(
        matches!(late, Err(StoreError::WriterStopped { .. })),
        "{late:?}"
    );
}

#[test]
fn a_completion_may_drop_the_last_handle_on_the_writer() {
    let conn = Arc::new(Mutex::new(database()));
    let writer = Arc::new(small_writer(Arc::clone(&conn)));
    let (answers, answered) = std::sync::mpsc::channel();
    let last_handle = Arc::clone(&writer);
    let done: Completion<String> = Box::new(move |result| {
        // The writer's thread now holds the only handle and drops it here, which closes the
        // writer from its own thread; it must not wait for itself.
        drop(last_handle);
        answers.send(result).unwrap();
    });
    writer.submit_then(
        |conn| write_ops::insert(conn, approval("last")).map(|r| r.id),
        done,
    );
    drop(writer);
    let answer = answered
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the completion ran");
    assert_eq!(answer.unwrap(), "last");
    assert_eq!(ids(&super::lock(&conn)), vec!["last"]);
}
