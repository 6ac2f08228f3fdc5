//! Callers that stop waiting (a dropped future: a client disconnect) never leave memory, timers
//! and events behind the store.

use std::time::Duration;

use gatehouse_approvals::{EventKind, IdDisclosure};
use gatehouse_policy::ApprovalDecision;
use tokio::time::timeout;

use crate::support::{persistable, start};

/// Polls `future` once and drops it if it is not done, as a disconnecting client's task does.
async fn abandon_after_first_poll<F: Future>(future: F) -> Option<F::Output> {
    tokio::select! {
        biased;
        output = future => Some(output),
        () = std::future::ready(()) => None,
    }
}

/// Long enough to never fire on a working manager; it only turns a hang into a failure.
const HANG_GUARD: Duration = Duration::from_secs(30);

#[tokio::test]
async fn an_abandoned_resolve_still_settles_memory_and_wakes_waiters() {
    let h = start().await;
    let id = h.create("make abandoned").await;
    let key = id.to_string();
    let resolve = h
        .manager
        .resolve(&key, ApprovalDecision::Deny, "alice", IdDisclosure::Hidden);
    assert!(
        abandon_after_first_poll(resolve).await.is_none(),
        "the caller gave up before the store answered"
    );
    let record = timeout(HANG_GUARD, h.manager.await_decision(id))
        .await
        .expect("memory follows the store")
        .unwrap();
    assert_eq!(record.decision, Some(ApprovalDecision::Deny));
}

#[tokio::test]
async fn an_abandoned_create_is_still_stored_and_announced() {
    let mut h = start().await;
    let create = h.manager.create(persistable("make orphan"));
    assert!(abandon_after_first_poll(create).await.is_none());
    let event = timeout(HANG_GUARD, h.events.recv())
        .await
        .expect("the approval is announced")
        .unwrap();
    assert!(matches!(event.kind, EventKind::Requested { .. }));
    // Announced as soon as the insert was queued; the row follows without the caller.
    let stored = timeout(HANG_GUARD, async {
        loop {
            match h
                .manager
                .get(&event.id.to_string(), IdDisclosure::Hidden)
                .await
            {
                Ok(record) => break record,
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    });
    let record = stored.await.expect("the approval is stored");
    assert_eq!(record.request.command, "make orphan");
}
