//! Why the audit log could not be opened, written or read.
//!
//! A chain that fails verification is not an error here: [`verify`](super::verify) reports it as
//! data in a [`VerifyReport`](super::VerifyReport). These variants are the cases where no verdict
//! could be reached, or where the writer refuses to extend a chain it cannot vouch for.

use std::path::PathBuf;

use crate::StoreError;

use super::verify::Problem;

/// Everything that stops the audit log from being written or checked.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A file operation failed (`StoreError::Io` carries the path and operation), or a shared
    /// file helper of this crate refused (for example a symlink where a file belongs).
    #[error(transparent)]
    Store(#[from] StoreError),

    /// An existing log or head file is readable by other users; records hold commands and
    /// agent names, so the writer refuses to add more to it until the operator fixes the mode.
    #[error("{path}: mode {mode:o} lets other users read the audit log; run chmod 600", path = path.display())]
    LoosePermissions {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },

    /// The log on disk fails verification in a way a crash cannot cause; appending would bury
    /// the evidence, so the writer refuses to open it. The message names the file through the
    /// problem, which says which of the log's files (active, rotated or head) holds it.
    #[error("refusing to extend a broken audit chain: {problem}")]
    BrokenChain {
        /// The log file that was being opened.
        path: PathBuf,
        /// The first problem found.
        problem: Box<Problem>,
    },

    /// An earlier write or fsync failed, so the file may end in a partial line; nothing more is
    /// appended until the log is reopened, which repairs or refuses it.
    #[error("{path}: audit writer stopped after an earlier failure; reopen the log", path = path.display())]
    WriterStopped {
        /// The log file.
        path: PathBuf,
    },

    /// The kernel accepted only part of a record; the writer stops (see `WriterStopped`).
    #[error("{path}: short write ({written} of {len} bytes)", path = path.display())]
    ShortWrite {
        /// The log file.
        path: PathBuf,
        /// Bytes written.
        written: usize,
        /// Bytes in the record line.
        len: usize,
    },

    /// The store is PostgreSQL but its database holds no audit log: no gateway of a version
    /// that keeps it there has migrated the database yet.
    #[error(
        "the approvals database holds no audit log yet: start a gateway of this version on it \
         (it migrates the database), or verify the data directory's file with --data-dir"
    )]
    NotInDatabase,

    /// A record could not be encoded as JSON.
    #[error("cannot encode audit record: {0}")]
    Encode(#[source] serde_json::Error),
}

impl AuditError {
    /// Wraps an I/O error with the path and operation it came from.
    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Self {
        AuditError::Store(StoreError::io(path, op, source))
    }
}
