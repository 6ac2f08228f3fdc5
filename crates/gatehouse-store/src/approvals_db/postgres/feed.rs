//! The change feed: how one gateway hears of the others' writes.
//!
//! Every write that creates or settles an approval sends `NOTIFY gatehouse_approvals` in its
//! own transaction (delivered on commit), with the writing store's origin and the approval's
//! id. A listener task per store holds a connection of its own with `LISTEN`, forwards every
//! other origin's notice, and pings the server every few seconds. Notices sent while it is
//! disconnected are lost, so after every (re)connection it sends [`Change::Resync`] and the
//! manager reads everything pending again: the notices are wake-ups, the tables the state.

use std::sync::{Mutex, PoisonError, Weak};
use std::time::Duration;

use gatehouse_approvals::{Change, ChangeFeed};
use tokio::sync::mpsc;

use super::connect::Connector;
use super::ops::Queries;
use crate::error::StoreError;

/// The channel every store notifies and listens on.
const CHANNEL: &str = "gatehouse_approvals";

/// How often an idle listener checks that its connection is alive, and how long it waits
/// before connecting again after losing it.
const PING_EVERY: Duration = Duration::from_secs(5);
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Tells the other stores, once `tx` commits, that `origin` wrote the approval `id`.
pub(super) async fn notify(tx: &impl Queries, origin: &str, id: &str) -> Result<(), StoreError> {
    let payload = format!("{origin} {id}");
    tx.rows("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
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

    fn send(&self, change: &Change) {
        self.lock()
            .retain(|subscriber| subscriber.send(change.clone()).is_ok());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<Change>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The listener task: (re)connects, listens, and forwards other origins' notices until the
/// store (the owner of `subscribers`) is dropped.
pub(super) async fn listen(connector: Connector, origin: String, subscribers: Weak<Subscribers>) {
    loop {
        match connector.listening().await {
            Ok((client, mut notices)) => {
                let listening = client.batch_execute(&format!("LISTEN {CHANNEL}")).await;
                if let Err(error) = listening {
                    tracing::warn!(%error, "Could not listen for other gateways' approvals.");
                } else {
                    // Listening before the resync is asked for, so nothing falls between.
                    let Some(live) = subscribers.upgrade() else {
                        return;
                    };
                    live.send(&Change::Resync);
                    drop(live);
                    let mut ping = tokio::time::interval(PING_EVERY);
                    loop {
                        tokio::select! {
                            notice = notices.recv() => {
                                let Some(payload) = notice else { break };
                                let Some(live) = subscribers.upgrade() else { return };
                                if let Some(change) = other_origin(&payload, &origin) {
                                    live.send(&change);
                                }
                            }
                            _ = ping.tick() => {
                                if subscribers.strong_count() == 0 {
                                    return;
                                }
                                if client.simple_query("SELECT 1").await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    tracing::warn!("Lost the approvals database's notification connection.");
                }
            }
            Err(error) => {
                tracing::warn!(%error, "Could not connect to hear other gateways' approvals.");
            }
        }
        if subscribers.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}

/// The change a notice announces, unless this store sent it (its own writes are followed
/// through their answers).
fn other_origin(payload: &str, origin: &str) -> Option<Change> {
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
