//! What the Control UI reads besides pending approvals: the searchable history, the audit log
//! with its verdict, and one agent's effective policy.

use std::collections::BTreeMap;

use gatehouse_service::{
    AgentPolicyView, AuditEntry, AuditVerdict, ElevatedView, HistoryPage, HistoryQuery,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::exec::ApprovalJson;

/// `exec.approval.history` params; every filter given must match.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct HistoryParams {
    pub(crate) query: Option<String>,
    pub(crate) agent_id: Option<String>,
    /// `allowed-once`, `allowed-always`, `denied`, `expired` or `cancelled`.
    pub(crate) outcome: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) resolved_by: Option<String>,
    #[serde(default)]
    pub(crate) offset: usize,
    pub(crate) limit: Option<usize>,
}

impl HistoryParams {
    /// The query, with `outcome` already parsed by the caller.
    pub(crate) fn into_query(self, outcome: Option<gatehouse_service::Outcome>) -> HistoryQuery {
        HistoryQuery {
            text: self.query,
            agent_id: self.agent_id,
            outcome,
            tool: self.tool,
            resolved_by: self.resolved_by,
            offset: self.offset,
            limit: self.limit.unwrap_or(50),
        }
    }
}

/// `exec.approval.history` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HistoryResult {
    approvals: Vec<ApprovalJson>,
    total: usize,
    offset: usize,
    /// `false` when older approvals lay beyond the searched window.
    complete: bool,
    window: usize,
}

impl HistoryResult {
    pub(crate) fn new(page: &HistoryPage, offset: usize) -> Self {
        HistoryResult {
            approvals: page.approvals.iter().map(ApprovalJson::from).collect(),
            total: page.total,
            offset,
            complete: page.complete,
            window: gatehouse_service::HISTORY_WINDOW,
        }
    }
}

/// `audit.verify` result, the same fields as `gatehouse audit verify --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditVerifyResult {
    valid: bool,
    files: Vec<String>,
    records: u64,
    last_seq: u64,
    anchored_seq: Option<u64>,
    problem: Option<AuditProblemJson>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AuditProblemJson {
    file: String,
    line: Option<u64>,
    seq: Option<u64>,
    kind: &'static str,
    message: String,
}

impl From<AuditVerdict> for AuditVerifyResult {
    fn from(verdict: AuditVerdict) -> Self {
        AuditVerifyResult {
            valid: verdict.problem.is_none(),
            files: verdict
                .files
                .iter()
                .map(|file| file.display().to_string())
                .collect(),
            records: verdict.records,
            last_seq: verdict.last_seq,
            anchored_seq: verdict.anchored_seq,
            problem: verdict.problem.map(|problem| AuditProblemJson {
                file: problem.file.display().to_string(),
                line: problem.line,
                seq: problem.seq,
                kind: problem.code,
                message: problem.message,
            }),
        }
    }
}

/// `audit.tail` params.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AuditTailParams {
    pub(crate) limit: Option<usize>,
}

/// `audit.tail` result: records as stored, oldest first.
#[derive(Debug, Serialize)]
pub(crate) struct AuditTailResult {
    pub(crate) records: Vec<AuditRecordJson>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditRecordJson {
    seq: u64,
    at_ms: u64,
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id: Option<String>,
    payload: Value,
}

impl From<AuditEntry> for AuditRecordJson {
    fn from(entry: AuditEntry) -> Self {
        AuditRecordJson {
            seq: entry.seq,
            at_ms: entry.at_ms,
            kind: entry.kind,
            approval_id: entry.approval_id,
            run_id: entry.run_id,
            payload: entry.payload,
        }
    }
}

/// `exec.policy.effective` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AgentPolicyParams {
    pub(crate) agent_id: String,
}

/// `exec.policy.effective` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentPolicyJson {
    agent_id: String,
    security: &'static str,
    ask: &'static str,
    ask_fallback: &'static str,
    safe_bins: Vec<String>,
    strict_inline_eval: bool,
    auto_allow_skills: bool,
    allowlist: Vec<AllowlistEntryJson>,
    elevated: ElevatedJson,
    known_agents: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AllowlistEntryJson {
    pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    arg_pattern: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ElevatedJson {
    enabled: bool,
    global_enabled: bool,
    agent_enabled: Option<bool>,
    allow_from: BTreeMap<String, Vec<String>>,
    agent_allow_from: Option<BTreeMap<String, Vec<String>>>,
    default_level: Option<&'static str>,
}

impl From<ElevatedView> for ElevatedJson {
    fn from(view: ElevatedView) -> Self {
        ElevatedJson {
            enabled: view.enabled,
            global_enabled: view.global_enabled,
            agent_enabled: view.agent_enabled,
            allow_from: view.allow_from,
            agent_allow_from: view.agent_allow_from,
            default_level: view.default_level,
        }
    }
}

impl From<AgentPolicyView> for AgentPolicyJson {
    fn from(view: AgentPolicyView) -> Self {
        AgentPolicyJson {
            agent_id: view.agent_id,
            security: view.security.as_str(),
            ask: view.ask.as_str(),
            ask_fallback: view.ask_fallback.as_str(),
            safe_bins: view.safe_bins,
            strict_inline_eval: view.strict_inline_eval,
            auto_allow_skills: view.auto_allow_skills,
            allowlist: view
                .allowlist
                .into_iter()
                .map(|entry| AllowlistEntryJson {
                    pattern: entry.pattern,
                    arg_pattern: entry.arg_pattern,
                })
                .collect(),
            elevated: view.elevated.into(),
            known_agents: view.known_agents,
        }
    }
}
