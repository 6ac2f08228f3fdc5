//! Group commit: one thread owns the write connection and commits every queued operation in one
//! transaction, so one fsync covers the whole batch.
//!
//! Every operation is answered only after `COMMIT` returned: nothing is acknowledged before it
//! is durable. Callers either block on the answer ([`BatchWriter::submit`]) or hand over a
//! [`Completion`] the writer thread calls ([`BatchWriter::submit_then`]). Each operation runs
//! inside a savepoint, so one that fails is rolled back alone and its neighbours commit. Operations run in queue order, so the first
//! answer queued is the first answer applied, exactly as with one transaction per operation.
//!
//! The queue is bounded (a full queue makes callers wait, which is the backpressure) and so is a
//! batch (a batch holds the write lock that other processes sharing the file wait for). A writer
//! that is closed or has died answers every caller with [`StoreError::WriterStopped`], never with
//! silence: the channels report a vanished peer instead of blocking on it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use rusqlite::Connection;

use super::batch_times::{BatchTimes, BatchTimesSnapshot};
use super::checkpoint::LogRestart;
use crate::error::StoreError;

/// Where a queued operation's result goes: called once, on the writer thread.
pub(super) type Completion<T> = Box<dyn FnOnce(Result<T, StoreError>) + Send>;

/// How much the writer takes on at once.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchLimits {
    /// Most operations in one transaction.
    pub(super) max_batch: usize,
    /// Most operations waiting for the writer; callers beyond it wait to enqueue.
    pub(super) queue_capacity: usize,
}

/// The handle callers submit through; dropping it drains the queue and stops the thread.
#[derive(Debug)]
pub(super) struct BatchWriter {
    /// How long each batch took, for `GET /metrics`.
    times: Arc<BatchTimes>,
    queue: Mutex<Option<SyncSender<Box<dyn Job>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    path: Arc<Path>,
}

impl BatchWriter {
    /// Starts the writer thread on `conn`, which it locks for the length of each batch;
    /// between batches it acts on the checkpointer's `restart` requests.
    pub(super) fn start(
        conn: Arc<Mutex<Connection>>,
        path: PathBuf,
        limits: BatchLimits,
        restart: Arc<LogRestart>,
    ) -> Result<Self, StoreError> {
        let (queue, jobs) = mpsc::sync_channel(limits.queue_capacity.max(1));
        let max_batch = limits.max_batch.max(1);
        let times = Arc::new(BatchTimes::default());
        let counted = Arc::clone(&times);
        let thread = std::thread::Builder::new()
            .name("approvals-writer".to_owned())
            .spawn(move || write_batches(&conn, &jobs, max_batch, &restart, &counted))
            .map_err(|e| StoreError::io(&path, "start approvals writer", e))?;
        Ok(BatchWriter {
            times,
            queue: Mutex::new(Some(queue)),
            thread: Mutex::new(Some(thread)),
            path: path.into(),
        })
    }

    /// How long the batches have taken so far.
    pub(super) fn batch_times(&self) -> BatchTimesSnapshot {
        self.times.snapshot()
    }

    /// Runs `op` in the next batch and returns its result once the batch is committed.
    pub(super) fn submit<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (job, answer) = queued(op, Arc::clone(&self.path));
        self.enqueue(job);
        answer.recv().map_err(|_| self.stopped())?
    }

    /// Queues `op` for the next batch and returns at once; the writer thread calls `done` with
    /// its result once the batch is committed. Blocks only while the queue is full.
    pub(super) fn submit_then<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        done: Completion<T>,
    ) {
        self.enqueue(Box::new(Queued {
            op: Some(op),
            result: None,
            reply: Some(done),
            path: Arc::clone(&self.path),
        }));
    }

    /// Hands `job` to the writer. A job that cannot be handed over is dropped, and dropping an
    /// unanswered job answers it with [`StoreError::WriterStopped`].
    fn enqueue(&self, job: Box<dyn Job>) {
        let queue = lock(&self.queue).clone();
        if let Some(queue) = queue {
            // A failed send hands the job back; dropping it answers it.
            drop(queue.send(job));
        }
    }

    /// Refuses new operations, lets the writer commit everything already queued, and waits
    /// for its thread to end. Later submissions fail with [`StoreError::WriterStopped`].
    /// Called on the writer's own thread (a completion dropped the last handle on the store),
    /// it does not wait for itself: the thread ends once it has answered what it holds.
    pub(super) fn close(&self) {
        drop(lock(&self.queue).take());
        let thread = lock(&self.thread).take();
        if let Some(thread) = thread
            && thread.thread().id() != std::thread::current().id()
        {
            // A writer that panicked has already failed its callers (their replies dropped);
            // there is nothing left to report here.
            let _ = thread.join();
        }
    }

    fn stopped(&self) -> StoreError {
        StoreError::WriterStopped {
            path: self.path.to_path_buf(),
        }
    }
}

impl Drop for BatchWriter {
    fn drop(&mut self) {
        self.close();
    }
}

/// A queued operation with its result type erased, so one queue carries every kind.
trait Job: Send {
    /// Runs the operation on the open transaction; `false` when it failed, so its changes
    /// must be rolled back to the savepoint.
    fn run(&mut self, conn: &Connection) -> bool;

    /// Answers the caller: its own error if it failed, the batch's error if the batch did not
    /// commit, its result otherwise.
    fn reply(self: Box<Self>, batch: Result<(), &rusqlite::Error>);
}

/// `op` as a job, and where its answer will arrive.
fn queued<T: Send + 'static>(
    op: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    path: Arc<Path>,
) -> (Box<dyn Job>, Receiver<Result<T, StoreError>>) {
    let (reply, answer) = mpsc::sync_channel(1);
    let done: Completion<T> = Box::new(move |result| {
        // The caller blocks on this reply until it arrives, so it is still there.
        let _ = reply.send(result);
    });
    let job = Queued {
        op: Some(op),
        result: None,
        reply: Some(done),
        path,
    };
    (Box::new(job), answer)
}

struct Queued<T, F> {
    op: Option<F>,
    result: Option<Result<T, StoreError>>,
    /// Taken when answered; a job dropped unanswered answers [`StoreError::WriterStopped`].
    reply: Option<Completion<T>>,
    path: Arc<Path>,
}

impl<T, F> Drop for Queued<T, F> {
    fn drop(&mut self) {
        if let Some(reply) = self.reply.take() {
            reply(Err(StoreError::WriterStopped {
                path: self.path.to_path_buf(),
            }));
        }
    }
}

impl<T, F> Job for Queued<T, F>
where
    T: Send,
    F: FnOnce(&Connection) -> Result<T, StoreError> + Send,
{
    fn run(&mut self, conn: &Connection) -> bool {
        let Some(op) = self.op.take() else {
            return true;
        };
        let result = op(conn);
        let succeeded = result.is_ok();
        self.result = Some(result);
        succeeded
    }

    fn reply(mut self: Box<Self>, batch: Result<(), &rusqlite::Error>) {
        let answer = match (self.result.take(), batch) {
            (Some(Err(own)), _) => Err(own),
            (_, Err(batch)) => Err(replicate(batch).into()),
            (Some(Ok(value)), Ok(())) => Ok(value),
            // Not run although the batch committed: the writer's loop rules this out, and the
            // caller still gets an answer rather than a wait.
            (None, Ok(())) => Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERNAL),
                Some("operation was not run".to_owned()),
            )
            .into()),
        };
        if let Some(reply) = self.reply.take() {
            reply(answer);
        }
    }
}

/// The writer thread: takes what is queued (at least one operation, at most `max_batch`),
/// commits it as one transaction, answers, and repeats until every submitter is gone. After
/// answering, it finishes a checkpoint if one is due (see `checkpoint`), so the next batch
/// starts the log afresh.
fn write_batches(
    conn: &Mutex<Connection>,
    jobs: &Receiver<Box<dyn Job>>,
    max_batch: usize,
    restart: &LogRestart,
    times: &BatchTimes,
) {
    let mut batch: Vec<Box<dyn Job>> = Vec::with_capacity(max_batch);
    while let Ok(first) = jobs.recv() {
        batch.push(first);
        batch.extend(jobs.try_iter().take(max_batch - 1));
        let conn = lock(conn);
        let began = Instant::now();
        let committed = commit_batch(&conn, &mut batch);
        times.record(began.elapsed(), batch.len());
        for job in batch.drain(..) {
            job.reply(committed.as_ref().map(|_| ()));
        }
        restart.run_if_due(&conn);
    }
}

/// One `BEGIN IMMEDIATE … COMMIT` around every job, each in a savepoint of its own.
fn commit_batch(conn: &Connection, batch: &mut [Box<dyn Job>]) -> Result<(), rusqlite::Error> {
    // A transaction left open by an earlier failure would make every later BEGIN fail.
    if !conn.is_autocommit() {
        conn.execute_batch("ROLLBACK")?;
    }
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let result = batch
        .iter_mut()
        .try_for_each(|job| run_isolated(conn, job.as_mut()))
        .and_then(|()| conn.prepare_cached("COMMIT")?.execute([]).map(drop));
    if result.is_err() && !conn.is_autocommit() {
        // The batch error is what callers need; a failed rollback is retried before the next
        // batch begins.
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

fn run_isolated(conn: &Connection, job: &mut dyn Job) -> Result<(), rusqlite::Error> {
    conn.prepare_cached("SAVEPOINT op")?.execute([])?;
    if !job.run(conn) {
        if conn.is_autocommit() {
            // Some errors (disk full, I/O) make SQLite roll back the whole transaction: the
            // operations before this one are gone too, so the batch as a whole has failed.
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
                Some("an operation's error rolled back the whole batch".to_owned()),
            ));
        }
        conn.prepare_cached("ROLLBACK TO op")?.execute([])?;
    }
    conn.prepare_cached("RELEASE op")?.execute([]).map(drop)
}

/// The batch error, once per caller: `rusqlite::Error` is not `Clone`, but its SQLite code and
/// message are what a caller can act on.
fn replicate(error: &rusqlite::Error) -> rusqlite::Error {
    match error {
        rusqlite::Error::SqliteFailure(code, message) => {
            rusqlite::Error::SqliteFailure(*code, message.clone())
        }
        other => rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
            Some(other.to_string()),
        ),
    }
}

/// A panic while a guard was held cannot leave a transaction open on the connection (the next
/// batch rolls back first), and a queue handle has no invariant to break, so poison is ignored.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

#[cfg(test)]
mod tests;
