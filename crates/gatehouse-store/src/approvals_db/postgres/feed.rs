//! The change feed: how one gateway hears of the others' writes.
//!
//! Every write that creates or settles an approval, and every run event logged, sends `NOTIFY
//! gatehouse_approvals` in its own transaction (delivered on commit), with the writing store's
//! origin and the approval's (or run's) id. The store's listener (`listener`, one connection
//! for approvals and documents alike) forwards every other origin's notice to the feeds here.
//! Notices sent while it is disconnected are lost, so after every (re)connection it sends
//! [`Change::Resync`] and the manager reads the event log after the last event it saw: the
//! notices are wake-ups, the tables the state.

use std::sync::{Mutex, PoisonError};

use gatehouse_approvals::{Change, ChangeFeed};
use tokio::sync::mpsc;

use super::listener::APPROVALS;
use super::ops::Queries;
use crate::error::StoreError;

/// Tells the other stores, once `tx` commits, that `origin` wrote the approval `id`.
pub(super) async fn notify(tx: &impl Queries, origin: &str, id: &str) -> Result<(), StoreError> {
    let payload = format!("{origin} {id}");
    tx.rows("SELECT pg_notify($1, $2)", &[&APPROVALS, &payload])
        .await?;
    Ok(())
}

/// Where the listener hands notices: every [`ChangeFeed`] handed out and still open.
#[derive(Debug, Default)]
pub(super) struct Subscribers(Mutex<Vec<mpsc::UnboundedSender<Change>>>);

impl Subscribers {
    /// A new feed.
    pub(super) fn subscribe(&self) -> ChangeFeed {
        let (sender, feed) = mpsc::unbounded_channel();
        self.lock().push(sender);
        feed
    }

    pub(super) fn send(&self, change: &Change) {
        self.lock()
            .retain(|subscriber| subscriber.send(change.clone()).is_ok());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<Change>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The change a notice announces, unless this store sent it (its own writes are followed
/// through their answers).
pub(super) fn other_origin(payload: &str, origin: &str) -> Option<Change> {
    let (from, id) = payload.split_once(' ')?;
    (from != origin).then(|| Change::Approval(id.to_owned()))
}

/// A random origin for one store, so its own notices can be told apart.
pub(super) fn new_origin() -> String {
    format!("{:016x}", rand::random::<u64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwards_only_other_origins_notices() {
        assert_eq!(
            other_origin("b1 0f98895b-0000", "a0"),
            Some(Change::Approval("0f98895b-0000".to_owned()))
        );
        assert_eq!(other_origin("a0 0f98895b-0000", "a0"), None);
        assert_eq!(other_origin("garbled", "a0"), None);
    }
}
