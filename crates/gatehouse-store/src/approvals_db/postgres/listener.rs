//! The one listening connection per store: how a gateway hears of the other gateways' writes,
//! approvals and shared documents alike.
//!
//! A task holds a connection of its own with `LISTEN` on both channels, pings it every few
//! seconds, and hands each notice to the part it wakes, by channel: [`APPROVALS`] notices go
//! to the approval feeds (`feed`), [`DOCUMENTS`] notices make the named document be read again
//! (`documents`). Notices are wake-ups only: those sent while the connection is down are lost,
//! so after every (re)connection, once listening, every feed is told to resync (the manager
//! reads the event log after the last event it saw) and every followed document is read
//! again. The task runs from the first feed or documents handed out until the store and every
//! [`PgDocuments`](super::PgDocuments) made from it are gone.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use deadpool_postgres::Pool;
use gatehouse_approvals::Change;
use tokio::task::AbortHandle;

use super::connect::Connector;
use super::documents::{self, Followed};
use super::feed::{self, Subscribers};

/// The channel approval writes (and run events) are announced on; the payload is
/// `<origin> <approval id>`.
pub(super) const APPROVALS: &str = "gatehouse_approvals";
/// The channel document changes are announced on; the payload is the document's name.
pub(super) const DOCUMENTS: &str = "gatehouse_documents";

/// How often an idle listener checks that its connection is alive, and how long it waits
/// before connecting again after losing it.
const PING_EVERY: Duration = Duration::from_secs(5);
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Who hears what the listener hears. Held weakly: a part that is gone hears nothing.
#[derive(Debug)]
struct Hearers {
    /// This store's origin: its own approval notices are not forwarded.
    origin: String,
    approvals: Weak<Subscribers>,
    /// Each [`PgDocuments`](super::PgDocuments)' followed documents and the pool it reads on.
    documents: Mutex<Vec<(Pool, Weak<Followed>)>>,
}

impl Hearers {
    /// Whether anyone is left to hear a notice.
    fn anyone(&self) -> bool {
        self.approvals.strong_count() > 0
            || self
                .lock_documents()
                .iter()
                .any(|(_, followed)| followed.strong_count() > 0)
    }

    /// The live documents' followers, forgetting those gone.
    fn live_documents(&self) -> Vec<(Pool, Arc<Followed>)> {
        let mut documents = self.lock_documents();
        documents.retain(|(_, followed)| followed.strong_count() > 0);
        documents
            .iter()
            .filter_map(|(pool, followed)| Some((pool.clone(), followed.upgrade()?)))
            .collect()
    }

    fn lock_documents(&self) -> std::sync::MutexGuard<'_, Vec<(Pool, Weak<Followed>)>> {
        self.documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// After a (re)connection: every feed resyncs, every followed document is read again.
    async fn caught_up(&self) {
        if let Some(live) = self.approvals.upgrade() {
            live.send(&Change::Resync);
        }
        for (pool, followed) in self.live_documents() {
            documents::refresh_all(&pool, &followed).await;
        }
    }

    /// Hands one notice to the part its channel wakes.
    async fn hear(&self, channel: &str, payload: &str) {
        match channel {
            APPROVALS => {
                if let (Some(live), Some(change)) = (
                    self.approvals.upgrade(),
                    feed::other_origin(payload, &self.origin),
                ) {
                    live.send(&change);
                }
            }
            DOCUMENTS => {
                for (pool, followed) in self.live_documents() {
                    documents::refresh(&pool, &followed, payload).await;
                }
            }
            _ => {}
        }
    }
}

/// A store's listener: started once by the first part that needs it, stopped when the last
/// holder (the store, its documents) lets go.
#[derive(Debug)]
pub(super) struct Listener {
    connector: Connector,
    hearers: Arc<Hearers>,
    task: OnceLock<AbortHandle>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(task) = self.task.get() {
            task.abort();
        }
    }
}

impl Listener {
    /// A listener for the store `origin` names, whose feeds are `approvals`; not started yet.
    pub(super) fn new(connector: Connector, origin: String, approvals: Weak<Subscribers>) -> Self {
        Listener {
            connector,
            hearers: Arc::new(Hearers {
                origin,
                approvals,
                documents: Mutex::default(),
            }),
            task: OnceLock::new(),
        }
    }

    /// Makes `followed` hear document notices (read on `pool`), and starts the listener if it
    /// was not running. Call from within a tokio runtime.
    pub(super) fn follow_documents(&self, pool: Pool, followed: Weak<Followed>) {
        self.hearers.lock_documents().push((pool, followed));
        self.start();
    }

    /// Starts the listener if it was not running. Call from within a tokio runtime.
    pub(super) fn start(&self) {
        self.task.get_or_init(|| {
            let listening = listen(self.connector.clone(), Arc::clone(&self.hearers));
            tokio::spawn(listening).abort_handle()
        });
    }
}

/// The listener task: (re)connects, listens on both channels, resyncs, and dispatches notices
/// until nobody is left to hear them.
async fn listen(connector: Connector, hearers: Arc<Hearers>) {
    loop {
        match connector.listening().await {
            Ok((client, mut notices)) => {
                let listening = client
                    .batch_execute(&format!("LISTEN {APPROVALS}; LISTEN {DOCUMENTS}"))
                    .await;
                if let Err(error) = listening {
                    tracing::warn!(%error, "Could not listen for other gateways' writes.");
                } else {
                    // Listening before catching up, so nothing falls between.
                    hearers.caught_up().await;
                    let mut ping = tokio::time::interval(PING_EVERY);
                    loop {
                        tokio::select! {
                            notice = notices.recv() => {
                                let Some((channel, payload)) = notice else { break };
                                hearers.hear(&channel, &payload).await;
                            }
                            _ = ping.tick() => {
                                if !hearers.anyone() {
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
                tracing::warn!(%error, "Could not connect to hear other gateways' writes.");
            }
        }
        if !hearers.anyone() {
            return;
        }
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}
