use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::sync::Barrier;

use gatehouse_approvals::{
    ApprovalState, ConsumeOutcome, DeliveredMessage, Resolution, ResolveOutcome,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
use pretty_assertions::assert_eq;

use crate::support::{new_approval, open_db};

const RESOLVERS: usize = 16;

fn answer(n: usize) -> Resolution {
    match n % 4 {
        0 => Resolution::Decided {
            decision: ApprovalDecision::AllowOnce,
            resolved_by: Some(format!("approver-{n}")),
            reason: None,
        },
        1 => Resolution::Decided {
            decision: ApprovalDecision::Deny,
            resolved_by: Some(format!("approver-{n}")),
            reason: None,
        },
        2 => Resolution::Decided {
            decision: ApprovalDecision::AllowAlways,
            resolved_by: Some(format!("approver-{n}")),
            reason: None,
        },
        _ => Resolution::Expired {
            reason: "timeout".into(),
        },
    }
}

#[test]
fn exactly_one_of_many_concurrent_resolvers_wins() {
    let dir = tempfile::tempdir().unwrap();
    open_db(&dir).insert(&new_approval("race", 1)).unwrap();
    // Half the threads share one store (one writer, batching them), half open their own
    // (separate writers contending for SQLite's lock): both paths must hold.
    let shared = open_db(&dir);
    let barrier = Barrier::new(RESOLVERS);
    let outcomes: Vec<ResolveOutcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..RESOLVERS)
            .map(|n| {
                let (barrier, shared, dir) = (&barrier, &shared, &dir);
                scope.spawn(move || {
                    let own;
                    let db: &SqliteApprovalStore = if n % 2 == 0 {
                        shared
                    } else {
                        own = open_db(dir);
                        &own
                    };
                    barrier.wait();
                    db.resolve("race", &answer(n), 100 + n as u64).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let applied: Vec<&ResolveOutcome> = outcomes.iter().filter(|o| o.applied()).collect();
    assert_eq!(applied.len(), 1, "{outcomes:#?}");
    let winner = applied[0].winner().clone();
    for outcome in &outcomes {
        assert_eq!(outcome.winner(), &winner);
    }
    assert_eq!(shared.get("race").unwrap(), Some(winner));
}

#[test]
fn concurrent_consumers_take_an_allow_once_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("once", 1)).unwrap();
    db.resolve(
        "once",
        &Resolution::Decided {
            decision: ApprovalDecision::AllowOnce,
            resolved_by: None,
            reason: None,
        },
        2,
    )
    .unwrap();
    let barrier = Barrier::new(RESOLVERS);
    let consumed = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..RESOLVERS)
            .map(|n| {
                let (barrier, dir) = (&barrier, &dir);
                scope.spawn(move || {
                    let db = open_db(dir);
                    barrier.wait();
                    db.consume_allow_once("once", 10 + n as u64).unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|o| matches!(o, ConsumeOutcome::Consumed(_)))
            .count()
    });
    assert_eq!(consumed, 1);
}

#[test]
fn restart_cancels_pending_rows_and_returns_their_messages() {
    let dir = tempfile::tempdir().unwrap();
    let message = DeliveredMessage {
        channel: "telegram".into(),
        account_id: Some("bot-1".into()),
        chat_id: "-100123".into(),
        message_id: "77".into(),
        thread_id: Some("42".into()),
    };
    {
        let db = open_db(&dir);
        for id in ["p1", "p2", "done"] {
            db.insert(&new_approval(id, 5)).unwrap();
        }
        db.record_delivery("p1", &message).unwrap();
        db.resolve(
            "done",
            &Resolution::Decided {
                decision: ApprovalDecision::Deny,
                resolved_by: Some("bob".into()),
                reason: None,
            },
            6,
        )
        .unwrap();
    }
    let db = open_db(&dir);
    let cancelled = db.cancel_all_pending("gateway-restart", 50).unwrap();
    let ids: Vec<&str> = cancelled.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec!["p1", "p2"]);
    for record in &cancelled {
        assert_eq!(record.state, ApprovalState::Cancelled);
        assert_eq!(record.reason.as_deref(), Some("gateway-restart"));
        assert_eq!(record.resolved_at_ms, Some(50));
    }
    assert_eq!(cancelled[0].messages, vec![message]);
    assert_eq!(
        db.get("done").unwrap().unwrap().state,
        ApprovalState::Denied
    );
    assert_eq!(
        db.cancel_all_pending("gateway-restart", 60).unwrap(),
        vec![]
    );
}

fn mode(path: &std::path::Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn creates_database_files_with_mode_0600() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("m", 1)).unwrap();
    assert_eq!(mode(db.path()), 0o600);
    let wal = db.path().with_extension("sqlite-wal");
    assert!(wal.exists(), "WAL journal in use");
    assert_eq!(mode(&wal), 0o600);
}

#[test]
fn tightens_an_existing_database_to_0600() {
    let dir = tempfile::tempdir().unwrap();
    let path = open_db(&dir).path().to_path_buf();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    open_db(&dir);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn refuses_a_database_from_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = open_db(&dir).path().to_path_buf();
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = SqliteApprovalStore::open(&path, SqliteOptions::default()).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
    let err = SqliteApprovalStore::check(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
}

/// `doctor` checks the database with `check`: it must refuse what `open` refuses, and write
/// nothing, neither the database nor a `-wal` or `-shm` file beside it.
#[test]
fn checks_a_database_as_open_would_without_writing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite");
    assert_eq!(SqliteApprovalStore::check(&path).unwrap(), 0);
    let created = open_db(&dir).path().to_path_buf();
    assert_eq!(created, path);
    let names = || {
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names(),
        ["approvals.sqlite"],
        "a closed database keeps no log"
    );
    let version = SqliteApprovalStore::check(&path).unwrap();
    assert!(version > 0);
    assert_eq!(names(), ["approvals.sqlite"]);
    // Beside a gateway that has it open, the database is read as its readers read it.
    let open = SqliteApprovalStore::open(&path, SqliteOptions::default()).unwrap();
    assert_eq!(SqliteApprovalStore::check(&path).unwrap(), version);
    drop(open);
    fs::write(&path, "not a database, just text ".repeat(100)).unwrap();
    let opened = SqliteApprovalStore::open(&path, SqliteOptions::default()).unwrap_err();
    let checked = SqliteApprovalStore::check(&path).unwrap_err();
    assert_eq!(checked.to_string(), opened.to_string());
    assert_eq!(
        checked.to_string(),
        "approvals database: file is not a database"
    );
}

#[test]
fn reports_a_corrupt_row_instead_of_guessing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("c", 1)).unwrap();
    rusqlite::Connection::open(db.path())
        .unwrap()
        .execute(
            "UPDATE approvals SET argv_json = 'not json' WHERE id = 'c'",
            [],
        )
        .unwrap();
    assert!(matches!(
        db.get("c"),
        Err(StoreError::CorruptRow {
            column: "argv_json",
            ..
        })
    ));
}

#[test]
fn the_schema_rejects_inconsistent_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(&dir);
    db.insert(&new_approval("k", 1)).unwrap();
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    for bad in [
        "UPDATE approvals SET state = 'allowed' WHERE id = 'k'",
        "UPDATE approvals SET state = 'denied', decision = 'allow-once', resolved_at_ms = 2 WHERE id = 'k'",
        "UPDATE approvals SET consumed_at_ms = 3 WHERE id = 'k'",
        "UPDATE approvals SET state = 'maybe', resolved_at_ms = 2 WHERE id = 'k'",
    ] {
        assert!(conn.execute(bad, []).is_err(), "{bad}");
    }
}

#[test]
fn an_in_memory_store_behaves_like_the_file_store() {
    let db = SqliteApprovalStore::open_in_memory().unwrap();
    db.insert(&new_approval("mem", 1)).unwrap();
    let outcome = db
        .resolve(
            "mem",
            &Resolution::Expired {
                reason: "no-approval-route".into(),
            },
            2,
        )
        .unwrap();
    assert!(outcome.applied());
    assert_eq!(
        outcome.winner().reason.as_deref(),
        Some("no-approval-route")
    );
    assert!(!std::path::Path::new(":memory:").exists());
}
