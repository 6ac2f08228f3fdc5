//! Params, results and event payloads of `exec.*`, `tools.effective` and `system.run`.
//!
//! The service's inputs, records and events are converted here by hand, field by field, so the
//! service's or the manager's types can change without changing the protocol.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use gatehouse_approvals::{ApprovalRecord, ApprovalRequest, EventKind, Offered, TurnSource};
use gatehouse_policy::elevated::{ElevatedLevel, SenderIdentity};
use gatehouse_policy::exec::ApprovalSummary;
use gatehouse_service::{
    ApprovalView, CheckInput, Decided, ExecContext, Fallback, FileView, LoggedRun, RequestInput,
    RunEvent, RunInput, RunOutcome, ToolsInput,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use super::chat::SenderJson;

/// Declares the params of an exec method. What to run (`argv`, `cwd`, `env`) and the elevated
/// level asked for (`elevated`, `sender`) are spelt the same in every exec method, so they are
/// written once, here; each method adds its own fields before and after what to run. The order
/// of the fields is the protocol's (`serde` lists them in order when it refuses an unknown one).
macro_rules! exec_params {
    (
        $(#[$meta:meta])*
        $name:ident {
            $($(#[$before_meta:meta])* $before:ident: $before_ty:ty,)*
        } {
            $($(#[$after_meta:meta])* $after:ident: $after_ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub(crate) struct $name {
            $($(#[$before_meta])* pub(crate) $before: $before_ty,)*
            pub(crate) argv: Option<Vec<String>>,
            pub(crate) cwd: PathBuf,
            #[serde(default)]
            pub(crate) env: BTreeMap<String, String>,
            $($(#[$after_meta])* pub(crate) $after: $after_ty,)*
            /// This request's own `/elevated` level, above the session's and the default.
            #[serde(default, deserialize_with = "elevated_level")]
            pub(crate) elevated: Option<ElevatedLevel>,
            /// The chat sender who asked for `elevated`; required above `off`.
            #[serde(default)]
            pub(crate) sender: Option<SenderJson>,
        }

        impl $name {
            /// Whose settings the request runs under, as the service takes it.
            fn context(&self) -> ExecContext {
                ExecContext {
                    agent_id: self.agent_id.clone(),
                    session_key: self.session_key.clone().into(),
                    level: self.elevated,
                    sender: self.sender.as_ref().map(SenderIdentity::from),
                }
            }
        }
    };
}

exec_params! {
    /// `exec.policy.check` params: like a `gatehouse check --jsonl` line, with the agent required.
    CheckParams {
        command: Option<String>,
    } {
        agent_id: String,
        /// The session whose `/elevated` level applies; without it only `elevated` and
        /// `elevatedDefault` can change the configured policy.
        #[serde(default)]
        session_key: Option<String>,
    }
}

/// Reads `elevated` with the canonical spellings only (`off`, `on`, `ask`, `full`, as config
/// writes them), so a typo is refused with the valid levels instead of meaning anything.
fn elevated_level<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ElevatedLevel>, D::Error> {
    Option::<String>::deserialize(deserializer)?
        .map(|raw| raw.parse().map_err(serde::de::Error::custom))
        .transpose()
}

/// `tools.effective` params: the flags of `gatehouse tools`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ToolsParams {
    pub(crate) agent_id: String,
    pub(crate) provider: Option<String>,
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) owner: bool,
    #[serde(default)]
    pub(crate) sandboxed: bool,
    #[serde(default)]
    pub(crate) spawn_depth: u32,
}

/// `turnSource`: where the agent's turn came from.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TurnSourceJson {
    channel: Option<String>,
    to: Option<String>,
    account_id: Option<String>,
    thread_id: Option<String>,
}

impl TurnSourceJson {
    pub(crate) fn to_store(&self) -> TurnSource {
        TurnSource {
            channel: self.channel.clone(),
            to: self.to.clone(),
            account_id: self.account_id.clone(),
            thread_id: self.thread_id.clone(),
        }
    }
}

exec_params! {
    /// `exec.approval.request` params.
    RequestParams {
        id: Option<String>,
        command: String,
    } {
        host: Option<String>,
        agent_id: String,
        session_key: String,
        timeout_ms: Option<u64>,
        #[serde(default)]
        two_phase: bool,
        turn_source: Option<TurnSourceJson>,
    }
}

exec_params! {
    /// `system.run` params: exactly one of `command` (a shell string) and `argv`.
    RunParams {
        /// The approval's id, if a person must be asked (as `exec.approval.request`'s `id`), so
        /// the requester can name the approval while it waits.
        id: Option<String>,
        command: Option<String>,
    } {
        agent_id: String,
        session_key: String,
        timeout_ms: Option<u64>,
        approval_timeout_ms: Option<u64>,
        turn_source: Option<TurnSourceJson>,
    }
}

impl From<CheckParams> for CheckInput {
    fn from(params: CheckParams) -> Self {
        let context = params.context();
        CheckInput {
            command: params.command,
            argv: params.argv,
            cwd: params.cwd,
            env: params.env,
            context,
        }
    }
}

impl From<RequestParams> for RequestInput {
    fn from(params: RequestParams) -> Self {
        let context = params.context();
        RequestInput {
            id: params.id,
            command: params.command,
            argv: params.argv,
            cwd: params.cwd,
            env: params.env,
            host: params.host,
            timeout: params.timeout_ms.map(Duration::from_millis),
            two_phase: params.two_phase,
            turn_source: params.turn_source.as_ref().map(TurnSourceJson::to_store),
            context,
        }
    }
}

impl From<RunParams> for RunInput {
    fn from(params: RunParams) -> Self {
        let context = params.context();
        RunInput {
            id: params.id,
            command: params.command,
            argv: params.argv,
            cwd: params.cwd,
            env: params.env,
            timeout: params.timeout_ms.map(Duration::from_millis),
            approval_timeout: params.approval_timeout_ms.map(Duration::from_millis),
            turn_source: params.turn_source.as_ref().map(TurnSourceJson::to_store),
            context,
        }
    }
}

impl From<ToolsParams> for ToolsInput {
    fn from(params: ToolsParams) -> Self {
        ToolsInput {
            agent_id: params.agent_id,
            provider: params.provider,
            model: params.model,
            owner: params.owner,
            sandboxed: params.sandboxed,
            spawn_depth: params.spawn_depth,
        }
    }
}

/// Params naming one approval by full id (`waitDecision`, `get`) or id or prefix (`get`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IdParams {
    pub(crate) id: String,
}

/// `exec.approval.resolve` params: `id` may be a unique prefix.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResolveParams {
    pub(crate) id: String,
    pub(crate) decision: String,
    pub(crate) reason: Option<String>,
}

/// `exec.approval.list` params.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ListParams {
    pub(crate) state: Option<String>,
    pub(crate) agent_id: Option<String>,
    pub(crate) limit: Option<usize>,
    /// `oldest-first` (the default) or `newest-first`.
    pub(crate) order: Option<String>,
}

/// `exec.approvals.set` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SetFileParams {
    pub(crate) file: Value,
    pub(crate) base_hash: String,
}

/// `exec.approvals.get` / `.set` result: the file with its token redacted, and its hash.
#[derive(Debug, Serialize)]
pub(crate) struct FileResult {
    pub(crate) file: Value,
    pub(crate) hash: String,
    pub(crate) exists: bool,
}

/// A two-phase `exec.approval.request` acknowledgement.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Accepted {
    pub(crate) status: &'static str,
    pub(crate) id: String,
    pub(crate) created_at_ms: u64,
    pub(crate) expires_at_ms: u64,
}

/// What an approval came to: the blocking `exec.approval.request`, `waitDecision`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DecisionResult {
    pub(crate) id: String,
    pub(crate) state: &'static str,
    pub(crate) decision: Option<&'static str>,
    pub(crate) resolved_by: Option<String>,
    pub(crate) reason: Option<String>,
    pub(crate) created_at_ms: u64,
    pub(crate) expires_at_ms: u64,
    /// For an approval nobody answered: what `askFallback` made of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fallback: Option<FallbackJson>,
}

/// The `askFallback` outcome of an unanswered approval.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FallbackJson {
    pub(crate) ask_fallback: &'static str,
    pub(crate) approved: bool,
    pub(crate) denied_reason: Option<&'static str>,
}

impl From<Fallback> for FallbackJson {
    fn from(fallback: Fallback) -> Self {
        FallbackJson {
            ask_fallback: fallback.ask_fallback.as_str(),
            approved: fallback.approved,
            denied_reason: fallback.denied_reason.map(|reason| reason.as_str()),
        }
    }
}

impl DecisionResult {
    pub(crate) fn from_record(record: &ApprovalRecord) -> Self {
        Self {
            id: record.id.clone(),
            state: record.state.as_str(),
            decision: record.decision.map(|d| d.as_str()),
            resolved_by: record.resolved_by.clone(),
            reason: record.reason.clone(),
            created_at_ms: record.created_at_ms,
            expires_at_ms: record.expires_at_ms,
            fallback: None,
        }
    }
}

/// `exec.approval.resolve` result: whether this answer won, and the winner.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResolveResult {
    pub(crate) id: String,
    pub(crate) applied: bool,
    pub(crate) state: &'static str,
    pub(crate) decision: Option<&'static str>,
    pub(crate) resolved_by: Option<String>,
    /// Ids of allowlist entries an applied allow-always added.
    pub(crate) allowlist_added: Vec<String>,
    /// Set when allow-always was decided but persisting its patterns failed: the decision
    /// stands for this run, the next run asks again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) allowlist_error: Option<String>,
}

/// One stored approval, as `get` and `list` return it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApprovalJson {
    id: String,
    state: &'static str,
    decision: Option<&'static str>,
    resolved_by: Option<String>,
    reason: Option<String>,
    created_at_ms: u64,
    expires_at_ms: u64,
    resolved_at_ms: Option<u64>,
    consumed_at_ms: Option<u64>,
    /// What an operator may still answer; empty once the approval left `pending`, so a client
    /// that loaded it from a list (not from the `requested` event) offers the same buttons.
    allowed_decisions: Vec<&'static str>,
    request: RequestJson,
}

impl From<&Decided> for ResolveResult {
    fn from(decided: &Decided) -> Self {
        let winner = decided.outcome.winner();
        ResolveResult {
            id: winner.id.clone(),
            applied: decided.outcome.applied(),
            state: winner.state.as_str(),
            decision: winner.decision.map(|d| d.as_str()),
            resolved_by: winner.resolved_by.clone(),
            allowlist_added: decided.allowlist_added.clone(),
            allowlist_error: decided.allowlist_error.clone(),
        }
    }
}

impl From<&ApprovalView> for ApprovalJson {
    fn from(view: &ApprovalView) -> Self {
        ApprovalJson::new(&view.record, view.offered)
    }
}

impl ApprovalJson {
    /// The record as sent, with the decisions still `offered` (`None` once settled).
    fn new(record: &ApprovalRecord, offered: Option<Offered>) -> Self {
        Self {
            id: record.id.clone(),
            state: record.state.as_str(),
            decision: record.decision.map(|d| d.as_str()),
            resolved_by: record.resolved_by.clone(),
            reason: record.reason.clone(),
            created_at_ms: record.created_at_ms,
            expires_at_ms: record.expires_at_ms,
            resolved_at_ms: record.resolved_at_ms,
            consumed_at_ms: record.consumed_at_ms,
            allowed_decisions: offered.map(offered_names).unwrap_or_default(),
            request: RequestJson::from(&record.request),
        }
    }
}

/// `exec.approval.list` result.
#[derive(Debug, Serialize)]
pub(crate) struct ListResult {
    pub(crate) approvals: Vec<ApprovalJson>,
}

/// What was asked, as approvers see it; env values and the binding are never sent.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestJson {
    command: String,
    argv: Vec<String>,
    cwd: Option<String>,
    env_keys: Vec<String>,
    host: Option<String>,
    agent_id: Option<String>,
    session_key: Option<String>,
    resolved_path: Option<String>,
    security: Option<&'static str>,
    ask: Option<&'static str>,
    turn_source: Option<TurnSourceJson>,
    bound: bool,
    summary: Option<SummaryJson>,
    /// What approvers are told of a tool call other than an exec command; `null` for exec.
    tool: Option<super::tools::ToolRequestJson>,
}

/// What approvers are shown of what runs (the policy's approval summary).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryJson {
    /// Every program of the chain, in order.
    programs: Vec<ProgramJson>,
    /// The requester's variable names (never their values).
    env_names: Vec<String>,
    /// The exact patterns allow-always would store; empty when it stores nothing.
    allow_always_patterns: Vec<String>,
}

/// One program of the chain.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgramJson {
    argv: Vec<String>,
    resolved_path: Option<String>,
    looked_through: Vec<String>,
    /// `allowlist`, `safeBins`, `skills`, `builtin`; `null` when a person decides.
    satisfied_by: Option<&'static str>,
    reason: String,
}

impl From<&ApprovalSummary> for SummaryJson {
    fn from(summary: &ApprovalSummary) -> Self {
        Self {
            programs: summary
                .programs
                .iter()
                .map(|program| ProgramJson {
                    argv: program.argv.clone(),
                    resolved_path: program
                        .resolved_path
                        .as_ref()
                        .map(|path| path.display().to_string()),
                    looked_through: program.looked_through.clone(),
                    satisfied_by: program.satisfied_by.map(|by| by.as_str()),
                    reason: program.reason.clone(),
                })
                .collect(),
            env_names: summary.env_names.clone(),
            allow_always_patterns: summary.allow_always_patterns.clone(),
        }
    }
}

impl From<&ApprovalRequest> for RequestJson {
    fn from(request: &ApprovalRequest) -> Self {
        Self {
            command: request.command.clone(),
            argv: request.argv.clone(),
            cwd: request.cwd.clone(),
            env_keys: request.env_keys.clone(),
            host: request.host.clone(),
            agent_id: request.agent_id.clone(),
            session_key: request.session_key.clone(),
            resolved_path: request.resolved_path.clone(),
            security: request.security.map(|s| s.as_str()),
            ask: request.ask.map(|a| a.as_str()),
            turn_source: request.turn_source.as_ref().map(|t| TurnSourceJson {
                channel: t.channel.clone(),
                to: t.to.clone(),
                account_id: t.account_id.clone(),
                thread_id: t.thread_id.clone(),
            }),
            bound: request.binding.is_some(),
            summary: request.summary.as_ref().map(SummaryJson::from),
            tool: request
                .tool
                .as_ref()
                .map(super::tools::ToolRequestJson::from),
        }
    }
}

/// `system.run` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunResult {
    pub(crate) run_id: String,
    /// `finished` or `denied`.
    pub(crate) status: &'static str,
    /// For `denied`: `user-denied`, `approval-timeout`, `no-approval-route`, `binding-mismatch`,
    /// `environment`, `sandbox`, `policy`.
    pub(crate) reason: Option<&'static str>,
    pub(crate) detail: Option<String>,
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) duration_ms: u64,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) stdout_truncated: bool,
    pub(crate) stderr_truncated: bool,
}

impl From<RunOutcome> for RunResult {
    fn from(outcome: RunOutcome) -> Self {
        match outcome {
            RunOutcome::Finished { run_id, finished } => RunResult {
                run_id: run_id.to_string(),
                status: "finished",
                reason: None,
                detail: None,
                exit_code: finished.exit_code,
                signal: finished.signal,
                timed_out: finished.timed_out,
                duration_ms: millis(finished.duration),
                stdout: String::from_utf8_lossy(&finished.stdout.bytes).into_owned(),
                stderr: String::from_utf8_lossy(&finished.stderr.bytes).into_owned(),
                stdout_truncated: finished.stdout.truncated,
                stderr_truncated: finished.stderr.truncated,
            },
            RunOutcome::Denied {
                run_id,
                denial,
                detail,
            } => RunResult {
                run_id: run_id.to_string(),
                status: "denied",
                reason: Some(denial.as_str()),
                detail: Some(detail),
                exit_code: None,
                signal: None,
                timed_out: false,
                duration_ms: 0,
                stdout: String::new(),
                stderr: String::new(),
                stdout_truncated: false,
                stderr_truncated: false,
            },
        }
    }
}

/// The event name and payload of one run event.
pub(crate) fn run_event(event: &RunEvent<'_>) -> (&'static str, Value) {
    match event {
        RunEvent::Running {
            run_id,
            agent_id,
            argv,
            cwd,
        } => (
            "exec.running",
            json!({
                "runId": run_id.to_string(),
                "agentId": agent_id,
                "argv": argv,
                "cwd": cwd.display().to_string(),
            }),
        ),
        RunEvent::Finished { run_id, finished } => (
            "exec.finished",
            json!({
                "runId": run_id.to_string(),
                "exitCode": finished.exit_code,
                "signal": finished.signal,
                "timedOut": finished.timed_out,
                "durationMs": millis(finished.duration),
                "stdoutTruncated": finished.stdout.truncated,
                "stderrTruncated": finished.stderr.truncated,
            }),
        ),
        RunEvent::Denied {
            run_id,
            denial,
            detail,
        } => (
            "exec.denied",
            json!({
                "runId": run_id.to_string(),
                "reason": denial.as_str(),
                "detail": detail,
            }),
        ),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl FileResult {
    /// The file as sent: its JSON, its hash and whether it exists.
    pub(crate) fn new(view: &FileView) -> Result<Self, serde_json::Error> {
        Ok(FileResult {
            file: serde_json::from_slice(&view.bytes)?,
            hash: view.hash.clone(),
            exists: view.exists,
        })
    }
}

/// The event name and payload of one approval event, or of a run event a shared log carries
/// among them (`None` when its body is not one this build can read).
pub(crate) fn approval_event(uuid: Uuid, kind: &EventKind) -> Option<(&'static str, Value)> {
    let id = uuid.to_string();
    Some(match kind {
        EventKind::Requested {
            request,
            offered,
            created_at_ms,
            expires_at_ms,
        } => (
            "exec.approval.requested",
            json!({
                "id": id,
                "request": RequestJson::from(request.as_ref()),
                "allowedDecisions": offered_names(*offered),
                "createdAtMs": created_at_ms,
                "expiresAtMs": expires_at_ms,
            }),
        ),
        EventKind::Resolved {
            decision,
            resolved_by,
            reason,
        } => (
            "exec.approval.resolved",
            json!({"id": id, "decision": decision.as_str(), "resolvedBy": resolved_by,
                   "reason": reason}),
        ),
        EventKind::Expired { reason } => {
            ("exec.approval.expired", json!({"id": id, "reason": reason}))
        }
        EventKind::Cancelled { reason } => (
            "exec.approval.cancelled",
            json!({"id": id, "reason": reason}),
        ),
        EventKind::Run { body } => {
            return LoggedRun::decode(uuid, body).map(|run| run_event(&run.event()));
        }
    })
}

fn offered_names(offered: Offered) -> Vec<&'static str> {
    offered
        .decisions()
        .into_iter()
        .map(|d| d.as_str())
        .collect()
}

/// `exec.approval.request` answer: at once for `twoPhase`, else once decided.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum RequestAnswer {
    /// `{status:"accepted", id, createdAtMs, expiresAtMs}`.
    Accepted(Accepted),
    /// The final outcome.
    Decided(DecisionResult),
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use gatehouse_policy::ApprovalDecision;

    use super::*;

    #[test]
    fn encodes_approval_events_exactly_as_the_protocol_says() {
        let id = Uuid::nil();
        let resolved = EventKind::Resolved {
            decision: ApprovalDecision::AllowAlways,
            resolved_by: "alice".into(),
            reason: Some("routine deploy".into()),
        };
        assert_eq!(
            approval_event(id, &resolved),
            Some((
                "exec.approval.resolved",
                json!({"id": id.to_string(), "decision": "allow-always", "resolvedBy": "alice",
                       "reason": "routine deploy"})
            ))
        );
        let requested = EventKind::Requested {
            request: Arc::new(ApprovalRequest {
                command: "ls".into(),
                env_keys: vec!["TOKEN".into()],
                ..ApprovalRequest::default()
            }),
            offered: Offered {
                allow_always: false,
            },
            created_at_ms: 1,
            expires_at_ms: 2,
        };
        let (name, payload) = approval_event(id, &requested).unwrap();
        assert_eq!(name, "exec.approval.requested");
        assert_eq!(payload["allowedDecisions"], json!(["allow-once", "deny"]));
        assert_eq!(payload["request"]["envKeys"], json!(["TOKEN"]));
        assert_eq!(payload["request"]["bound"], false);
    }

    #[test]
    fn answers_a_two_phase_request_with_the_accepted_shape() {
        let answer = RequestAnswer::Accepted(Accepted {
            status: "accepted",
            id: "x".into(),
            created_at_ms: 1,
            expires_at_ms: 2,
        });
        assert_eq!(
            serde_json::to_value(answer).unwrap(),
            json!({"status": "accepted", "id": "x", "createdAtMs": 1, "expiresAtMs": 2})
        );
    }
}
