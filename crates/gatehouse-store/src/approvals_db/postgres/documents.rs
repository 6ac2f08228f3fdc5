//! `gatehouse-approvals`' [`DocumentStore`] on PostgreSQL: per-host state (the exec approvals
//! document, the chat sessions) as rows of `gatehouse_documents`, one per document, shared by
//! every replica (docs/high-availability.md, "Per-host state").
//!
//! A change is a compare-and-swap on the row's `version`: read the document, apply the change
//! (a pure function of the bytes) on the caller's thread, and store the result only if the
//! version is still the one read, in one statement; when another replica's change came first,
//! read again and apply the change to that. Nothing is lost, and no lock is held while the
//! change is computed. A change sends `NOTIFY gatehouse_documents` with the document's name; the
//! store's listener (`listener`, the one listening connection it shares with the approvals
//! feed) reads a named document again on each notice, and every followed document after each
//! (re)connection (notices sent while it was away are lost). Each row's `version` grows
//! with every change, so a read that finishes late never replaces a newer version.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use deadpool_postgres::Pool;
use gatehouse_approvals::{DocumentBytes, DocumentChange, DocumentStore};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::watch;

use super::listener::{DOCUMENTS, Listener};
use super::ops::Queries;
use crate::error::{PostgresError, StoreError};

/// How many times a change is applied again after losing to another replica's before giving
/// up: each loss means another change was stored, so this bounds only pathological contention.
const MAX_ATTEMPTS: usize = 64;

/// The documents this replica follows: each one's receivers' sender and the version they hold.
pub(super) type Followed = Mutex<HashMap<String, (watch::Sender<DocumentBytes>, i64)>>;

/// Shared documents on the approvals database. Made by
/// [`PgApprovalStore::documents`](super::PgApprovalStore::documents).
#[derive(Debug)]
pub struct PgDocuments {
    pool: Pool,
    /// The runtime the blocking calls wait on.
    runtime: Handle,
    followed: Arc<Followed>,
    /// The store's listener, which reads followed documents again on notice; kept running
    /// while these documents are.
    _listener: Arc<Listener>,
}

impl PgDocuments {
    /// Starts following documents on `pool`, hearing changes through the store's `listener`.
    /// Call from within a tokio runtime.
    pub(super) fn start(pool: Pool, listener: Arc<Listener>) -> PgDocuments {
        let followed: Arc<Followed> = Arc::default();
        listener.follow_documents(pool.clone(), Arc::downgrade(&followed));
        PgDocuments {
            pool,
            runtime: Handle::current(),
            followed,
            _listener: listener,
        }
    }

    /// Runs `work` on the store's runtime and waits for it. From a multi-threaded runtime's
    /// thread the wait hands that thread's other tasks on ([`tokio::task::block_in_place`]);
    /// elsewhere (the blocking pool, a plain thread) it simply blocks. On a single-threaded
    /// runtime it must be called from the blocking pool, as every caller of a blocking store
    /// is: its one thread could not run `work` while waiting.
    fn wait<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = answer.send(work.await);
        });
        let receive = move || {
            answered
                .recv()
                .unwrap_or_else(|_| Err(StoreError::Postgres(PostgresError::writer_stopped())))
        };
        match Handle::try_current().map(|runtime| runtime.runtime_flavor()) {
            Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(receive),
            _ => receive(),
        }
    }
}

impl DocumentStore for PgDocuments {
    fn follow(
        &self,
        name: &str,
    ) -> Result<watch::Receiver<DocumentBytes>, gatehouse_approvals::StoreError> {
        // Followed before it is read, so a change stored meanwhile is read again after.
        let receiver = lock(&self.followed)
            .entry(name.to_owned())
            .or_insert_with(|| (watch::Sender::new(None), -1))
            .0
            .subscribe();
        let pool = self.pool.clone();
        let owned = name.to_owned();
        let (version, bytes) = self.wait(async move { read(&pool, &owned).await })?;
        publish(&self.followed, name, version, bytes);
        Ok(receiver)
    }

    fn update(
        &self,
        name: &str,
        change: DocumentChange<'_>,
    ) -> Result<DocumentBytes, gatehouse_approvals::StoreError> {
        // Read, change on this thread, and store only if no other change came first; else
        // read again and apply the change to that (changes are pure functions of the bytes).
        for _ in 0..MAX_ATTEMPTS {
            let pool = self.pool.clone();
            let owned = name.to_owned();
            let (version, stored) = self.wait(async move { read(&pool, &owned).await })?;
            let Some(next) = change(stored.as_deref()) else {
                publish(&self.followed, name, version, stored.clone());
                return Ok(stored);
            };
            let pool = self.pool.clone();
            let owned = name.to_owned();
            let next: Arc<[u8]> = Arc::from(next);
            let body = Arc::clone(&next);
            let stored = self.wait(async move { write(&pool, &owned, version, &body).await })?;
            if stored {
                publish(&self.followed, name, version + 1, Some(Arc::clone(&next)));
                return Ok(Some(next));
            }
        }
        Err(StoreError::Postgres(PostgresError::contended(name)).into())
    }
}

/// A document's version and bytes; version 0 and no bytes while it has never been written.
async fn read(pool: &Pool, name: &str) -> Result<(i64, DocumentBytes), StoreError> {
    let client = pool.get().await?;
    let rows = client
        .rows(
            "SELECT version, body FROM gatehouse_documents WHERE name = $1",
            &[&name],
        )
        .await?;
    match rows.first() {
        Some(row) => {
            let version: i64 = row.try_get(0)?;
            let body: Option<Vec<u8>> = row.try_get(1)?;
            Ok((version, body.map(Arc::from)))
        }
        None => Ok((0, None)),
    }
}

/// Stores `body` as version `version + 1` if the document is still at `version`, and
/// announces the change in the same statement; false when another change came first.
async fn write(pool: &Pool, name: &str, version: i64, body: &[u8]) -> Result<bool, StoreError> {
    let client = pool.get().await?;
    let rows = client
        .rows(
            "WITH changed AS ( \
                 INSERT INTO gatehouse_documents AS d (name, body, version) VALUES ($1, $2, 1) \
                 ON CONFLICT (name) DO UPDATE SET body = excluded.body, version = d.version + 1 \
                 WHERE d.version = $3 \
                 RETURNING d.version) \
             SELECT pg_notify($4, $1)::text FROM changed",
            &[&name, &body, &version, &DOCUMENTS],
        )
        .await?;
    Ok(!rows.is_empty())
}

/// Hands version `version` of `name` to its followers, unless they hold it or a newer one.
fn publish(followed: &Followed, name: &str, version: i64, bytes: DocumentBytes) {
    if let Some((sender, known)) = lock(followed).get_mut(name)
        && version > *known
    {
        *known = version;
        sender.send_replace(bytes);
    }
}

fn lock(
    followed: &Followed,
) -> std::sync::MutexGuard<'_, HashMap<String, (watch::Sender<DocumentBytes>, i64)>> {
    followed.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads `name` again and hands it to its followers, if it has any.
pub(super) async fn refresh(pool: &Pool, followed: &Followed, name: &str) {
    if !lock(followed).contains_key(name) {
        return;
    }
    match read(pool, name).await {
        Ok((version, bytes)) => publish(followed, name, version, bytes),
        Err(error) => {
            tracing::warn!(%error, document = name, "Could not read a shared document again.")
        }
    }
}

/// Reads every followed document again (after the listener (re)connected: notices sent
/// while it was away are lost).
pub(super) async fn refresh_all(pool: &Pool, followed: &Followed) {
    let names: Vec<String> = lock(followed).keys().cloned().collect();
    for name in names {
        refresh(pool, followed, &name).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_that_finishes_late_never_replaces_a_newer_version() {
        let followed: Followed = Mutex::default();
        let receiver = lock(&followed)
            .entry("doc".to_owned())
            .or_insert_with(|| (watch::Sender::new(None), -1))
            .0
            .subscribe();
        publish(&followed, "doc", 2, Some(Arc::from(&b"two"[..])));
        publish(&followed, "doc", 1, Some(Arc::from(&b"one"[..])));
        assert_eq!(receiver.borrow().as_deref(), Some(&b"two"[..]));
        // The same version read again keeps the copy readers hold (parsed once).
        let held = receiver.borrow().clone().unwrap();
        publish(&followed, "doc", 2, Some(Arc::from(&b"two"[..])));
        assert!(Arc::ptr_eq(&held, receiver.borrow().as_ref().unwrap()));
        // A document nobody follows is not kept.
        publish(&followed, "other", 5, None);
        assert!(!lock(&followed).contains_key("other"));
    }
}
