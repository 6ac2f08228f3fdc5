//! Reading the audit log for operators: its verification verdict and its latest records, as
//! `gatehouse audit verify` and `gatehouse audit tail` show them, while the gateway appends;
//! from the data directory's files, or from the database when replicas share one.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use gatehouse_store::audit::{self, AuditError, VerifyReport};
use serde_json::Value;

use crate::error::ServiceError;
use crate::exec::audit::Destination;
use crate::service::Service;

/// The most records one tail returns.
pub const MAX_AUDIT_TAIL: usize = 500;

/// How much of the end of the active file a tail reads: records are well under 2 KiB each, so
/// this holds [`MAX_AUDIT_TAIL`] of them with room to spare.
const TAIL_BYTES: u64 = 2 * 1024 * 1024;

/// The verdict on the whole log (rotated files, active file and head).
#[derive(Debug, Clone)]
pub struct AuditVerdict {
    /// Records that passed every check, up to the first problem.
    pub records: u64,
    /// Seq of the last record that passed.
    pub last_seq: u64,
    /// The seq the head file anchors, when it could be read.
    pub anchored_seq: Option<u64>,
    /// The files read, oldest first.
    pub files: Vec<PathBuf>,
    /// The first problem; `None` when the chain is intact.
    pub problem: Option<AuditProblem>,
}

/// Where the chain first breaks.
#[derive(Debug, Clone)]
pub struct AuditProblem {
    /// The file holding the bad line.
    pub file: PathBuf,
    /// Its one-based line, when the problem is at a line.
    pub line: Option<u64>,
    /// The seq the bad line claims, when readable.
    pub seq: Option<u64>,
    /// A stable code (`content-edited`, `tail-missing`, …).
    pub code: &'static str,
    /// What it implies, for people.
    pub message: String,
}

/// One record as stored; its payload is the gateway's own JSON.
#[derive(Debug, Clone)]
pub struct AuditEntry {
    /// Position in the chain.
    pub seq: u64,
    /// When it happened, Unix ms.
    pub at_ms: u64,
    /// `request`, `decision`, `delivery` or `execution`.
    pub kind: String,
    /// The approval it belongs to.
    pub approval_id: Option<String>,
    /// The run it belongs to.
    pub run_id: Option<String>,
    /// The details.
    pub payload: Value,
}

impl Service {
    /// `audit.verify`: checks the whole chain, the file log off the async threads (it reads
    /// every file), the database's in one snapshot.
    pub async fn audit_verify(&self) -> Result<AuditVerdict, ServiceError> {
        let unverified = |error: AuditError| ServiceError::Internal {
            reason: format!("cannot verify the audit log: {error}"),
        };
        let report = match self.core().audit.destination().clone() {
            Destination::File(path) => tokio::task::spawn_blocking(move || audit::verify(&path))
                .await
                .map_err(|error| ServiceError::Internal {
                    reason: format!("the audit check stopped: {error}"),
                })?
                .map_err(unverified)?,
            Destination::Database(log) => log.verify().await.map_err(unverified)?,
        };
        Ok(verdict(report))
    }

    /// `audit.tail`: the last `count` records (of the active file, or of the database's
    /// chain), newest last, unchecked (`audit_verify` checks them).
    pub async fn audit_tail(&self, count: usize) -> Result<Vec<AuditEntry>, ServiceError> {
        let count = count.min(MAX_AUDIT_TAIL);
        match self.core().audit.destination().clone() {
            Destination::File(path) => tokio::task::spawn_blocking(move || tail(&path, count))
                .await
                .map_err(|error| ServiceError::Internal {
                    reason: format!("reading the audit log stopped: {error}"),
                })?,
            Destination::Database(log) => {
                let lines = log
                    .tail(count)
                    .await
                    .map_err(|error| ServiceError::Internal {
                        reason: format!("cannot read the audit log: {error}"),
                    })?;
                Ok(lines.iter().filter_map(|line| entry(line)).collect())
            }
        }
    }
}

fn verdict(report: VerifyReport) -> AuditVerdict {
    AuditVerdict {
        records: report.records,
        last_seq: report.last_seq,
        anchored_seq: report.anchored_seq,
        files: report.files,
        problem: report.problem.map(|problem| AuditProblem {
            code: problem.kind.code(),
            message: problem.kind.to_string(),
            file: problem.file,
            line: problem.line,
            seq: problem.seq,
        }),
    }
}

/// The last `count` complete lines of `path`, read from its end; a line that is not a record
/// (torn, edited into something else) is skipped here and reported by verification.
fn tail(path: &Path, count: usize) -> Result<Vec<AuditEntry>, ServiceError> {
    let unreadable = |error: std::io::Error| ServiceError::Internal {
        reason: format!("cannot read the audit log {}: {error}", path.display()),
    };
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let size = file.metadata().map_err(unreadable)?.len();
    let start = size.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(unreadable)?;
    let mut lines: Vec<&[u8]> = bytes
        .split_inclusive(|&byte| byte == b'\n')
        .filter(|line| line.ends_with(b"\n"))
        .collect();
    if start > 0 && !lines.is_empty() {
        // The read began inside a line.
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(count);
    Ok(lines[skip..]
        .iter()
        .filter_map(|line| entry(line))
        .collect())
}

fn entry(line: &[u8]) -> Option<AuditEntry> {
    let mut record: Value = serde_json::from_slice(line).ok()?;
    let text = |record: &Value, key: &str| record.get(key)?.as_str().map(str::to_owned);
    Some(AuditEntry {
        seq: record.get("seq")?.as_u64()?,
        at_ms: record.get("atMs")?.as_u64()?,
        kind: text(&record, "kind")?,
        approval_id: text(&record, "approvalId"),
        run_id: text(&record, "runId"),
        payload: record
            .get_mut("payload")
            .map(Value::take)
            .unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    /// A log of `count` records of about 1 KiB each, as the writer lays them out.
    fn log_of(count: u64) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let pad = "x".repeat(1000);
        for seq in 1..=count {
            writeln!(
                file,
                r#"{{"seq":{seq},"atMs":{seq},"kind":"request","approvalId":"a{seq}","payload":{{"pad":"{pad}"}},"prev":"p","hash":"h"}}"#
            )
            .unwrap();
        }
        file
    }

    #[test]
    fn reads_the_last_records_from_the_end_of_a_large_file() {
        let log = log_of(3_000);
        let last = tail(log.path(), 3).unwrap();
        let seqs: Vec<u64> = last.iter().map(|entry| entry.seq).collect();
        assert_eq!(seqs, [2_998, 2_999, 3_000]);
        assert_eq!(last[2].approval_id.as_deref(), Some("a3000"));
        assert_eq!(last[2].kind, "request");
        assert_eq!(last[2].payload["pad"].as_str().map(str::len), Some(1000));
    }

    #[test]
    fn starts_at_a_whole_line_when_the_read_begins_inside_one() {
        // More than `TAIL_BYTES` of records: the window's first line is cut and skipped, every
        // record returned is whole, and they run without a gap to the last one.
        let log = log_of(3_000);
        let all = tail(log.path(), usize::MAX).unwrap();
        assert!(all.len() > 1_000 && all.len() < 3_000, "{}", all.len());
        assert!(all.windows(2).all(|pair| pair[1].seq == pair[0].seq + 1));
        assert_eq!(all.last().map(|entry| entry.seq), Some(3_000));
    }

    #[test]
    fn skips_a_torn_last_line() {
        let mut log = log_of(2);
        write!(log, r#"{{"seq":3,"atMs":3"#).unwrap();
        let seqs: Vec<u64> = tail(log.path(), 10)
            .unwrap()
            .iter()
            .map(|entry| entry.seq)
            .collect();
        assert_eq!(seqs, [1, 2]);
    }
}
