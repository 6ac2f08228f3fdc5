//! The one error type of this crate.
//!
//! Variants carry the path, position or approval id as data so callers can map them to exit codes
//! or RPC errors without parsing messages.

use std::path::PathBuf;

/// Everything that can go wrong reading or writing Gatehouse's persistent state.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not valid JSON, or a field has a shape the format does not allow.
    #[error("{path}:{line}:{column}: {message}", path = path.display())]
    Parse {
        /// The file that failed to parse (`<input>` for in-memory text).
        path: PathBuf,
        /// One-based line of the error.
        line: usize,
        /// One-based column of the error.
        column: usize,
        /// What the parser expected, in its own words.
        message: String,
    },

    /// The file declares a format version this build does not understand.
    #[error("{path}: unsupported exec-approvals version {found} (expected 1)", path = path.display())]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The `version` value as written, or `missing`.
        found: String,
    },

    /// The file changed since the caller read it; the write was not made.
    #[error("{path}: file changed since it was read (base hash {expected}, now {actual})", path = path.display())]
    Conflict {
        /// The file.
        path: PathBuf,
        /// The `baseHash` the caller passed.
        expected: String,
        /// The hash of the bytes on disk now.
        actual: String,
    },

    /// The destination is a symlink or not a regular file; writing through it could redirect
    /// the write to a file the operator did not choose.
    #[error("{path}: refusing to write through a symlink or non-regular file", path = path.display())]
    UnsafeDestination {
        /// The refused path.
        path: PathBuf,
    },

    /// An operating-system call failed.
    #[error("{path}: {op}: {source}", path = path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What was being done (`read`, `rename`, `fsync directory`, ...).
        op: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The approvals database reported an error.
    #[error("approvals database: {0}")]
    Database(DatabaseError),

    /// The PostgreSQL server, or the connection to it, reported an error.
    #[error("approvals database (PostgreSQL): {0}")]
    Postgres(PostgresError),

    /// The shared documents' store (the database replicas share) failed.
    #[error("shared state: {0}")]
    Shared(gatehouse_approvals::StoreError),

    /// The approvals database's URL or TLS settings cannot be used.
    #[error("approvals database URL: {0}")]
    PostgresConfig(String),

    /// The database was written by a newer Gatehouse; opening it could corrupt it.
    #[error(
        "approvals database schema version {found} is newer than supported version {supported}"
    )]
    SchemaTooNew {
        /// `PRAGMA user_version` of the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },

    /// A migration that replicas of the previous build cannot run across is due, and other
    /// gateways are still connected to the database.
    #[error(
        "cannot apply migration {migration} ({brings}) while other gateways use the approvals \
         database ({connected}): replicas of the previous build would go on writing without \
         it. Stop every replica, then start the upgraded ones (docs/high-availability.md, \
         \"Backups and upgrades\")",
        connected = connected.join("; ")
    )]
    ReplicasStillConnected {
        /// The migration's number.
        migration: i64,
        /// What it brings.
        brings: &'static str,
        /// The other gateways' connections: address and since when.
        connected: Vec<String>,
    },

    /// A stored row holds a value this build cannot interpret; it is refused, never guessed.
    #[error("approval {approval_id}: corrupt column {column}: {detail}")]
    CorruptRow {
        /// The row's id.
        approval_id: String,
        /// The column that failed to decode.
        column: &'static str,
        /// Why it failed.
        detail: String,
    },

    /// An approval with this id already exists.
    #[error("approval {approval_id} already exists")]
    DuplicateId {
        /// The refused id.
        approval_id: String,
    },

    /// Another approval holds this id's short id (the PostgreSQL store's unique constraint).
    #[error("the short id of approval {approval_id} is in use")]
    ShortIdInUse {
        /// The refused id.
        approval_id: String,
    },

    /// No approval has this id.
    #[error("approval {approval_id} not found")]
    NotFound {
        /// The id that was looked up.
        approval_id: String,
    },

    /// The approvals database's writer thread was closed or has died; the write was not
    /// acknowledged, and if it was queued when the writer died its outcome is unknown.
    #[error("{path}: approvals database writer has stopped", path = path.display())]
    WriterStopped {
        /// The database file.
        path: PathBuf,
    },

    /// Counted across every gateway sharing the PostgreSQL store, the requester already holds
    /// as many pending approvals as its cap allows; nothing was written.
    #[error("token `{token}` reached a pending-approvals cap of {limit} (agent: {agent:?})")]
    PendingLimit {
        /// The requesting token's name.
        token: String,
        /// The agent whose cap was reached; `None` when it was the token's.
        agent: Option<String>,
        /// The cap.
        limit: usize,
    },

    /// The PostgreSQL store's write queue is full: the database is answering slower than
    /// writes arrive, or not at all. The write was not queued, so nothing changed.
    #[error(
        "approvals database (PostgreSQL) is not keeping up: {capacity} writes are already \
         queued; nothing was changed, try again shortly"
    )]
    WriterBusy {
        /// The queue's capacity (`PgOptions::queue_capacity`).
        capacity: usize,
    },

    /// A JSON value could not be encoded for storage.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
}

/// An error of the database engine under the approvals database, opaque so that no driver type
/// is part of this crate's API; it reads as the engine's own message.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DatabaseError(rusqlite::Error);

impl DatabaseError {
    /// The engine's error, for this crate's own checks (busy, constraint).
    #[cfg(test)]
    pub(crate) fn engine(&self) -> &rusqlite::Error {
        &self.0
    }
}

/// An error of the PostgreSQL client or its pool, opaque for the same reason as
/// [`DatabaseError`]. The message never holds the URL's password: the client's errors name no
/// URL, and the pool's are the client's.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct PostgresError(Box<dyn std::error::Error + Send + Sync>);

impl PostgresError {
    /// The store's writer task has stopped (its runtime shut down); the write was not made.
    pub(crate) fn writer_stopped() -> Self {
        PostgresError(Box::new(std::io::Error::other(
            "the approvals database writer has stopped",
        )))
    }

    /// A shared document's change kept losing to other replicas' changes.
    pub(crate) fn contended(document: &str) -> Self {
        PostgresError(Box::new(std::io::Error::other(format!(
            "the shared document {document:?} kept changing under this change; try again"
        ))))
    }

    /// The server's SQLSTATE code, when the server reported the error.
    pub(crate) fn code(&self) -> Option<&tokio_postgres::error::SqlState> {
        self.0
            .downcast_ref::<tokio_postgres::Error>()
            .and_then(tokio_postgres::Error::code)
    }

    /// The constraint a refused write broke, when the server named one.
    pub(crate) fn constraint(&self) -> Option<&str> {
        self.0
            .downcast_ref::<tokio_postgres::Error>()
            .and_then(tokio_postgres::Error::as_db_error)
            .and_then(|db| db.constraint())
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        StoreError::Postgres(PostgresError(Box::new(error)))
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(error) => error.into(),
            other => StoreError::Postgres(PostgresError(Box::new(other))),
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Database(DatabaseError(error))
    }
}

/// A store error as `gatehouse-approvals` sees it: the two it acts on by kind, every other as
/// it reads.
impl From<StoreError> for gatehouse_approvals::StoreError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::DuplicateId { approval_id } => {
                gatehouse_approvals::StoreError::DuplicateId { approval_id }
            }
            StoreError::NotFound { approval_id } => {
                gatehouse_approvals::StoreError::NotFound { approval_id }
            }
            StoreError::ShortIdInUse { approval_id } => {
                gatehouse_approvals::StoreError::ShortIdInUse { approval_id }
            }
            StoreError::PendingLimit {
                token,
                agent,
                limit,
            } => gatehouse_approvals::StoreError::PendingLimit {
                token,
                agent,
                limit,
            },
            busy @ StoreError::WriterBusy { .. } => gatehouse_approvals::StoreError::Busy {
                reason: busy.to_string(),
            },
            other => gatehouse_approvals::StoreError::Backend(Box::new(other)),
        }
    }
}

impl StoreError {
    /// Wraps an I/O error with the path and operation it came from.
    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            op,
            source,
        }
    }
}
