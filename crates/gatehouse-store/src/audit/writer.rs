//! The appending side: one writer per log file, serializing callers and keeping the chain.
//!
//! Every record is one `write` to a file opened with `O_APPEND`, so a crash leaves at most one
//! partial line, at the end. Opening checks the existing chain against the head file before
//! adding to it: a crash residue (a torn last line beyond the head) is cut off and reported, and
//! anything else wrong is refused, because appending to a damaged log would make the damage look
//! like history.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read as _, Write as _};
use std::num::NonZeroU32;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::StoreError;
use crate::durable_fs::{self, PRIVATE_FILE_MODE, WriteLock};

use super::chain::{self, Anchor};
use super::error::AuditError;
use super::head::{self, Head, HeadState};
use super::record::{AuditEvent, AuditRecord, ChainTip, decode_line, encode_line};
use super::segments::{self, Segment};
use super::verify::{Problem, ProblemKind, head_problem};

/// The log's file name inside the data directory, shared by `gatehouse serve` and
/// `gatehouse audit` so both find the same file.
pub const LOG_FILE_NAME: &str = "audit.jsonl";

/// Default size at which the active file is rotated: large enough to hold a busy day, small
/// enough that opening (which re-checks the active file) stays quick.
pub const DEFAULT_ROTATE_AT_BYTES: u64 = 64 * 1024 * 1024;

/// When records reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPolicy {
    /// fsync after every record, then update the head: nothing acknowledged is ever lost.
    EveryRecord,
    /// fsync once this many records are waiting, or on [`AuditLog::sync`]. Up to this many
    /// acknowledged records can be lost in a power failure; in exchange one fsync covers many.
    Batched {
        /// Records written but not yet fsynced before the writer syncs on its own.
        max_unsynced: NonZeroU32,
    },
}

/// How an [`AuditLog`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditOptions {
    /// When records are fsynced.
    pub sync: SyncPolicy,
    /// Rotate the active file before a record would make it larger than this; `None` never
    /// rotates.
    pub rotate_at_bytes: Option<u64>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            sync: SyncPolicy::EveryRecord,
            rotate_at_bytes: Some(DEFAULT_ROTATE_AT_BYTES),
        }
    }
}

/// What opening found; the caller should log `torn_tail` when set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenReport {
    /// Seq of the last record in the log (0 for a new log); the next append gets this plus one.
    pub last_seq: u64,
    /// A partial last line left by a crash, which was cut off before appending.
    pub torn_tail: Option<TornTail>,
}

/// A partial record removed on open. It was never fsynced as a whole line, so no head anchors it
/// and no caller was told it was durable (with [`SyncPolicy::EveryRecord`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// One-based line number it occupied.
    pub line: u64,
    /// Byte offset where it started; the file now ends here.
    pub offset: u64,
    /// The removed bytes, kept so the caller can log them.
    pub dropped: Vec<u8>,
}

/// The append-only, hash-chained audit log. Share it by reference: appends from many threads are
/// serialized inside, each getting the next seq.
#[derive(Debug)]
pub struct AuditLog {
    inner: Mutex<Writer>,
    path: PathBuf,
}

#[derive(Debug)]
struct Writer {
    path: PathBuf,
    head: Head,
    file: File,
    /// Held for the writer's lifetime: a second writer on the same log would fork the chain.
    _lock: WriteLock,
    options: AuditOptions,
    tip: ChainTip,
    /// Seq of the active file's first record, `None` while it is empty.
    file_first_seq: Option<u64>,
    file_len: u64,
    unsynced: u32,
    /// Set when a write, fsync or rotation failed part-way: the file's end is unknown.
    stopped: bool,
}

impl AuditLog {
    /// Opens (or creates, mode 0600) the log at `path`, checks it and repairs a torn last line.
    ///
    /// Blocks while another process holds the log open for writing.
    pub fn open(
        path: impl Into<PathBuf>,
        options: AuditOptions,
    ) -> Result<(AuditLog, OpenReport), AuditError> {
        let path = path.into();
        let lock = durable_fs::lock_exclusive(&path)?;
        let mut file = open_append(&path)?;
        let mode = file_mode(&file, &path)?;
        let Examined {
            head_path,
            walk,
            torn_tail,
        } = examine(&path, Some(mode), || {
            let mut data = Vec::new();
            file.read_to_end(&mut data)
                .map_err(|e| AuditError::io(&path, "read", e))?;
            Ok(data)
        })?;
        if torn_tail.is_some() {
            file.set_len(walk.good_len)
                .and_then(|()| file.sync_all())
                .map_err(|e| AuditError::io(&path, "truncate torn tail", e))?;
        }
        // Records read back may so far be in the page cache only (the process crashed, not
        // the machine): sync them before the head names them. A head written here, before the
        // first record of a new log, also means a missing head is always a deletion.
        file.sync_data()
            .map_err(|e| AuditError::io(&path, "fsync", e))?;
        let head = Head::create(&head_path, &walk.tip, &lock)?;
        let report = OpenReport {
            last_seq: walk.tip.seq,
            torn_tail,
        };
        let writer = Writer {
            path: path.clone(),
            head,
            file,
            _lock: lock,
            options,
            tip: walk.tip,
            file_first_seq: walk.first_seq,
            file_len: walk.good_len,
            unsynced: 0,
            stopped: false,
        };
        let log = AuditLog {
            inner: Mutex::new(writer),
            path,
        };
        Ok((log, report))
    }

    /// Finds what [`AuditLog::open`] would refuse in the log at `path`, by the same checks,
    /// without creating, repairing or locking anything: for a check of a data directory
    /// (`gatehouse doctor`) before or while a gateway uses it. The report says what opening would
    /// find; a torn last line in it would be cut off, and a log that does not exist yet would be
    /// created. It reads the head before the file, and the writer moves the head only after the
    /// records it names are synced, so a log being written passes; a rotation at the very moment
    /// of the check can still show as a broken chain.
    pub fn check(path: &Path) -> Result<OpenReport, AuditError> {
        let mut options = OpenOptions::new();
        options.read(true);
        let file = match durable_fs::open_no_follow(&mut options, path) {
            Ok(file) => Some(file),
            Err(StoreError::Io { source, .. }) if source.kind() == ErrorKind::NotFound => None,
            Err(error) => return Err(error.into()),
        };
        let mode = file
            .as_ref()
            .map(|file| file_mode(file, path))
            .transpose()?;
        let examined = examine(path, mode, || {
            let mut data = Vec::new();
            if let Some(mut file) = file {
                file.read_to_end(&mut data)
                    .map_err(|e| AuditError::io(path, "read", e))?;
            }
            Ok(data)
        })?;
        Ok(OpenReport {
            last_seq: examined.walk.tip.seq,
            torn_tail: examined.torn_tail,
        })
    }

    /// Appends `event` as the next record, observed at `at_ms` (Unix milliseconds, the caller's
    /// clock), and returns its seq. Durable on return with [`SyncPolicy::EveryRecord`].
    pub fn append(&self, at_ms: u64, event: AuditEvent) -> Result<u64, AuditError> {
        let mut writer = self.writer()?;
        let record = AuditRecord::after(&writer.tip, at_ms, event);
        let encoded = encode_line(&record).map_err(AuditError::Encode)?;
        let tip = ChainTip {
            seq: record.seq,
            line_hash: encoded.line_hash,
        };
        let mut line = encoded.bytes;
        line.push(b'\n');
        writer.guard(|w| w.append_line(&line, tip))?;
        Ok(record.seq)
    }

    /// fsyncs records written so far and moves the head to them. Call it on a timer with
    /// [`SyncPolicy::Batched`], and before shutdown to see errors that `Drop` cannot report.
    pub fn sync(&self) -> Result<(), AuditError> {
        let mut writer = self.writer()?;
        writer.guard(Writer::sync)
    }

    /// The active log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn writer(&self) -> Result<MutexGuard<'_, Writer>, AuditError> {
        // A panic while holding the lock may have left a half-written line: stop, like any
        // other failure part-way through a write.
        let writer = self.inner.lock().map_err(|_| AuditError::WriterStopped {
            path: self.path.clone(),
        })?;
        if writer.stopped {
            return Err(AuditError::WriterStopped {
                path: self.path.clone(),
            });
        }
        Ok(writer)
    }
}

impl Writer {
    /// Runs a step that may leave the file in an unknown state; on failure, stops the writer.
    fn guard<T>(
        &mut self,
        step: impl FnOnce(&mut Self) -> Result<T, AuditError>,
    ) -> Result<T, AuditError> {
        let result = step(self);
        if result.is_err() {
            self.stopped = true;
        }
        result
    }

    fn append_line(&mut self, line: &[u8], tip: ChainTip) -> Result<(), AuditError> {
        let len = line.len() as u64;
        let full = self
            .options
            .rotate_at_bytes
            .is_some_and(|limit| self.file_len.saturating_add(len) > limit);
        if full && self.file_first_seq.is_some() {
            self.rotate()?;
        }
        let written = self
            .file
            .write(line)
            .map_err(|e| AuditError::io(&self.path, "append", e))?;
        if written != line.len() {
            return Err(AuditError::ShortWrite {
                path: self.path.clone(),
                written,
                len: line.len(),
            });
        }
        self.file_first_seq.get_or_insert(tip.seq);
        self.tip = tip;
        self.file_len += len;
        self.unsynced += 1;
        let bound = match self.options.sync {
            SyncPolicy::EveryRecord => 1,
            SyncPolicy::Batched { max_unsynced } => max_unsynced.get(),
        };
        if self.unsynced >= bound {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), AuditError> {
        if self.unsynced == 0 {
            return Ok(());
        }
        self.file
            .sync_data()
            .map_err(|e| AuditError::io(&self.path, "fsync", e))?;
        self.unsynced = 0;
        self.head.advance(&self.tip)
    }

    /// Renames the full active file to its segment name and starts an empty one; the next
    /// record's `prev` carries the chain across.
    fn rotate(&mut self) -> Result<(), AuditError> {
        self.sync()?;
        let first = self.file_first_seq.unwrap_or(self.tip.seq);
        let segment = segments::segment_path(&self.path, first, self.tip.seq);
        fs::rename(&self.path, &segment).map_err(|e| AuditError::io(&segment, "rotate", e))?;
        self.file = open_append(&self.path)?;
        let dir = durable_fs::ensure_parent_dir(&self.path)?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| AuditError::io(&dir, "fsync directory", e))?;
        self.file_first_seq = None;
        self.file_len = 0;
        Ok(())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.stopped {
            // Best effort: errors here have no one to go to; `AuditLog::sync` reports them.
            let _ = self.sync();
        }
    }
}

/// What [`examine`] found in a log it does not refuse.
struct Examined {
    head_path: PathBuf,
    walk: chain::FileWalk,
    torn_tail: Option<TornTail>,
}

/// Every check `open` makes before it writes, shared with `check` so the two cannot disagree:
/// the modes of the active file (`None` when it does not exist yet) and of the head, then the
/// chain from the newest rotated file through the active file's bytes, which `read_active`
/// reads only after the head was read.
fn examine(
    path: &Path,
    mode: Option<u32>,
    read_active: impl FnOnce() -> Result<Vec<u8>, AuditError>,
) -> Result<Examined, AuditError> {
    if let Some(mode) = mode {
        refuse_loose_mode(path, mode)?;
    }
    let head_path = head::head_path(path);
    if let Some(mode) = durable_fs::file_mode(&head_path)? {
        refuse_loose_mode(&head_path, mode)?;
    }
    let head = head::read(&head_path)?;
    let start = match segments::list(path)?.last() {
        Some(segment) => last_tip(segment)?,
        None => ChainTip::genesis(),
    };
    let data = read_active()?;
    let (walk, torn_tail) = check_existing(path, &head_path, &head, start, data)?;
    Ok(Examined {
        head_path,
        walk,
        torn_tail,
    })
}

/// Checks the active file's contents against the chain and the head, as `verify` would, and
/// splits off a torn last line. Anything but a torn line past the anchor is refused.
fn check_existing(
    path: &Path,
    head_path: &Path,
    head: &HeadState,
    start: ChainTip,
    mut data: Vec<u8>,
) -> Result<(chain::FileWalk, Option<TornTail>), AuditError> {
    let broken = |problem: Problem| AuditError::BrokenChain {
        path: path.to_path_buf(),
        problem: Box::new(problem),
    };
    let mut anchor = match head {
        HeadState::Anchored(tip) => Some(Anchor::new(tip.clone())),
        HeadState::Missing | HeadState::Malformed(_) => None,
    };
    if let Some(anchor) = anchor.as_mut()
        && !anchor.observe(&start)
    {
        return Err(broken(Problem {
            file: head_path.to_path_buf(),
            line: None,
            seq: Some(start.seq),
            kind: ProblemKind::AnchorMismatch,
        }));
    }
    if *head == HeadState::Missing && !data.is_empty() {
        return Err(broken(Problem {
            file: head_path.to_path_buf(),
            line: None,
            seq: None,
            kind: ProblemKind::HeadMissing,
        }));
    }
    let rotated_seq = start.seq;
    let walk = chain::walk(path, &data, start, anchor.as_mut());
    let torn_tail = match walk.problem {
        None => None,
        Some(Problem {
            line: Some(line),
            kind: ProblemKind::TornLine { .. },
            ..
        }) => Some(TornTail {
            line,
            offset: walk.good_len,
            dropped: data.split_off(usize::try_from(walk.good_len).unwrap_or(data.len())),
        }),
        Some(problem) => return Err(broken(problem)),
    };
    if let Some(problem) = head_problem(head_path, head, anchor.as_ref(), rotated_seq, walk.tip.seq)
    {
        return Err(broken(problem));
    }
    Ok((walk, torn_tail))
}

/// Opens for appending, creating with mode 0600, never through a symlink.
fn open_append(path: &Path) -> Result<File, AuditError> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .append(true)
        .create(true)
        .mode(PRIVATE_FILE_MODE);
    Ok(durable_fs::open_no_follow(&mut options, path)?)
}

fn file_mode(file: &File, path: &Path) -> Result<u32, AuditError> {
    let meta = file
        .metadata()
        .map_err(|e| AuditError::io(path, "stat", e))?;
    Ok(meta.mode() & 0o777)
}

fn refuse_loose_mode(path: &Path, mode: u32) -> Result<(), AuditError> {
    if mode & 0o077 != 0 {
        return Err(AuditError::LoosePermissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// The chain's end as the newest rotated file leaves it.
fn last_tip(segment: &Segment) -> Result<ChainTip, AuditError> {
    let data = fs::read(&segment.path).map_err(|e| AuditError::io(&segment.path, "read", e))?;
    let body = data.strip_suffix(b"\n").unwrap_or(&data);
    let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = &body[start..];
    let bad = |kind| AuditError::BrokenChain {
        path: segment.path.clone(),
        problem: Box::new(Problem {
            file: segment.path.clone(),
            line: Some(data[..start].iter().filter(|&&b| b == b'\n').count() as u64 + 1),
            seq: None,
            kind,
        }),
    };
    if !data.ends_with(b"\n") {
        return Err(bad(ProblemKind::TornLine { bytes: line.len() }));
    }
    let decoded = decode_line(line).map_err(|fault| bad(chain::fault_kind(fault)))?;
    Ok(ChainTip {
        seq: decoded.record.seq,
        line_hash: decoded.line_hash,
    })
}
