//! WAL checkpoints off the commit path.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that crosses its threshold: that
//! commit, and every write queued behind it, waits while the log's pages are copied into the
//! database file and the file is fsynced (2–9 ms on a virtual disk, against 0.2–0.4 ms for a
//! commit). Here a thread of its own copies the pages with `PASSIVE` checkpoints on its own
//! connection, which never block the writer.
//!
//! A `PASSIVE` checkpoint cannot *restart* the log, though: the writer's commits keep landing
//! behind it, and SQLite starts the log afresh only when a transaction begins with every frame
//! already copied. Left alone the log would grow without end, and every commit that extends
//! the file pays for a metadata flush too. So once the log holds `restart_after` frames, the
//! checkpointer asks the writer ([`LogRestart`]) to copy, between two batches and on its own
//! connection, the few frames committed since the checkpointer's last pass; the writer's next
//! transaction then starts the log afresh.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::writer::lock;
use crate::error::StoreError;

/// When the checkpointer works.
#[derive(Debug, Clone, Copy)]
pub(super) struct CheckpointSchedule {
    /// How often it copies the log into the database.
    pub(super) every: Duration,
    /// How many frames the log may hold before the writer is asked to restart it.
    pub(super) restart_after: i64,
}

impl Default for CheckpointSchedule {
    fn default() -> Self {
        CheckpointSchedule {
            every: Duration::from_millis(20),
            restart_after: 4_000,
        }
    }
}

/// The checkpointer's request to the writer: finish a checkpoint so the log can restart.
#[derive(Debug, Default)]
pub(super) struct LogRestart {
    due: AtomicBool,
}

impl LogRestart {
    /// Called by the writer between batches, on its own connection: copies what the last pass
    /// left, if a restart is due. The request stands until a pass copies every frame (one may
    /// fail, or find the checkpointer's own pass still running), so the next gap retries.
    pub(super) fn run_if_due(&self, writer: &Connection) {
        if self.due.load(Ordering::Acquire)
            && passive_checkpoint(writer).is_ok_and(|pass| pass.copied_all())
        {
            self.due.store(false, Ordering::Release);
        }
    }

    fn request(&self) {
        self.due.store(true, Ordering::Release);
    }

    fn is_due(&self) -> bool {
        self.due.load(Ordering::Acquire)
    }
}

/// The checkpoint thread; dropping it stops the thread.
#[derive(Debug)]
pub(super) struct Checkpointer {
    stop: Mutex<Option<SyncSender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Checkpointer {
    /// Opens a connection of its own on `path` and checkpoints on `schedule`, asking the writer
    /// through `restart` when the log should start afresh.
    pub(super) fn start(
        path: &Path,
        restart: Arc<LogRestart>,
        schedule: CheckpointSchedule,
    ) -> Result<Self, StoreError> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let (stop, stopped) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("approvals-checkpoint".to_owned())
            .spawn(move || checkpoint_until_stopped(&conn, &restart, &stopped, schedule))
            .map_err(|e| StoreError::io(path, "start the checkpoint thread", e))?;
        Ok(Checkpointer {
            stop: Mutex::new(Some(stop)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Stops the thread and waits for it; a pass under way finishes first.
    pub(super) fn stop(&self) {
        drop(lock(&self.stop).take());
        if let Some(thread) = lock(&self.thread).take() {
            // A checkpointer that panicked left nothing to clean up: the next pass, or SQLite
            // when the last connection closes, copies what it did not.
            let _ = thread.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn checkpoint_until_stopped(
    conn: &Connection,
    restart: &LogRestart,
    stopped: &Receiver<()>,
    schedule: CheckpointSchedule,
) {
    let mut failing = false;
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(schedule.every) {
        match checkpoint_once(conn, restart, schedule.restart_after) {
            Ok(_) if failing => {
                failing = false;
                tracing::info!("Approvals database checkpoints work again.");
            }
            Ok(_) => {}
            Err(error) if !failing => {
                failing = true;
                tracing::warn!(%error, "Approvals database checkpoint failed; the log grows until one succeeds.");
            }
            Err(_) => {}
        }
    }
}

/// One pass of the checkpointer: none while the writer owes a restart (a pass would only hold
/// the lock the writer needs), and a request for one once the log holds `restart_after`
/// frames. `None` when skipped.
fn checkpoint_once(
    conn: &Connection,
    restart: &LogRestart,
    restart_after: i64,
) -> rusqlite::Result<Option<Pass>> {
    if restart.is_due() {
        return Ok(None);
    }
    let pass = passive_checkpoint(conn)?;
    if pass.log_frames >= restart_after {
        restart.request();
    }
    Ok(Some(pass))
}

/// What one checkpoint pass reports.
struct Pass {
    /// Another checkpoint held the lock, so this one did nothing.
    busy: bool,
    /// Frames in the log.
    log_frames: i64,
    /// Frames of the log now in the database.
    copied_frames: i64,
}

impl Pass {
    fn copied_all(&self) -> bool {
        !self.busy && self.log_frames == self.copied_frames
    }
}

/// Copies what it can of the log into the database without waiting for anyone.
fn passive_checkpoint(conn: &Connection) -> rusqlite::Result<Pass> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok(Pass {
            busy: row.get::<_, i64>(0)? != 0,
            log_frames: row.get(1)?,
            copied_frames: row.get(2)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL database without automatic checkpoints, as the store opens it.
    fn wal_database(path: &Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .unwrap();
        conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS pages (body BLOB)")
            .unwrap();
        conn
    }

    /// Writes `rows` rows of about a page each, one transaction each; returns the log's size.
    fn write_rows(path: &Path, conn: &Connection, rows: usize) -> u64 {
        for _ in 0..rows {
            conn.execute("INSERT INTO pages VALUES (zeroblob(3000))", [])
                .unwrap();
        }
        std::fs::metadata(path.with_extension("sqlite-wal"))
            .unwrap()
            .len()
    }

    #[test]
    fn asks_the_writer_to_restart_a_long_log_and_leaves_the_lock_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let writer = wal_database(&path);
        let checkpointer = Connection::open(&path).unwrap();
        let restart = LogRestart::default();
        write_rows(&path, &writer, 10);
        let short = checkpoint_once(&checkpointer, &restart, 64).unwrap();
        assert!(short.is_some_and(|pass| pass.copied_all()));
        assert!(!restart.is_due(), "a short log needs no restart");

        write_rows(&path, &writer, 100);
        let long = checkpoint_once(&checkpointer, &restart, 64).unwrap();
        assert!(long.is_some_and(|pass| pass.log_frames >= 64));
        assert!(restart.is_due());
        let skipped = checkpoint_once(&checkpointer, &restart, 64).unwrap();
        assert!(skipped.is_none(), "no pass while the writer owes one");
    }

    /// A database whose writer has left 100 pages in the log; with the log's size.
    fn long_log() -> (tempfile::TempDir, std::path::PathBuf, Connection, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let writer = wal_database(&path);
        let size = write_rows(&path, &writer, 100);
        (dir, path, writer, size)
    }

    #[test]
    fn the_writer_restarts_the_log_once_it_finishes_a_due_copy() {
        let (_dir, path, writer, long) = long_log();
        let restart = LogRestart::default();
        restart.request();
        restart.run_if_due(&writer);
        assert!(
            !restart.is_due(),
            "the copy finished, so the request is done"
        );
        // The next transactions start the log afresh, over the frames already copied.
        assert_eq!(write_rows(&path, &writer, 50), long);
    }

    #[test]
    fn without_a_due_copy_the_log_keeps_growing() {
        let (_dir, path, writer, long) = long_log();
        let restart = LogRestart::default();
        restart.run_if_due(&writer);
        assert!(write_rows(&path, &writer, 50) > long);
    }

    #[test]
    fn the_thread_stops_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let _writer = wal_database(&path);
        let schedule = CheckpointSchedule {
            every: Duration::from_millis(1),
            restart_after: 32,
        };
        let checkpointer = Checkpointer::start(&path, Arc::default(), schedule).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        checkpointer.stop();
        checkpointer.stop();
    }
}
