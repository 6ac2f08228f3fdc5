//! Where reads run: read-only connections of their own, so a read never queues behind the
//! writer's batch or its fsync.
//!
//! Under WAL a reader sees the last commit that finished before its read began. The writer
//! answers a caller only after `COMMIT` returned, so a caller always reads its own writes.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::writer::lock;
use crate::error::StoreError;

/// The connections reads use.
#[derive(Debug)]
pub(super) enum Readers {
    /// Read-only connections to the file, tried in turn.
    Pool {
        /// The connections; a read takes the first one that is free.
        conns: Vec<Mutex<Connection>>,
        /// Where the next read starts looking, so reads spread over the pool.
        next: AtomicUsize,
    },
    /// The writer's own connection: an in-memory database exists only inside the connection
    /// that created it, so reads wait for the batch in progress (no fsync there).
    Shared(Arc<Mutex<Connection>>),
}

impl Readers {
    /// Opens `count` read-only connections to the WAL database at `path`.
    pub(super) fn open(
        path: &Path,
        count: usize,
        busy_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let conns = (0..count.max(1))
            .map(|_| {
                let conn = Connection::open_with_flags(
                    path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                conn.busy_timeout(busy_timeout)?;
                Ok(Mutex::new(conn))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Readers::Pool {
            conns,
            next: AtomicUsize::new(0),
        })
    }

    /// Runs `read` in one read transaction, so every query in it sees the same snapshot (a
    /// record and its messages, or a whole list).
    pub(super) fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.checkout();
        if !conn.is_autocommit() {
            // Only a shared connection whose writer died mid-batch is left in a transaction;
            // what it held was never committed.
            conn.execute_batch("ROLLBACK")?;
        }
        let tx = conn.transaction()?;
        let value = read(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    fn checkout(&self) -> MutexGuard<'_, Connection> {
        match self {
            Readers::Shared(conn) => lock(conn),
            Readers::Pool { conns, next } => {
                let start = next.fetch_add(1, Ordering::Relaxed);
                for offset in 0..conns.len() {
                    let Some(conn) = conns.get((start + offset) % conns.len()) else {
                        continue;
                    };
                    match conn.try_lock() {
                        Ok(guard) => return guard,
                        Err(TryLockError::Poisoned(poison)) => return poison.into_inner(),
                        Err(TryLockError::WouldBlock) => {}
                    }
                }
                // Every connection is busy: wait for the one this read was assigned.
                lock(&conns[start % conns.len()])
            }
        }
    }
}
