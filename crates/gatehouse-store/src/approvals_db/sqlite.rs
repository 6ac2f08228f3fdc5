//! `gatehouse-approvals`' [`ApprovalStore`] on an embedded SQLite database.
//!
//! WAL journal with `synchronous=FULL`: a committed answer survives a crash or power loss before
//! anyone is told about it. Writes go through one writer thread that commits whatever is queued
//! as one transaction ([group commit](super::writer)), so concurrent callers share an fsync
//! instead of each waiting for their own; reads use read-only connections of their own. The log
//! is copied into the database by a thread of its own ([checkpoints](super::checkpoint)), not in
//! the commits. Each
//! state change is still one `UPDATE ... WHERE state = 'pending'`, so concurrent resolvers
//! (threads, or processes sharing the file) get exactly one winner.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalStore, ChatOutbox, Completion, ConsumeOutcome, DeliveredMessage,
    GrantStore, ListFilter, NewApproval, OutboxEntry, OutboxMessage, OutboxStep, Reading,
    Resolution, ResolveOutcome, StepOutcome, StoreError as ApprovalsStoreError, StoredGrant,
    Writing,
};
use rusqlite::{Connection, OpenFlags};

use super::batch_times::BatchTimesSnapshot;
use super::checkpoint::{CheckpointSchedule, Checkpointer, LogRestart};
use super::readers::Readers;
use super::writer::{BatchLimits, BatchWriter};
use super::{outbox, rows, schema, tools, write_ops};
use crate::durable_fs::open_private;
use crate::error::StoreError;

/// Options for [`SqliteApprovalStore::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long a writer waits for another connection's transaction before failing.
    pub busy_timeout: Duration,
    /// Most operations committed in one transaction. A batch holds SQLite's write lock, which
    /// other processes sharing the file wait for; `1` gives one fsync per operation. At least 1.
    pub max_batch: usize,
    /// Most operations waiting for the writer; beyond it callers wait to enqueue. At least 1.
    pub queue_capacity: usize,
    /// Read-only connections for `get`, `find_by_prefix` and `list`. At least 1.
    pub readers: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            max_batch: 256,
            queue_capacity: 4096,
            readers: 4,
        }
    }
}

/// The SQLite approval store: one writer thread committing in batches, and a pool of read
/// connections. Open several stores on the same file for parallelism across processes.
#[derive(Debug)]
pub struct SqliteApprovalStore {
    // Declared first so it is dropped first: queued writes commit before the readers close.
    writer: BatchWriter,
    /// `None` for an in-memory database, which has no log.
    checkpointer: Option<Checkpointer>,
    /// Shared with the reads in flight on the blocking pool.
    readers: Arc<Readers>,
    path: PathBuf,
}

impl SqliteApprovalStore {
    /// Opens (creating when missing, mode 0600) and migrates the database at `path`.
    pub fn open(path: impl Into<PathBuf>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.into();
        // Create the file ourselves so it is 0600 from its first byte; SQLite gives the -wal and
        // -shm files the database file's mode.
        drop(open_private(&path)?);
        let conn = Connection::open(&path)?;
        conn.busy_timeout(options.busy_timeout)?;
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::io(
                &path,
                "enable WAL",
                std::io::Error::other(format!("journal_mode is {mode}")),
            ));
        }
        conn.pragma_update(None, "synchronous", "FULL")?;
        // The checkpointer's thread does this instead (see `checkpoint`).
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let conn = Arc::new(Mutex::new(prepare_writer(conn)?));
        // After the migration, so the readers see the current schema.
        let readers = Readers::open(&path, options.readers, options.busy_timeout)?;
        let restart = Arc::new(LogRestart::default());
        let checkpointer =
            Checkpointer::start(&path, Arc::clone(&restart), CheckpointSchedule::default())?;
        Self::start(conn, readers, Some(checkpointer), restart, path, options)
    }

    /// Finds what [`SqliteApprovalStore::open`] would refuse in the database at `path` (a file
    /// that is not a database, a schema newer than this build) without writing anything, and
    /// returns its schema version (0 when it does not exist yet): for a check of a data
    /// directory (`gatehouse doctor`) before or while a gateway uses it. While the database has
    /// no `-wal` log (no gateway has it open) it is read as immutable, so no `-wal` or `-shm`
    /// file is created beside it; otherwise it is read as a gateway's readers read it.
    pub fn check(path: &Path) -> Result<i64, StoreError> {
        if !path
            .try_exists()
            .map_err(|e| StoreError::io(path, "stat", e))?
        {
            return Ok(0);
        }
        let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match immutable_uri(path) {
            Some(uri) if !wal_path(path).exists() => {
                Connection::open_with_flags(uri, read_only | OpenFlags::SQLITE_OPEN_URI)?
            }
            _ => Connection::open_with_flags(path, read_only)?,
        };
        schema::schema_version(&conn)
    }

    /// A private database that lives and dies with this value: the real store, without a file,
    /// for tests of the crates above and for `--ephemeral` runs.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let conn = Arc::new(Mutex::new(prepare_writer(Connection::open_in_memory()?)?));
        let readers = Readers::Shared(Arc::clone(&conn));
        Self::start(
            conn,
            readers,
            None,
            Arc::default(),
            PathBuf::from(":memory:"),
            SqliteOptions::default(),
        )
    }

    fn start(
        conn: Arc<Mutex<Connection>>,
        readers: Readers,
        checkpointer: Option<Checkpointer>,
        restart: Arc<LogRestart>,
        path: PathBuf,
        options: SqliteOptions,
    ) -> Result<Self, StoreError> {
        let limits = BatchLimits {
            max_batch: options.max_batch,
            queue_capacity: options.queue_capacity,
        };
        Ok(SqliteApprovalStore {
            writer: BatchWriter::start(conn, path.clone(), limits, restart)?,
            checkpointer,
            readers: Arc::new(readers),
            path,
        })
    }

    /// How long the writer's batches have taken since the store opened; the fsync in each is
    /// what every decision waits for, so this is where a slow disk shows.
    pub fn batch_times(&self) -> BatchTimesSnapshot {
        self.writer.batch_times()
    }

    /// The database file (`:memory:` for [`SqliteApprovalStore::open_in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs SQLite's own consistency check; `ok` means the file is sound.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.readers
            .read(|conn| Ok(conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))?))
    }

    /// Commits every write already queued, then refuses further writes with
    /// [`StoreError::WriterStopped`]; reads keep working. For a graceful shutdown, so nothing
    /// acknowledged is left behind in the queue. Dropping the store does the same.
    pub fn close(&self) {
        self.writer.close();
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.stop();
        }
    }
}

/// The database's write-ahead log, beside it.
fn wal_path(path: &Path) -> PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

/// `file:PATH?immutable=1`, with the characters a URI gives meaning escaped; `None` for a path
/// that is not UTF-8 or that would read as a URI's authority (`//host/…`), which is then opened
/// by name.
fn immutable_uri(path: &Path) -> Option<String> {
    let text = path.to_str().filter(|text| !text.starts_with("//"))?;
    let escaped = text
        .replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23");
    Some(format!("file:{escaped}?immutable=1"))
}

fn prepare_writer(mut conn: Connection) -> Result<Connection, StoreError> {
    conn.pragma_update(None, "foreign_keys", true)?;
    schema::migrate(&mut conn)?;
    Ok(conn)
}

/// The same operations, blocking until each is done: for tests and one-shot tools that are not
/// async. A running gateway goes through [`ApprovalStore`], which holds no thread while a write
/// commits.
impl SqliteApprovalStore {
    /// [`ApprovalStore::insert`], waiting for the commit.
    pub fn insert(&self, approval: &NewApproval) -> Result<ApprovalRecord, StoreError> {
        let approval = approval.clone();
        self.writer
            .submit(move |conn| write_ops::insert(conn, approval))
    }

    /// [`ApprovalStore::resolve`], waiting for the commit.
    pub fn resolve(
        &self,
        id: &str,
        resolution: &Resolution,
        at_ms: u64,
    ) -> Result<ResolveOutcome, StoreError> {
        let (id, resolution) = (id.to_owned(), resolution.clone());
        self.writer
            .submit(move |conn| write_ops::resolve(conn, &id, &resolution, at_ms))
    }

    /// [`ApprovalStore::consume_allow_once`], waiting for the commit.
    pub fn consume_allow_once(&self, id: &str, at_ms: u64) -> Result<ConsumeOutcome, StoreError> {
        let id = id.to_owned();
        self.writer
            .submit(move |conn| write_ops::consume_allow_once(conn, &id, at_ms))
    }

    /// [`ApprovalStore::record_delivery`], waiting for the commit.
    pub fn record_delivery(&self, id: &str, message: &DeliveredMessage) -> Result<(), StoreError> {
        let (id, message) = (id.to_owned(), message.clone());
        self.writer
            .submit(move |conn| write_ops::record_delivery(conn, &id, &message))
    }

    /// [`ApprovalStore::cancel_all_pending`], waiting for the commit.
    pub fn cancel_all_pending(
        &self,
        reason: &str,
        at_ms: u64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let reason = reason.to_owned();
        self.writer
            .submit(move |conn| write_ops::cancel_all_pending(conn, &reason, at_ms))
    }

    /// [`ApprovalStore::prune_terminal_before`], waiting for the commit.
    pub fn prune_terminal_before(
        &self,
        cutoff_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        self.writer
            .submit(move |conn| write_ops::prune_terminal_before(conn, cutoff_ms, limit))
    }

    /// [`ApprovalStore::get`], on the calling thread.
    pub fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        self.readers.read(|conn| rows::fetch(conn, id))
    }

    /// [`ApprovalStore::find_by_prefix`], on the calling thread.
    pub fn find_by_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.readers
            .read(|conn| rows::find_by_prefix(conn, prefix, limit))
    }

    /// [`ApprovalStore::short_ids`], on the calling thread.
    pub fn short_ids(&self) -> Result<Vec<u32>, StoreError> {
        self.readers.read(rows::short_ids)
    }

    /// [`ApprovalStore::list`], on the calling thread.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.readers.read(|conn| rows::list(conn, filter))
    }

    /// [`GrantStore::revoke_grant`], waiting for the commit.
    pub fn revoke_grant(&self, id: &str) -> Result<Option<StoredGrant>, StoreError> {
        let id = id.to_owned();
        self.writer
            .submit(move |conn| tools::revoke_grant(conn, &id))
    }

    /// [`GrantStore::grants`], on the calling thread.
    pub fn grants(&self) -> Result<Vec<StoredGrant>, StoreError> {
        self.readers.read(tools::grants)
    }

    /// Queues `op` on the writer; `done` hears its result as the approval manager's error.
    fn submit<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        done: Completion<T>,
    ) {
        self.writer
            .submit_then(op, Box::new(move |result| done(result.map_err(Into::into))));
    }

    /// Queues `op` on the writer and resolves once its batch committed, for callers that wait
    /// for the write anyway (the chat outbox).
    fn writing<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Writing<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.writer.submit_then(
            op,
            Box::new(move |result| {
                // The caller may have stopped waiting; the write stands either way.
                let _ = answer.send(result);
            }),
        );
        Box::pin(async move {
            match answered.await {
                Ok(result) => result.map_err(Into::into),
                // The writer answers every job, so this only happens if it panicked.
                Err(error) => Err(ApprovalsStoreError::Backend(Box::new(error))),
            }
        })
    }

    /// Runs `read` on a read connection from tokio's blocking pool, so it holds no async thread.
    fn reading<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Reading<T> {
        let readers = Arc::clone(&self.readers);
        Box::pin(async move {
            match tokio::task::spawn_blocking(move || readers.read(read)).await {
                Ok(result) => result.map_err(Into::into),
                Err(error) => Err(ApprovalsStoreError::Backend(Box::new(error))),
            }
        })
    }
}

impl ApprovalStore for SqliteApprovalStore {
    fn insert(&self, approval: NewApproval, done: Completion<ApprovalRecord>) {
        self.submit(move |conn| write_ops::insert(conn, approval), done);
    }

    fn resolve(
        &self,
        id: String,
        resolution: Resolution,
        at_ms: u64,
        done: Completion<ResolveOutcome>,
    ) {
        self.submit(
            move |conn| write_ops::resolve(conn, &id, &resolution, at_ms),
            done,
        );
    }

    fn consume_allow_once(&self, id: String, at_ms: u64, done: Completion<ConsumeOutcome>) {
        self.submit(
            move |conn| write_ops::consume_allow_once(conn, &id, at_ms),
            done,
        );
    }

    fn record_delivery(&self, id: String, message: DeliveredMessage, done: Completion<()>) {
        self.submit(
            move |conn| write_ops::record_delivery(conn, &id, &message),
            done,
        );
    }

    fn cancel_all_pending(
        &self,
        reason: String,
        at_ms: u64,
        done: Completion<Vec<ApprovalRecord>>,
    ) {
        self.submit(
            move |conn| write_ops::cancel_all_pending(conn, &reason, at_ms),
            done,
        );
    }

    fn prune_terminal_before(&self, cutoff_ms: u64, limit: usize, done: Completion<Vec<String>>) {
        self.submit(
            move |conn| write_ops::prune_terminal_before(conn, cutoff_ms, limit),
            done,
        );
    }

    fn after_submitted_writes(&self, done: Completion<()>) {
        // Jobs run in queue order and answer after their batch commits; this one writes nothing,
        // so a batch holding only it commits without a sync.
        self.submit(|_| Ok(()), done);
    }

    fn get(&self, id: String) -> Reading<Option<ApprovalRecord>> {
        self.reading(move |conn| rows::fetch(conn, &id))
    }

    fn find_by_prefix(&self, prefix: String, limit: usize) -> Reading<Vec<ApprovalRecord>> {
        self.reading(move |conn| rows::find_by_prefix(conn, &prefix, limit))
    }

    fn short_ids(&self) -> Reading<Vec<u32>> {
        self.reading(rows::short_ids)
    }

    fn list(&self, filter: ListFilter) -> Reading<Vec<ApprovalRecord>> {
        self.reading(move |conn| rows::list(conn, &filter))
    }
}

/// The chat outbox in the same database as the approvals it shows, so a message goes with its
/// approval when history is pruned.
impl ChatOutbox for SqliteApprovalStore {
    fn plan_messages(&self, messages: Vec<OutboxMessage>, at_ms: u64) -> Writing<()> {
        self.writing(move |conn| outbox::plan(conn, &messages, at_ms))
    }

    fn record_step(&self, key: String, step: OutboxStep, at_ms: u64) -> Writing<StepOutcome> {
        self.writing(move |conn| outbox::record(conn, &key, &step, at_ms))
    }

    fn open_messages(&self) -> Reading<Vec<OutboxEntry>> {
        self.reading(outbox::open)
    }

    fn troubled_messages(&self, lost_since_ms: u64, limit: usize) -> Reading<Vec<OutboxEntry>> {
        self.reading(move |conn| outbox::troubled(conn, lost_since_ms, limit))
    }
}

impl GrantStore for SqliteApprovalStore {
    fn revoke_grant(&self, id: String, done: Completion<Option<StoredGrant>>) {
        self.submit(move |conn| tools::revoke_grant(conn, &id), done);
    }

    fn grants(&self) -> Reading<Vec<StoredGrant>> {
        self.reading(tools::grants)
    }
}
