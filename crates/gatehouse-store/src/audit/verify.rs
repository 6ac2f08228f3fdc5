//! Checks a whole log (rotated files, active file and head) and names the first thing wrong.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::durable_fs;

use super::chain::{self, Anchor};
use super::error::AuditError;
use super::head::{self, HeadState};
use super::record::ChainTip;
use super::segments;

/// The verdict on a log: how far the chain was checked and the first problem, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The files read, oldest first (rotated files, then the active log).
    pub files: Vec<PathBuf>,
    /// Records that passed every check, up to the first problem.
    pub records: u64,
    /// Seq of the last record that passed (0 when none did).
    pub last_seq: u64,
    /// The seq the head file anchors, when it could be read.
    pub anchored_seq: Option<u64>,
    /// The first problem; `None` means the chain is intact from seq 1 to the anchor and beyond.
    pub problem: Option<Problem>,
}

impl VerifyReport {
    /// True when no problem was found.
    pub fn is_valid(&self) -> bool {
        self.problem.is_none()
    }
}

/// Where the chain first breaks, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file holding the bad line (the head file for head problems).
    pub file: PathBuf,
    /// One-based line number in `file`, when the problem is at a line.
    pub line: Option<u64>,
    /// The seq the bad line claims, when it could be read.
    pub seq: Option<u64>,
    /// What is wrong.
    pub kind: ProblemKind,
}

/// The ways a log can fail verification; each message says what it implies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// The last line has no newline.
    TornLine {
        /// Bytes in the partial line.
        bytes: usize,
    },
    /// The line is not an audit record as the writer produces it.
    Malformed {
        /// The parser's complaint.
        detail: String,
    },
    /// The record's `hash` does not match its content.
    ContentEdited,
    /// The record's seq is not the one after the previous record.
    SeqMismatch {
        /// The seq that should come here.
        expected: u64,
        /// The seq found.
        found: u64,
    },
    /// The record's `prev` is not the hash of the line before it.
    PrevMismatch,
    /// The record has the anchored seq but not the anchored hash.
    AnchorMismatch,
    /// The log ends before the record the head file anchors.
    TailMissing {
        /// Seq of the last record present.
        last_seq: u64,
        /// The anchored seq.
        anchored_seq: u64,
    },
    /// The log holds records but the head file is gone.
    HeadMissing,
    /// The head file cannot be read as an anchor.
    HeadMalformed {
        /// The parser's complaint.
        detail: String,
    },
    /// The head anchors a record older than the last rotated file; it was replaced by an old copy.
    HeadBehind {
        /// The anchored seq.
        anchored_seq: u64,
    },
    /// Rows of the database log lie past its head row, which every append moves in the same
    /// transaction: they were inserted outside Gatehouse.
    BeyondHead {
        /// The seq the head row anchors.
        anchored_seq: u64,
    },
}

impl ProblemKind {
    /// A stable code for scripts and pages; the message beside it is for people and may change.
    pub fn code(&self) -> &'static str {
        match self {
            ProblemKind::TornLine { .. } => "torn-line",
            ProblemKind::Malformed { .. } => "malformed",
            ProblemKind::ContentEdited => "content-edited",
            ProblemKind::SeqMismatch { .. } => "seq-mismatch",
            ProblemKind::PrevMismatch => "prev-mismatch",
            ProblemKind::AnchorMismatch => "anchor-mismatch",
            ProblemKind::TailMissing { .. } => "tail-missing",
            ProblemKind::HeadMissing => "head-missing",
            ProblemKind::HeadMalformed { .. } => "head-malformed",
            ProblemKind::HeadBehind { .. } => "head-behind",
            ProblemKind::BeyondHead { .. } => "beyond-head",
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::TornLine { bytes } => write!(
                f,
                "incomplete last line ({bytes} bytes, no newline): a write was cut short by a \
                 crash, or the file was truncated"
            ),
            ProblemKind::Malformed { detail } => write!(f, "not an audit record: {detail}"),
            ProblemKind::ContentEdited => {
                write!(f, "content does not match its hash: the record was edited")
            }
            ProblemKind::SeqMismatch { expected, found }
                if expected.checked_add(1) == Some(*found) =>
            {
                write!(
                    f,
                    "seq {found} where {expected} was expected: record {expected} is missing or out \
                 of place"
                )
            }
            ProblemKind::SeqMismatch { expected, found } if found > expected => write!(
                f,
                "seq {found} where {expected} was expected: records {expected} to {} are missing \
                 or out of place",
                found - 1
            ),
            ProblemKind::SeqMismatch { expected, found } => write!(
                f,
                "seq {found} where {expected} was expected: records were reordered, repeated \
                 or inserted"
            ),
            ProblemKind::PrevMismatch => write!(
                f,
                "prev is not the hash of the line before it: that record was replaced (with a \
                 recomputed hash) or records were spliced"
            ),
            ProblemKind::AnchorMismatch => write!(
                f,
                "differs from the record the head file anchors: the log was rewritten"
            ),
            ProblemKind::TailMissing {
                last_seq,
                anchored_seq,
            } => write!(
                f,
                "the log ends at seq {last_seq} but the head file anchors seq {anchored_seq}: \
                 records from seq {} on were removed from the end",
                last_seq + 1
            ),
            ProblemKind::HeadMissing => {
                write!(f, "the log holds records but its head file is missing")
            }
            ProblemKind::HeadMalformed { detail } => {
                write!(f, "the head file is not an anchor: {detail}")
            }
            ProblemKind::HeadBehind { anchored_seq } => write!(
                f,
                "the head file anchors seq {anchored_seq}, older than the rotated files: it was \
                 replaced by an old copy"
            ),
            ProblemKind::BeyondHead { anchored_seq } => write!(
                f,
                "records after seq {anchored_seq}, where the head row ends the chain: they were \
                 inserted without moving the head, not appended by a gateway"
            ),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(seq) = self.seq {
            write!(f, " (seq {seq})")?;
        }
        write!(f, ": {}", self.kind)
    }
}

/// How long [`verify`] waits before reading a log again whose last line was cut short.
const WRITE_IN_PROGRESS: std::time::Duration = std::time::Duration::from_millis(50);

/// Verifies the log at `path` with its rotated files and head file.
///
/// `Err` means no verdict could be reached (the log does not exist, or a file could not be
/// read); a damaged log is `Ok` with [`VerifyReport::problem`] set.
///
/// A running gateway appends each record with one `write`, but a line that crosses a page
/// boundary becomes visible to readers a page at a time, so a log read while it is written can
/// end in part of a line. A cut last line of the active file is therefore read again once after
/// [`WRITE_IN_PROGRESS`]: a write in progress has finished by then, crash residue has not.
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    let report = verify_once(path)?;
    let cut_short = report.problem.as_ref().is_some_and(|problem| {
        problem.file == path && matches!(problem.kind, ProblemKind::TornLine { .. })
    });
    if !cut_short {
        return Ok(report);
    }
    std::thread::sleep(WRITE_IN_PROGRESS);
    verify_once(path)
}

fn verify_once(path: &Path) -> Result<VerifyReport, AuditError> {
    let head_path = head::head_path(path);
    let head = head::read(&head_path)?;
    let segments = segments::list(path)?;
    let mut active = durable_fs::read_if_exists(path)?;
    if active.is_none() && segments.is_empty() && head == HeadState::Missing {
        return Err(AuditError::io(
            path,
            "open",
            std::io::ErrorKind::NotFound.into(),
        ));
    }
    let mut files: Vec<PathBuf> = segments.into_iter().map(|s| s.path).collect();
    files.push(path.to_path_buf());

    let mut anchor = match &head {
        HeadState::Anchored(tip) => Some(Anchor::new(tip.clone())),
        HeadState::Missing | HeadState::Malformed(_) => None,
    };
    let mut report = VerifyReport {
        files: files.clone(),
        records: 0,
        last_seq: 0,
        anchored_seq: anchor.as_ref().map(Anchor::seq),
        problem: None,
    };
    let mut tip = ChainTip::genesis();
    // A head written before the first record anchors the genesis tip.
    if let Some(anchor) = anchor.as_mut()
        && !anchor.observe(&tip)
    {
        report.problem = Some(Problem {
            file: head_path,
            line: None,
            seq: Some(0),
            kind: ProblemKind::AnchorMismatch,
        });
        return Ok(report);
    }
    let mut rotated_seq = 0;
    for file in &files {
        // Rotated files are read one at a time, so memory stays bounded by the rotation size.
        let data = if file == path {
            rotated_seq = tip.seq;
            active.take().unwrap_or_default()
        } else {
            durable_fs::read_if_exists(file)?
                .ok_or_else(|| AuditError::io(file, "read", std::io::ErrorKind::NotFound.into()))?
        };
        let walk = chain::walk(file, &data, tip, anchor.as_mut());
        report.records += walk.records;
        tip = walk.tip;
        if walk.problem.is_some() {
            report.problem = walk.problem;
            break;
        }
    }
    report.last_seq = tip.seq;
    // A torn line after the anchor is crash residue; one before it means the file was cut
    // inside records that had been synced, which is what the head exists to reveal.
    let torn = matches!(
        report.problem,
        Some(Problem {
            kind: ProblemKind::TornLine { .. },
            ..
        })
    );
    if (report.problem.is_none() || torn)
        && let Some(problem) =
            head_problem(&head_path, &head, anchor.as_ref(), rotated_seq, tip.seq)
    {
        report.problem = Some(problem);
    }
    Ok(report)
}

/// Problems only the head file reveals, once the chain itself has passed. `rotated_seq` is the
/// last seq in rotated files: the writer syncs (moving the head) before it rotates, so a head
/// older than that is an old copy put back.
pub(crate) fn head_problem(
    head_path: &Path,
    head: &HeadState,
    anchor: Option<&Anchor>,
    rotated_seq: u64,
    last_seq: u64,
) -> Option<Problem> {
    let kind = match (head, anchor) {
        (HeadState::Malformed(detail), _) => ProblemKind::HeadMalformed {
            detail: detail.clone(),
        },
        (HeadState::Missing, _) if last_seq > 0 => ProblemKind::HeadMissing,
        (HeadState::Anchored(_), Some(anchor)) if anchor.seq() < rotated_seq => {
            ProblemKind::HeadBehind {
                anchored_seq: anchor.seq(),
            }
        }
        (HeadState::Anchored(_), Some(anchor)) if !anchor.reached() => ProblemKind::TailMissing {
            last_seq,
            anchored_seq: anchor.seq(),
        },
        _ => return None,
    };
    Some(Problem {
        file: head_path.to_path_buf(),
        line: None,
        seq: None,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::ProblemKind;

    #[test]
    fn names_the_records_a_gap_leaves_out_in_words() {
        let gap = |expected, found| ProblemKind::SeqMismatch { expected, found }.to_string();
        assert_eq!(
            gap(10, 11),
            "seq 11 where 10 was expected: record 10 is missing or out of place"
        );
        assert_eq!(
            gap(10, 13),
            "seq 13 where 10 was expected: records 10 to 12 are missing or out of place"
        );
        assert!(gap(10, 9).contains("reordered"));
    }
}
