//! Verifies a chain kept as rows (the database log) with the file log's own checks: each row's
//! line goes through the same walk as a line of `audit.jsonl`, the head row plays the head
//! file, and the verdict is the same [`VerifyReport`], so one verifier serves both.
//!
//! Rows differ from a file in one way: a record can name its place by the row's seq even when
//! its line cannot be read, so a problem is located by seq (there are no line numbers).

use std::path::PathBuf;

use super::chain::{self, Anchor};
use super::head::HeadState;
use super::record::{ChainTip, is_hash_hex};
use super::verify::{Problem, ProblemKind, VerifyReport, head_problem};

/// Walks rows in seq order and builds the verdict.
#[derive(Debug)]
pub(crate) struct RowChain {
    records: PathBuf,
    head_label: PathBuf,
    head: HeadState,
    anchor: Option<Anchor>,
    tip: ChainTip,
    report: VerifyReport,
}

impl RowChain {
    /// A walk of the table `records` (a label for reports) against the head row `head`
    /// (`None` when it is missing), labelled `head_label`.
    pub(crate) fn new(
        records: impl Into<PathBuf>,
        head_label: impl Into<PathBuf>,
        head: Option<(u64, String)>,
    ) -> Self {
        let records = records.into();
        let head = match head {
            None => HeadState::Missing,
            Some((seq, line_hash)) if is_hash_hex(line_hash.as_bytes()) => {
                HeadState::Anchored(ChainTip { seq, line_hash })
            }
            Some(_) => HeadState::Malformed("the hash is not 64 lower-case hex digits".into()),
        };
        let mut anchor = match &head {
            HeadState::Anchored(tip) => Some(Anchor::new(tip.clone())),
            HeadState::Missing | HeadState::Malformed(_) => None,
        };
        let head_label = head_label.into();
        let tip = ChainTip::genesis();
        let mut report = VerifyReport {
            files: vec![records.clone()],
            records: 0,
            last_seq: 0,
            anchored_seq: anchor.as_ref().map(Anchor::seq),
            problem: None,
        };
        // A head row that anchors seq 0 must anchor the empty chain.
        if let Some(anchor) = anchor.as_mut()
            && !anchor.observe(&tip)
        {
            report.problem = Some(Problem {
                file: head_label.clone(),
                line: None,
                seq: Some(0),
                kind: ProblemKind::AnchorMismatch,
            });
        }
        RowChain {
            records,
            head_label,
            head,
            anchor,
            tip,
            report,
        }
    }

    /// Checks the next row (its seq column and its line); `false` once a problem has stopped
    /// the walk, so the caller can stop reading.
    pub(crate) fn push(&mut self, row_seq: u64, line: &[u8]) -> bool {
        if self.report.problem.is_some() {
            return false;
        }
        let mut data = Vec::with_capacity(line.len() + 1);
        data.extend_from_slice(line);
        data.push(b'\n');
        let walk = chain::walk(&self.records, &data, self.tip.clone(), self.anchor.as_mut());
        self.report.records += walk.records;
        self.tip = walk.tip;
        match walk.problem {
            Some(mut problem) => {
                problem.line = None;
                problem.seq.get_or_insert(row_seq);
                self.report.problem = Some(problem);
                false
            }
            None => true,
        }
    }

    /// The verdict once every row was pushed (or the walk stopped): what the head row reveals
    /// is checked only when the rows themselves passed.
    pub(crate) fn finish(mut self) -> VerifyReport {
        self.report.last_seq = self.tip.seq;
        if self.report.problem.is_some() {
            return self.report;
        }
        self.report.problem = head_problem(
            &self.head_label,
            &self.head,
            self.anchor.as_ref(),
            0,
            self.tip.seq,
        )
        .or_else(|| self.beyond_head());
        self.report
    }

    /// Rows past the head row: every append moves the head in its own transaction, so these
    /// were inserted by someone else.
    fn beyond_head(&self) -> Option<Problem> {
        let anchored = self.anchor.as_ref()?.seq();
        (self.tip.seq > anchored).then(|| Problem {
            file: self.records.clone(),
            line: None,
            seq: Some(anchored + 1),
            kind: ProblemKind::BeyondHead {
                anchored_seq: anchored,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::chain::tests::chained_lines as lines;
    use super::*;

    fn verdict(lines: &[Vec<u8>], head: Option<&ChainTip>) -> VerifyReport {
        let head = head.map(|tip| (tip.seq, tip.line_hash.clone()));
        let mut rows = RowChain::new("records", "head", head);
        for (seq, line) in (1..).zip(lines) {
            if !rows.push(seq, line) {
                break;
            }
        }
        rows.finish()
    }

    #[test]
    fn accepts_rows_that_reach_the_head_and_names_an_edit_by_the_rows_seq() {
        let (mut rows, tip) = lines(3);
        let report = verdict(&rows, Some(&tip));
        assert!(report.is_valid(), "{report:?}");
        assert_eq!((report.records, report.last_seq), (3, 3));
        rows[1] = b"{\"seq\":2}".to_vec();
        let problem = verdict(&rows, Some(&tip)).problem.unwrap();
        assert_eq!((problem.seq, problem.line), (Some(2), None));
        assert!(matches!(problem.kind, ProblemKind::Malformed { .. }));
    }

    #[test]
    fn denies_a_cut_tail_and_rows_past_the_head() {
        let (rows, tip) = lines(3);
        let cut = verdict(&rows[..2], Some(&tip)).problem.unwrap();
        assert!(matches!(cut.kind, ProblemKind::TailMissing { .. }));
        let head = ChainTip {
            seq: 2,
            line_hash: lines(2).1.line_hash,
        };
        let past = verdict(&rows, Some(&head)).problem.unwrap();
        assert_eq!(past.kind, ProblemKind::BeyondHead { anchored_seq: 2 });
        assert_eq!(past.seq, Some(3));
    }
}
