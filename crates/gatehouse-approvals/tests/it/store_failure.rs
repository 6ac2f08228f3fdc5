//! A store that refuses a write: an approval announced before its row was durable is withdrawn
//! again, in order, and leaves nothing behind.

use std::time::Duration;

use gatehouse_approvals::{ApprovalError, EventKind, REASON_STORE_FAILED};
use gatehouse_store::approvals_db::SqliteOptions;

use crate::support::{next_event, persistable, start_with_store};

#[tokio::test]
async fn an_approval_whose_insert_fails_is_announced_then_withdrawn() {
    let mut h = start_with_store(SqliteOptions {
        busy_timeout: Duration::from_millis(20),
        ..SqliteOptions::default()
    })
    .await;
    // Another connection holds the write lock, so the insert's batch cannot begin.
    let blocker = rusqlite::Connection::open(h.dir.path().join("approvals.sqlite")).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let refused = h.manager.create(persistable("make blocked")).await;
    assert!(
        matches!(refused, Err(ApprovalError::Store(_))),
        "{refused:?}"
    );
    let requested = next_event(&mut h.events);
    assert!(matches!(requested.kind, EventKind::Requested { .. }));
    let withdrawn = next_event(&mut h.events);
    assert_eq!(withdrawn.id, requested.id);
    assert!(
        matches!(&withdrawn.kind, EventKind::Cancelled { reason } if reason == REASON_STORE_FAILED),
        "{withdrawn:?}"
    );
    assert_eq!(h.manager.in_memory(), 0, "the entry is gone with its row");

    blocker.execute_batch("ROLLBACK").unwrap();
    let created = h.manager.create(persistable("make unblocked")).await;
    assert!(created.is_ok(), "{created:?}");
}
