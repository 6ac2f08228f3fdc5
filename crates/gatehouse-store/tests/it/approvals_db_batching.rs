//! Group commit seen from callers: operations that shared a batch keep their own outcomes,
//! a caller reads its own writes, closing the writer answers instead of hanging, and the batch
//! times operators watch count every batch.
//!
//! A batch forms when operations queue up while the writer waits; here another connection
//! holds SQLite's write lock for a moment so that every caller is queued before the writer can
//! begin. The outcomes asserted hold however the operations were grouped.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use gatehouse_approvals::{ApprovalState, ConsumeOutcome, Resolution, ResolveOutcome};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::SqliteApprovalStore;
use pretty_assertions::assert_eq;

use crate::support::{new_approval, open_db};

const CALLERS: usize = 32;

/// Runs `call` on `CALLERS` threads while another connection holds the write lock, so they all
/// queue behind it, then releases the lock and returns every result in thread order.
fn queued_together<T: Send>(db: &SqliteApprovalStore, call: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let blocker = rusqlite::Connection::open(db.path()).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let barrier = Barrier::new(CALLERS + 1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CALLERS)
            .map(|n| {
                let (barrier, call) = (&barrier, &call);
                scope.spawn(move || {
                    barrier.wait();
                    call(n)
                })
            })
            .collect();
        barrier.wait();
        // Long enough for every thread to enqueue; shorter than the 5 s busy timeout.
        std::thread::sleep(Duration::from_millis(300));
        blocker.execute_batch("COMMIT").unwrap();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn answer(n: usize) -> Resolution {
    let decision = match n % 3 {
        0 => ApprovalDecision::AllowOnce,
        1 => ApprovalDecision::Deny,
        _ => ApprovalDecision::AllowAlways,
    };
    Resolution::Decided {
        decision,
        resolved_by: Some(format!("approver-{n}")),
        reason: None,
    }
}

#[test]
fn conflicting_answers_queued_together_have_exactly_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("race", 1)).unwrap();
    let outcomes = queued_together(&db, |n| db.resolve("race", &answer(n), 10).unwrap());
    let applied: Vec<&ResolveOutcome> = outcomes.iter().filter(|o| o.applied()).collect();
    assert_eq!(applied.len(), 1, "{outcomes:#?}");
    let winner = applied[0].winner().clone();
    for (n, outcome) in outcomes.iter().enumerate() {
        assert_eq!(outcome.winner(), &winner);
        // The winner's answer repeated is an idempotent success; any other answer is rejected.
        let same_answer = answer(n).decision() == winner.decision;
        let expected_kind = match outcome {
            ResolveOutcome::Applied(_) | ResolveOutcome::Repeated(_) => true,
            ResolveOutcome::Rejected { .. } => false,
        };
        assert_eq!(same_answer, expected_kind, "caller {n}: {outcome:?}");
    }
    assert_eq!(db.get("race").unwrap(), Some(winner));
}

#[test]
fn allow_once_queued_together_is_consumed_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("once", 1)).unwrap();
    db.resolve("once", &answer(0), 2).unwrap();
    let outcomes = queued_together(&db, |n| {
        db.consume_allow_once("once", 10 + n as u64).unwrap()
    });
    let consumed = outcomes
        .iter()
        .filter(|o| matches!(o, ConsumeOutcome::Consumed(_)))
        .count();
    let already = outcomes
        .iter()
        .filter(|o| matches!(o, ConsumeOutcome::AlreadyConsumed(_)))
        .count();
    assert_eq!((consumed, already), (1, CALLERS - 1));
}

#[test]
fn failing_operations_queued_together_leave_their_neighbours_committed() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("taken", 1)).unwrap();
    // Even callers insert a fresh id; odd callers collide with an existing one.
    let results = queued_together(&db, |n| {
        let id = if n % 2 == 0 {
            format!("fresh-{n:02}")
        } else {
            "taken".to_owned()
        };
        db.insert(&new_approval(&id, 2)).map(|record| record.id)
    });
    for (n, result) in results.iter().enumerate() {
        if n % 2 == 0 {
            assert_eq!(result.as_deref().unwrap(), format!("fresh-{n:02}"));
        } else {
            assert!(
                matches!(result, Err(StoreError::DuplicateId { approval_id }) if approval_id == "taken"),
                "{result:?}"
            );
        }
    }
    for n in (0..CALLERS).step_by(2) {
        let id = format!("fresh-{n:02}");
        assert_eq!(db.get(&id).unwrap().unwrap().state, ApprovalState::Pending);
    }
}

#[test]
fn a_caller_reads_its_own_writes_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    std::thread::scope(|scope| {
        for t in 0..8 {
            let db = &db;
            scope.spawn(move || {
                for i in 0..20 {
                    let id = format!("ryw-{t}-{i}");
                    let created = db.insert(&new_approval(&id, i)).unwrap();
                    assert_eq!(db.get(&id).unwrap(), Some(created));
                    assert_eq!(db.find_by_prefix(&id, 2).unwrap().len(), 1);
                    let resolved = db.resolve(&id, &answer(1), i + 1).unwrap();
                    assert_eq!(db.get(&id).unwrap().as_ref(), Some(resolved.winner()));
                }
            });
        }
    });
}

#[test]
fn closing_commits_what_was_acknowledged_and_refuses_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(open_db(&dir));
    let (done, finished) = mpsc::channel();
    let writers: Vec<_> = (0..8)
        .map(|t| {
            let (db, done) = (Arc::clone(&db), done.clone());
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                let error = loop {
                    let id = format!("w{t}-{:05}", acknowledged.len());
                    match db.insert(&new_approval(&id, 1)) {
                        Ok(_) => acknowledged.push(id),
                        Err(error) => break error,
                    }
                };
                done.send(()).unwrap();
                (acknowledged, error)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    db.close();
    for _ in 0..writers.len() {
        finished
            .recv_timeout(Duration::from_secs(10))
            .expect("every writer is answered after close");
    }
    let mut total = 0;
    for writer in writers {
        let (acknowledged, error) = writer.join().unwrap();
        assert!(matches!(error, StoreError::WriterStopped { .. }), "{error}");
        for id in &acknowledged {
            assert!(
                db.get(id).unwrap().is_some(),
                "{id} acknowledged but missing"
            );
        }
        total += acknowledged.len();
    }
    assert!(total > 0, "writers made progress before the close");
    assert!(matches!(
        db.resolve("w0-00000", &answer(1), 5),
        Err(StoreError::WriterStopped { .. })
    ));
    // Nothing acknowledged was left in memory: a fresh store sees every row.
    drop(db);
    let reopened = open_db(&dir);
    assert_eq!(
        reopened
            .list(&gatehouse_approvals::ListFilter {
                limit: usize::MAX,
                ..Default::default()
            })
            .unwrap()
            .len(),
        total
    );
}

#[test]
fn reads_do_not_wait_for_a_batch_that_is_waiting_to_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    let existing = db.insert(&new_approval("existing", 1)).unwrap();
    let blocker = rusqlite::Connection::open(db.path()).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::scope(|scope| {
        let (written, write_done) = mpsc::channel();
        let db = &db;
        scope.spawn(move || {
            written.send(db.insert(&new_approval("queued", 2))).unwrap();
        });
        // Give the writer time to take the insert and wait for the lock (busy timeout 5 s); a
        // read must not wait with it.
        std::thread::sleep(Duration::from_millis(100));
        let (read, read_done) = mpsc::channel();
        scope.spawn(move || read.send(db.get("existing")).unwrap());
        let got = read_done.recv_timeout(Duration::from_secs(3)).unwrap();
        assert_eq!(got.unwrap(), Some(existing));
        assert_eq!(db.get("queued").unwrap(), None, "not committed yet");
        assert!(write_done.try_recv().is_err(), "the write is still waiting");
        blocker.execute_batch("COMMIT").unwrap();
        let queued = write_done.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(queued.unwrap().id, "queued");
    });
}

#[test]
fn batch_times_count_every_write_and_show_a_batch_kept_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("first", 1)).unwrap();
    let before = db.batch_times();
    assert_eq!((before.batch_count(), before.writes), (1, 1));
    queued_together(&db, |n| {
        db.insert(&new_approval(&format!("id-{n}"), 2)).unwrap()
    });
    let after = db.batch_times();
    assert_eq!(after.writes - before.writes, CALLERS as u64);
    let batches = after.batch_count() - before.batch_count();
    assert!(batches < CALLERS as u64, "{batches} batches: not grouped");
    // The batch that began while the other connection held the lock waited about 300 ms for it.
    let within_100ms = after
        .cumulative()
        .find(|(bound, _)| *bound == Some(Duration::from_millis(100)))
        .map(|(_, count)| count)
        .unwrap();
    assert!(
        after.batch_count() - within_100ms >= 1,
        "no batch slower than 100 ms: {after:?}"
    );
    assert!(after.total >= Duration::from_millis(200), "{after:?}");
}
