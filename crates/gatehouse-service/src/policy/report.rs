//! Policy answers as JSON: one exec decision, one tool-call decision and one agent's effective
//! tools.
//!
//! `gatehouse check --json` prints a [`DecisionJson`] and `gatehouse tools --json` a
//! [`ToolsJson`], and the server answers `exec.policy.check` and `tools.effective` with the very
//! same values, so both are built here, once. The policy core is not `Serialize`: a core change
//! cannot silently change these formats.

use gatehouse_policy::exec::{Decision, ExecEvaluation, SegmentEvaluation};
use gatehouse_policy::files::FileOp;
use gatehouse_policy::tool_call::{Grant, GrantScope, ToolCallDecision};
use gatehouse_policy::tools::EffectiveTools;
use serde::Serialize;

/// One exec decision (issue 2's shape): `check --json`, each `--jsonl` line, `exec.policy.check`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionJson {
    decision: &'static str,
    analysis_ok: bool,
    allowlist_satisfied: bool,
    requires_approval: bool,
    reason: String,
    segments: Vec<SegmentJson>,
    allow_always_patterns: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct SegmentJson {
    argv: Vec<String>,
    resolved_path: Option<String>,
    satisfied_by: Option<&'static str>,
    reason: String,
    looked_through: Vec<LookedThroughJson>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct LookedThroughJson {
    word: String,
    resolved_path: Option<String>,
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
            looked_through: segment
                .looked_through
                .iter()
                .map(|wrapper| LookedThroughJson {
                    word: wrapper.word.clone(),
                    resolved_path: wrapper
                        .resolved_path
                        .as_ref()
                        .map(|p| p.display().to_string()),
                })
                .collect(),
        }
    }
}

impl DecisionJson {
    /// The answer to a request that could not be read: refused, saying why.
    pub fn invalid_request(problem: &str) -> Self {
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

/// An agent's effective tools (issue 3's shape): `tools --json` and `tools.effective`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsJson {
    allowed: Vec<String>,
    tools: Vec<ToolJson>,
    warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolJson {
    name: String,
    allowed: bool,
    removed_by: Option<RemovalJson>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct RemovalJson {
    step: &'static str,
    config_path: String,
}

impl From<&EffectiveTools> for ToolsJson {
    fn from(effective: &EffectiveTools) -> Self {
        ToolsJson {
            allowed: effective.allowed.iter().cloned().collect(),
            tools: effective
                .tools
                .iter()
                .map(|tool| ToolJson {
                    name: tool.name.clone(),
                    allowed: tool.allowed,
                    removed_by: tool.removed_by.as_ref().map(|removal| RemovalJson {
                        step: removal.step.label(),
                        config_path: removal.config_path.clone(),
                    }),
                })
                .collect(),
            warnings: effective.warnings.clone(),
        }
    }
}

/// One tool-call decision: `tools.call.check`, the `check` of `tools.call.request`, and
/// `gatehouse check --tool --json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDecisionJson {
    decision: &'static str,
    tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    call_id: Option<String>,
    reasons: Vec<ToolReasonJson>,
    files: Vec<ToolFileJson>,
    urls: Vec<ToolUrlJson>,
    exec: Option<DecisionJson>,
    grant: Option<GrantJson>,
}

#[derive(Debug, Clone, Serialize)]
struct ToolReasonJson {
    decision: &'static str,
    rule: String,
    message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolFileJson {
    op: &'static str,
    requested: String,
    path: String,
    existing: Option<FileIdentityJson>,
    in_workspace: bool,
}

#[derive(Debug, Clone, Serialize)]
struct FileIdentityJson {
    dev: u64,
    ino: u64,
    size: u64,
}

#[derive(Debug, Clone, Serialize)]
struct ToolUrlJson {
    url: String,
    host: String,
    port: u16,
    pinned: Vec<String>,
}

/// What an allow-always grant covers: `{tool, scope: "tool" | "paths" | "hosts", values}`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GrantJson {
    /// The canonical tool.
    pub tool: String,
    /// `tool`, `paths` or `hosts`.
    pub scope: &'static str,
    /// The paths or hosts (none for `tool`).
    pub values: Vec<String>,
}

impl From<&Grant> for GrantJson {
    fn from(grant: &Grant) -> Self {
        let (scope, values) = match &grant.scope {
            GrantScope::Tool => ("tool", Vec::new()),
            GrantScope::Paths(paths) => (
                "paths",
                paths.iter().map(|p| p.display().to_string()).collect(),
            ),
            GrantScope::Hosts(hosts) => ("hosts", hosts.iter().cloned().collect()),
        };
        GrantJson {
            tool: grant.tool.clone(),
            scope,
            values,
        }
    }
}

impl ToolDecisionJson {
    /// The decision as sent, naming the caller's `call_id`.
    pub fn new(decision: &ToolCallDecision, call_id: Option<&str>) -> Self {
        ToolDecisionJson {
            decision: decision.decision.as_str(),
            tool: decision.tool.clone(),
            call_id: call_id.map(str::to_owned),
            reasons: decision
                .reasons
                .iter()
                .map(|r| ToolReasonJson {
                    decision: r.decision.as_str(),
                    rule: r.rule.clone(),
                    message: r.message.clone(),
                })
                .collect(),
            files: decision
                .files
                .iter()
                .map(|f| ToolFileJson {
                    op: file_op(f.op),
                    requested: f.requested.clone(),
                    path: f.path.display().to_string(),
                    existing: f.existing.map(|id| FileIdentityJson {
                        dev: id.dev,
                        ino: id.ino,
                        size: id.size,
                    }),
                    in_workspace: f.in_workspace,
                })
                .collect(),
            urls: decision
                .urls
                .iter()
                .map(|u| ToolUrlJson {
                    url: u.url.clone(),
                    host: u.host.clone(),
                    port: u.port,
                    pinned: u.pinned.iter().map(ToString::to_string).collect(),
                })
                .collect(),
            exec: decision.exec.as_ref().map(DecisionJson::from),
            grant: decision.grant.as_ref().map(GrantJson::from),
        }
    }
}

fn file_op(op: FileOp) -> &'static str {
    match op {
        FileOp::Read => "read",
        FileOp::Write { .. } => "write",
        FileOp::Edit => "edit",
        FileOp::Delete => "delete",
    }
}
