//! The decision JSON of `gatehouse check` (issue 2's shape). It lives in the binary because the
//! policy core is not `Serialize`: a core change cannot silently change this format.

use gatehouse_policy::exec::{Decision, ExecEvaluation, SegmentEvaluation};
use serde::Serialize;

/// One decision, as printed by `check --json` and each `--jsonl` line.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DecisionJson {
    decision: &'static str,
    analysis_ok: bool,
    allowlist_satisfied: bool,
    requires_approval: bool,
    reason: String,
    segments: Vec<SegmentJson>,
    allow_always_patterns: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SegmentJson {
    argv: Vec<String>,
    resolved_path: Option<String>,
    satisfied_by: Option<&'static str>,
    reason: String,
}

impl From<&ExecEvaluation> for DecisionJson {
    fn from(evaluation: &ExecEvaluation) -> Self {
        DecisionJson {
            decision: evaluation.decision.as_str(),
            analysis_ok: evaluation.analysis_ok,
            allowlist_satisfied: evaluation.allowlist_satisfied,
            requires_approval: evaluation.requires_approval,
            reason: evaluation.reason.to_string(),
            segments: evaluation.segments.iter().map(SegmentJson::from).collect(),
            allow_always_patterns: evaluation.allow_always_patterns.clone(),
        }
    }
}

impl From<&SegmentEvaluation> for SegmentJson {
    fn from(segment: &SegmentEvaluation) -> Self {
        SegmentJson {
            argv: segment.argv.clone(),
            resolved_path: segment
                .resolved_path
                .as_ref()
                .map(|p| p.display().to_string()),
            satisfied_by: segment.satisfied_by.map(|s| s.as_str()),
            reason: segment.reason.to_string(),
        }
    }
}

impl DecisionJson {
    /// The answer to a batch line that is not a valid request: refused, saying why.
    pub(crate) fn invalid_request(problem: &str) -> Self {
        DecisionJson {
            decision: Decision::Deny.as_str(),
            analysis_ok: false,
            allowlist_satisfied: false,
            requires_approval: false,
            reason: format!("invalid request: {problem}"),
            segments: Vec::new(),
            allow_always_patterns: Vec::new(),
        }
    }
}
