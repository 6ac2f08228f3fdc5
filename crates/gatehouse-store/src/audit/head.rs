//! The anchor file beside the log (`<log>.head`): the last synced seq and its line hash.
//!
//! Hashes inside the log catch edits and removals in the middle, but removing the last records
//! leaves a shorter chain that is still valid. The head names the record the log must still reach,
//! so a cut tail shows as a log that ends before its anchor. It is replaced atomically after each
//! fsync of the log, so it never names a record that is not on disk; after a crash it may lag.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::durable_fs::{self, WriteLock};

use super::error::AuditError;
use super::record::{ChainTip, is_hash_hex};

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
    let Some(bytes) = durable_fs::read_if_exists(path)? else {
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

/// Replaces the head with `tip`; the caller has fsynced every record up to `tip`.
pub(crate) fn write(path: &Path, tip: &ChainTip, lock: &WriteLock) -> Result<(), AuditError> {
    let head = HeadFile {
        seq: tip.seq,
        line_hash: tip.line_hash.clone(),
    };
    let mut bytes = serde_json::to_vec(&head).map_err(AuditError::Encode)?;
    bytes.push(b'\n');
    durable_fs::replace_atomically(path, &bytes, lock)?;
    Ok(())
}
