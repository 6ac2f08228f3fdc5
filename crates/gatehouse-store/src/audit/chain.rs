//! Walks one file's lines and checks each against the chain: shape, own hash, seq and `prev`.
//!
//! The writer (on open) and [`verify`](super::verify) share this walk, so a log the writer
//! accepts is exactly a log `verify` accepts, apart from the torn last line the writer repairs.

use std::path::Path;

use super::record::{ChainTip, DecodedLine, LineFault, decode_line};
use super::verify::{Problem, ProblemKind};

/// The record the head file anchors, and whether the walk has met it yet.
#[derive(Debug)]
pub(crate) struct Anchor {
    tip: ChainTip,
    reached: bool,
}

impl Anchor {
    pub(crate) fn new(tip: ChainTip) -> Self {
        Anchor {
            tip,
            reached: false,
        }
    }

    /// The anchored seq.
    pub(crate) fn seq(&self) -> u64 {
        self.tip.seq
    }

    /// Whether a record with the anchored seq has been seen.
    pub(crate) fn reached(&self) -> bool {
        self.reached
    }

    /// Compares a tip the walk has reached; `false` when it has the anchored seq but another hash.
    pub(crate) fn observe(&mut self, tip: &ChainTip) -> bool {
        if tip.seq != self.tip.seq {
            return true;
        }
        self.reached = true;
        tip.line_hash == self.tip.line_hash
    }
}

/// What one file contributed to the chain.
#[derive(Debug)]
pub(crate) struct FileWalk {
    /// Seq of the file's first record, if it has any.
    pub(crate) first_seq: Option<u64>,
    /// The chain's end after the last good record (the starting tip if there was none).
    pub(crate) tip: ChainTip,
    /// Records that passed every check.
    pub(crate) records: u64,
    /// Bytes up to and including the last good record's newline.
    pub(crate) good_len: u64,
    /// The first problem; the walk stops there.
    pub(crate) problem: Option<Problem>,
}

/// Checks `data` (the contents of `file`) as the continuation of the chain ending at `start`.
pub(crate) fn walk(
    file: &Path,
    data: &[u8],
    start: ChainTip,
    mut anchor: Option<&mut Anchor>,
) -> FileWalk {
    let mut walk = FileWalk {
        first_seq: None,
        tip: start,
        records: 0,
        good_len: 0,
        problem: None,
    };
    let mut rest = data;
    let mut line_no = 0u64;
    while !rest.is_empty() {
        line_no += 1;
        let at = |seq: Option<u64>, kind| Problem {
            file: file.to_path_buf(),
            line: Some(line_no),
            seq,
            kind,
        };
        let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
            walk.problem = Some(at(None, ProblemKind::TornLine { bytes: rest.len() }));
            break;
        };
        let line = &rest[..newline];
        let DecodedLine { record, line_hash } = match decode_line(line) {
            Ok(decoded) => decoded,
            Err(fault) => {
                walk.problem = Some(at(None, fault_kind(fault)));
                break;
            }
        };
        let seq = Some(record.seq);
        let expected = walk.tip.seq + 1;
        if record.seq != expected {
            let kind = ProblemKind::SeqMismatch {
                expected,
                found: record.seq,
            };
            walk.problem = Some(at(seq, kind));
            break;
        }
        if record.prev != walk.tip.line_hash {
            walk.problem = Some(at(seq, ProblemKind::PrevMismatch));
            break;
        }
        let tip = ChainTip {
            seq: record.seq,
            line_hash,
        };
        if let Some(anchor) = anchor.as_deref_mut()
            && !anchor.observe(&tip)
        {
            walk.problem = Some(at(seq, ProblemKind::AnchorMismatch));
            break;
        }
        walk.first_seq.get_or_insert(record.seq);
        walk.tip = tip;
        walk.records += 1;
        rest = &rest[newline + 1..];
        walk.good_len = (data.len() - rest.len()) as u64;
    }
    walk
}

/// The problem a line that fails its own checks amounts to.
pub(crate) fn fault_kind(fault: LineFault) -> ProblemKind {
    match fault {
        LineFault::Malformed(detail) => ProblemKind::Malformed { detail },
        LineFault::ContentEdited => ProblemKind::ContentEdited,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use super::super::record::{AuditEvent, AuditKind, AuditRecord, encode_line};
    use super::*;
    use crate::approvals_file::hash_bytes;

    /// `n` chained lines, each with its newline.
    fn chain(n: u64) -> Vec<Vec<u8>> {
        chained_lines(n)
            .0
            .into_iter()
            .map(|mut line| {
                line.push(b'\n');
                line
            })
            .collect()
    }

    /// `n` chained lines (records of kind `request`, payload `{"i": i}`), without newlines,
    /// and the tip after them.
    pub(crate) fn chained_lines(n: u64) -> (Vec<Vec<u8>>, ChainTip) {
        let mut tip = ChainTip::genesis();
        let lines = (0..n)
            .map(|i| {
                let event = AuditEvent::new(AuditKind::Request, json!({ "i": i }));
                let encoded = encode_line(&AuditRecord::after(&tip, i, event)).unwrap();
                tip = ChainTip {
                    seq: tip.seq + 1,
                    line_hash: encoded.line_hash,
                };
                encoded.bytes
            })
            .collect();
        (lines, tip)
    }

    fn check(lines: &[Vec<u8>]) -> Option<(u64, ProblemKind)> {
        let data = lines.concat();
        let walk = walk(Path::new("audit.jsonl"), &data, ChainTip::genesis(), None);
        walk.problem.map(|p| (p.line.unwrap(), p.kind))
    }

    #[test]
    fn accepts_an_intact_chain_and_reports_its_tip() {
        let lines = chain(3);
        let data = lines.concat();
        let walk = walk(Path::new("a"), &data, ChainTip::genesis(), None);
        assert!(walk.problem.is_none());
        assert_eq!((walk.first_seq, walk.records), (Some(1), 3));
        assert_eq!(
            walk.tip.line_hash,
            hash_bytes(&lines[2][..lines[2].len() - 1])
        );
        assert_eq!(walk.good_len, data.len() as u64);
    }

    #[test]
    fn denies_a_removed_middle_record_at_the_line_after_the_gap() {
        let mut lines = chain(4);
        lines.remove(1);
        let expected = ProblemKind::SeqMismatch {
            expected: 2,
            found: 3,
        };
        assert_eq!(check(&lines), Some((2, expected)));
    }

    #[test]
    fn denies_swapped_records() {
        let mut lines = chain(4);
        lines.swap(1, 2);
        let expected = ProblemKind::SeqMismatch {
            expected: 2,
            found: 3,
        };
        assert_eq!(check(&lines), Some((2, expected)));
    }

    #[test]
    fn denies_a_record_rewritten_with_a_recomputed_hash_at_the_next_line() {
        let mut lines = chain(3);
        let first = &lines[0][..lines[0].len() - 1];
        let tip = ChainTip {
            seq: 1,
            line_hash: hash_bytes(first),
        };
        let event = AuditEvent::new(AuditKind::Decision, json!("forged"));
        let mut forged = encode_line(&AuditRecord::after(&tip, 9, event))
            .unwrap()
            .bytes;
        forged.push(b'\n');
        lines[1] = forged;
        assert_eq!(check(&lines), Some((3, ProblemKind::PrevMismatch)));
    }

    #[test]
    fn reports_a_torn_last_line_and_the_length_before_it() {
        let lines = chain(2);
        let mut data = lines.concat();
        data.extend_from_slice(&lines[0][..10]);
        let walk = walk(Path::new("a"), &data, ChainTip::genesis(), None);
        let problem = walk.problem.unwrap();
        assert_eq!(problem.line, Some(3));
        assert_eq!(problem.kind, ProblemKind::TornLine { bytes: 10 });
        assert_eq!(walk.good_len, (lines[0].len() + lines[1].len()) as u64);
    }

    #[test]
    fn denies_a_record_that_differs_from_the_anchor() {
        let lines = chain(2);
        let data = lines.concat();
        let mut anchor = Anchor::new(ChainTip {
            seq: 2,
            line_hash: "f".repeat(64),
        });
        let walk = walk(
            Path::new("a"),
            &data,
            ChainTip::genesis(),
            Some(&mut anchor),
        );
        assert_eq!(walk.problem.unwrap().kind, ProblemKind::AnchorMismatch);
        assert!(anchor.reached());
    }
}
