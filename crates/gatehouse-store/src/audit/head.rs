//! The anchor file beside the log (`<log>.head`): the last synced seq and its line hash.
//!
//! Hashes inside the log catch edits and removals in the middle, but removing the last records
//! leaves a shorter chain that is still valid. The head names the record the log must still reach,
//! so a cut tail shows as a log that ends before its anchor. It is moved only after an fsync of
//! the log, so it never names a record that is not on disk; after a crash it may lag.
//!
//! **Moved in place.** The head moves after every group of records, hundreds of times a second
//! under load. Replacing the file each time (a new inode, its fsync, a rename, the directory's
//! fsync, and freeing the old inode's block, which a `discard` mount passes on to the disk) was
//! four synchronous disk operations per move, competing with the approvals database's commits on
//! the same disk. So [`Head::create`] replaces it once, atomically, and [`Head::advance`] then
//! rewrites its bytes in place: one `pwrite` of [`HEAD_LEN`] bytes at offset 0 and one
//! `fdatasync`. The line is padded with spaces to that fixed length, so the file's size never
//! changes, and a padded head is still one JSON value, readable by every version. That a
//! 128-byte write at the start of a file reaches the disk whole or not at all rests on sector
//! writes being atomic, as PostgreSQL's `pg_control` does. A reader (`audit verify` while the
//! gateway runs) takes a shared `flock` on the head file, and the writer an exclusive one around
//! each rewrite, so a reader never sees half of one.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};
use serde::{Deserialize, Serialize};

use crate::durable_fs::{self, WriteLock};

use super::error::AuditError;
use super::record::{ChainTip, is_hash_hex};

/// Bytes a head occupies: its JSON line (106 bytes at most) padded with spaces, then `\n`.
const HEAD_LEN: usize = 128;

/// The anchor as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HeadFile {
    seq: u64,
    line_hash: String,
}

/// The head file's path for a log: `<log file name>.head` in the same directory.
pub(crate) fn head_path(log: &Path) -> PathBuf {
    let mut name = log.file_name().map(OsString::from).unwrap_or_default();
    name.push(".head");
    log.with_file_name(name)
}

/// What the head file holds, if there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadState {
    /// No head file.
    Missing,
    /// A head file that is not an anchor; the text says why.
    Malformed(String),
    /// The anchored tip.
    Anchored(ChainTip),
}

/// Reads the head; a missing or unparsable file is reported as such, never guessed.
pub(crate) fn read(path: &Path) -> Result<HeadState, AuditError> {
    let Some(bytes) = read_locked(path)? else {
        return Ok(HeadState::Missing);
    };
    Ok(match serde_json::from_slice::<HeadFile>(&bytes) {
        Ok(head) if is_hash_hex(head.line_hash.as_bytes()) => HeadState::Anchored(ChainTip {
            seq: head.seq,
            line_hash: head.line_hash,
        }),
        Ok(_) => HeadState::Malformed("lineHash is not 64 lower-case hex digits".to_owned()),
        Err(error) => HeadState::Malformed(error.to_string()),
    })
}

/// The head's bytes, read under a shared lock so a move in progress is not seen half done.
fn read_locked(path: &Path) -> Result<Option<Vec<u8>>, AuditError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(AuditError::io(path, "open", e)),
    };
    lock(&file, path, FlockOperation::LockShared)?;
    let mut bytes = Vec::with_capacity(HEAD_LEN);
    file.read_to_end(&mut bytes)
        .map_err(|e| AuditError::io(path, "read", e))?;
    Ok(Some(bytes))
}

/// The open head file of a writer, moved in place.
#[derive(Debug)]
pub(crate) struct Head {
    path: PathBuf,
    file: File,
}

impl Head {
    /// Replaces the head file with `tip` atomically and keeps it open for [`Head::advance`].
    /// The caller has fsynced every record up to `tip` and holds the log's [`WriteLock`].
    pub(crate) fn create(
        path: &Path,
        tip: &ChainTip,
        lock: &WriteLock,
    ) -> Result<Self, AuditError> {
        durable_fs::replace_atomically(path, &encode(tip)?, lock)?;
        let file = durable_fs::open_no_follow(OpenOptions::new().write(true), path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Moves the head to `tip`; the caller has fsynced every record up to `tip`.
    pub(crate) fn advance(&mut self, tip: &ChainTip) -> Result<(), AuditError> {
        let bytes = encode(tip)?;
        lock(&self.file, &self.path, FlockOperation::LockExclusive)?;
        let written = self.file.write_all_at(&bytes, 0);
        lock(&self.file, &self.path, FlockOperation::Unlock)?;
        written.map_err(|e| AuditError::io(&self.path, "write", e))?;
        self.file
            .sync_data()
            .map_err(|e| AuditError::io(&self.path, "fsync", e))
    }
}

/// `tip` as the head file's exact bytes: the JSON line padded to [`HEAD_LEN`].
fn encode(tip: &ChainTip) -> Result<Vec<u8>, AuditError> {
    let head = HeadFile {
        seq: tip.seq,
        line_hash: tip.line_hash.clone(),
    };
    let mut bytes = serde_json::to_vec(&head).map_err(AuditError::Encode)?;
    // Always shorter (a u64 and a 64-digit hash); were it not, the head would merely grow.
    if bytes.len() < HEAD_LEN {
        bytes.resize(HEAD_LEN - 1, b' ');
    }
    bytes.push(b'\n');
    Ok(bytes)
}

fn lock(file: &File, path: &Path, operation: FlockOperation) -> Result<(), AuditError> {
    loop {
        match flock(file, operation) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(errno) => return Err(AuditError::io(path, "lock", errno.into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_every_head_to_the_same_length_and_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl.head");
        let lock = durable_fs::lock_exclusive(&dir.path().join("audit.jsonl")).unwrap();
        let tip = |seq| ChainTip {
            seq,
            line_hash: "ab".repeat(32),
        };
        let mut head = Head::create(&path, &tip(1), &lock).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), HEAD_LEN);
        head.advance(&tip(u64::MAX)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), HEAD_LEN);
        assert_eq!(read(&path).unwrap(), HeadState::Anchored(tip(u64::MAX)));
        head.advance(&tip(7)).unwrap();
        assert_eq!(read(&path).unwrap(), HeadState::Anchored(tip(7)));
    }
}
