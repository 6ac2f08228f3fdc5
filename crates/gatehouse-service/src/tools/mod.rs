//! The tool-call use cases: judge a call (`tools.call.check`), ask a person about it
//! (`tools.call.request`, through the same manager, store, events and chat cards as exec),
//! record what became of it (`tools.call.finished`), and the allow-always grants
//! (`tools.grants.list`, `tools.grants.revoke`).
//!
//! **Invariants.** A call the policy refuses is never put to a person: an approval cannot lift
//! a refusal (the agent host runs the tool itself, so an approved refusal would be a way
//! around the policy). Every decision, every request and every result is in the audit log,
//! a call's records tied together by its `callId` (the records' `runId`).

mod state;

use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalRequest, CreateApproval, Created, Severity, StoredGrant, ToolRequest,
    TurnSource,
};
use gatehouse_policy::exec::{Decision, ExecPolicy};
use gatehouse_policy::tool_call::ToolCallDecision;
use gatehouse_policy::tools::{first_entry_denoting, mcp_server_id, parse_mcp_tool_name};
use gatehouse_store::audit::AuditKind;
use serde_json::{Value, json};

pub(crate) use state::{CallEntry, ToolState};

use crate::approvals::full_id;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pipeline::{ExecContext, acting_for, invalid};
use crate::policy::report::{GrantJson, ToolDecisionJson};
use crate::policy::tool_call::{
    Gate, ToolSession, judge_tool_call, parse_params, salient, summary, tool_policy_inputs,
};
use crate::service::Service;

/// The use cases by the names their audit records carry.
const CHECK: &str = "tools.call.check";
const REQUEST: &str = "tools.call.request";
const FINISHED: &str = "tools.call.finished";
const REVOKE: &str = "tools.grants.revoke";

/// Longest call id, title, description and error text taken; each reaches approvers or the
/// audit log.
const MAX_CALL_ID_CHARS: usize = 256;
const MAX_TITLE_CHARS: usize = 200;
const MAX_DESCRIPTION_CHARS: usize = 4_000;
const MAX_ERROR_CHARS: usize = 4_000;

/// One tool call to judge.
#[derive(Debug, Clone, Default)]
pub struct ToolCallInput {
    /// The agent whose policy applies.
    pub agent_id: String,
    /// Its session.
    pub session_key: String,
    /// The tool as the agent host names it (`read`, `Bash`, `mcp__github__create_issue`).
    pub tool: String,
    /// Its parameters, in the reference's names.
    pub params: Value,
    /// The agent host's id of the call, tying `tools.call.finished` to this decision.
    pub call_id: Option<String>,
    /// Who is calling, as the tool policy sees it.
    pub session: ToolSession,
}

/// A tool call to ask a person about.
#[derive(Debug, Clone, Default)]
pub struct ToolRequestInput {
    /// The call.
    pub call: ToolCallInput,
    /// An approval id chosen by the requester (a full UUID).
    pub id: Option<String>,
    /// One line for approvers.
    pub title: Option<String>,
    /// More for approvers (several lines).
    pub description: Option<String>,
    /// How much is at stake, as the requester rates it.
    pub severity: Severity,
    /// How long a person has, instead of the configured timeout.
    pub timeout: Option<Duration>,
    /// Whether allow-always may be offered (the requester's `allowedDecisions` names it).
    pub allow_always: bool,
    /// Answer once the approval is stored, instead of once decided.
    pub two_phase: bool,
    /// The chat turn the call came from, where the card goes back to.
    pub turn_source: Option<TurnSource>,
}

/// What a tool request came to.
#[derive(Debug, Clone)]
pub enum ToolRequestOutcome {
    /// The policy refused the call; nobody was asked.
    Refused(Box<ToolCallDecision>),
    /// Two-phase: the approval is stored and announced; wait for it with `waitDecision`.
    Accepted {
        /// The approval.
        created: Created,
        /// The policy's decision the person is asked about.
        check: Box<ToolCallDecision>,
    },
    /// A person answered, or nobody did in time.
    Decided {
        /// The approval as it ended.
        record: Box<ApprovalRecord>,
        /// The policy's decision the person was asked about (its files and pinned addresses
        /// are what an allowed call uses).
        check: Box<ToolCallDecision>,
    },
}

/// What a tool call came to, as the agent host reports it.
#[derive(Debug, Clone, Default)]
pub struct ToolFinishedInput {
    /// The call's id, as sent with its check or request.
    pub call_id: String,
    /// Whether the tool succeeded.
    pub ok: bool,
    /// How long it ran.
    pub duration_ms: u64,
    /// Its error, when it failed.
    pub error: Option<String>,
}

/// The audit record of a finished call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFinished {
    /// Whether a decision for this call id (from this token) was found.
    pub matched: bool,
    /// That decision: `allow`, `ask` (still with a person), `deny`.
    pub decision: Option<&'static str>,
    /// The approval a person was asked in, if any.
    pub approval_id: Option<String>,
}

/// The exec policy a call of any tool but `exec` is decided with; it judges nothing.
static NO_EXEC: std::sync::LazyLock<ExecPolicy> = std::sync::LazyLock::new(ExecPolicy::default);

impl Service {
    /// `tools.call.check`: the decision for one tool call, every host name resolved. Audited.
    pub async fn tool_check(
        &self,
        caller: &dyn Caller,
        input: ToolCallInput,
    ) -> Result<ToolCallDecision, ServiceError> {
        let (decision, _) = self.judge_tool(caller, CHECK, &input).await?;
        self.record_decision(caller, CHECK, &input, &decision, None);
        Ok(decision)
    }

    /// `tools.call.request`: a person is asked about a call the policy does not refuse; the
    /// answer comes once decided, or at once with `two_phase`.
    pub async fn tool_request(
        &self,
        caller: &dyn Caller,
        input: ToolRequestInput,
    ) -> Result<ToolRequestOutcome, ServiceError> {
        if let Some(id) = &input.id {
            full_id(id)?;
        }
        bounded("title", input.title.as_deref(), MAX_TITLE_CHARS)?;
        bounded(
            "description",
            input.description.as_deref(),
            MAX_DESCRIPTION_CHARS,
        )?;
        let (check, exec) = self.judge_tool(caller, REQUEST, &input.call).await?;
        if check.decision == Decision::Deny {
            self.record_decision(caller, REQUEST, &input.call, &check, None);
            return Ok(ToolRequestOutcome::Refused(Box::new(check)));
        }
        let create = self.tool_approval(caller, &input, &check, exec.as_deref());
        let owner = caller.name();
        if input.two_phase {
            let route = self.has_approval_route(&create.request);
            let (created, _) = self.core().create(owner, create, route).await?;
            let id = created.id.to_string();
            self.record_decision(caller, REQUEST, &input.call, &check, Some(&id));
            return Ok(ToolRequestOutcome::Accepted {
                created,
                check: Box::new(check),
            });
        }
        let record = self.create_and_await(owner, create).await?;
        self.record_decision(caller, REQUEST, &input.call, &check, Some(&record.id));
        if let Some(call_id) = &input.call.call_id {
            let entry = CallEntry {
                agent_id: input.call.agent_id.clone(),
                tool: check.tool.clone(),
                decision: if record.state == gatehouse_approvals::ApprovalState::Allowed {
                    "allow"
                } else {
                    "deny"
                },
                approval_id: Some(record.id.clone()),
            };
            self.core().tools.remember(owner, call_id, entry);
        }
        Ok(ToolRequestOutcome::Decided {
            record: Box::new(record),
            check: Box::new(check),
        })
    }

    /// `tools.call.finished`: records what became of a call, tied to its decision by the call
    /// id (a call another token checked does not match).
    pub fn tool_finished(
        &self,
        caller: &dyn Caller,
        input: ToolFinishedInput,
    ) -> Result<ToolFinished, ServiceError> {
        if input.call_id.trim().is_empty() {
            return Err(invalid("`callId` is empty"));
        }
        bounded("callId", Some(&input.call_id), MAX_CALL_ID_CHARS)?;
        bounded("error", input.error.as_deref(), MAX_ERROR_CHARS)?;
        let entry = self.core().tools.recalled(caller.name(), &input.call_id);
        let finished = ToolFinished {
            matched: entry.is_some(),
            decision: entry.as_ref().map(|e| e.decision),
            approval_id: entry.as_ref().and_then(|e| e.approval_id.clone()),
        };
        self.core().audit(
            AuditKind::Execution,
            finished.approval_id.as_deref(),
            Some(&input.call_id),
            json!({
                "method": FINISHED,
                "by": caller.name(),
                "agentId": entry.as_ref().map(|e| e.agent_id.as_str()),
                "tool": entry.as_ref().map(|e| e.tool.as_str()),
                "decision": finished.decision,
                "matched": finished.matched,
                "ok": input.ok,
                "durationMs": input.duration_ms,
                "error": input.error,
            }),
        );
        Ok(finished)
    }

    /// `tools.grants.list`: the allow-always grants, oldest first, of one agent or of all.
    pub fn grants(&self, agent_id: Option<&str>) -> Vec<StoredGrant> {
        self.core().manager.grants(agent_id)
    }

    /// `tools.grants.revoke`: deletes a grant by id or unique prefix; no later call is covered
    /// by it. Audited with who revoked it.
    pub async fn revoke_grant(
        &self,
        caller: &dyn Caller,
        key: &str,
    ) -> Result<StoredGrant, ServiceError> {
        let revoked = self.core().manager.revoke_grant(key).await?;
        self.core().audit(
            AuditKind::Decision,
            Some(&revoked.id),
            None,
            json!({
                "method": REVOKE,
                "by": caller.name(),
                "grantId": revoked.id,
                "agentId": revoked.agent_id,
                "grant": GrantJson::from(&revoked.grant),
            }),
        );
        Ok(revoked)
    }

    /// Judges a call for `method`; for `exec`, also the exec policy it was judged under.
    async fn judge_tool(
        &self,
        caller: &dyn Caller,
        method: &'static str,
        input: &ToolCallInput,
    ) -> Result<(ToolCallDecision, Option<Arc<ExecPolicy>>), ServiceError> {
        acting_for(caller, &input.agent_id)?;
        if let Some(call_id) = &input.call_id {
            bounded("callId", Some(call_id), MAX_CALL_ID_CHARS)?;
        }
        let core = self.core();
        let tool = gatehouse_policy::tools::normalize_tool_name(&input.tool);
        let exec = if tool == "exec" {
            let context = ExecContext {
                agent_id: input.agent_id.clone(),
                session_key: Some(input.session_key.clone()).filter(|key| !key.is_empty()),
                level: None,
                sender: None,
            };
            Some(self.requested_policy(caller, method, &context)?.0)
        } else {
            None
        };
        let (inputs, effective) = tool_policy_inputs(&core.config, &input.agent_id, &input.session);
        let rules = core.tools.rules(&core.config, &input.agent_id);
        let grants = core.manager.grants_for(&input.agent_id);
        let gate = Gate {
            inputs: &inputs,
            effective: &effective,
            rules: &rules,
            exec: exec.as_deref().unwrap_or(&NO_EXEC),
            grants: &grants,
        };
        let parsed = parse_params(&tool, &input.params);
        let decision = judge_tool_call(&input.tool, parsed, gate, &core.tools.resolver).await;
        Ok((decision, exec))
    }

    /// The approval a tool request creates: the call as approvers read it, what allow-always
    /// would grant (allowlist patterns for `exec`), and the timeout its tool is given.
    fn tool_approval(
        &self,
        caller: &dyn Caller,
        input: &ToolRequestInput,
        check: &ToolCallDecision,
        exec: Option<&ExecPolicy>,
    ) -> CreateApproval {
        let call = &input.call;
        let shown = salient(&check.tool, &call.params);
        let mut request = ApprovalRequest {
            command: summary(&check.tool, &shown),
            agent_id: Some(call.agent_id.clone()),
            session_key: Some(call.session_key.clone()).filter(|key| !key.is_empty()),
            turn_source: input.turn_source.clone(),
            requested_by: Some(caller.name().to_owned()),
            ..ApprovalRequest::default()
        };
        let mut patterns = Vec::new();
        if let (Some(evaluation), Some(policy)) = (&check.exec, exec) {
            // `exec` asks as an exec approval does: its command, where it runs, under which
            // settings, and allow-always adds allowlist entries.
            request.command = field(&shown, "command").unwrap_or_default();
            request.cwd = field(&shown, "cwd");
            request.resolved_path = evaluation
                .segments
                .first()
                .and_then(|s| s.resolved_path.as_ref())
                .map(|p| p.display().to_string());
            request.security = Some(policy.security);
            request.ask = Some(policy.ask);
            patterns = evaluation.allow_always_patterns.clone();
        }
        if !input.allow_always {
            patterns.clear();
        }
        request.tool = Some(ToolRequest {
            tool: check.tool.clone(),
            call_id: call.call_id.clone(),
            params: shown,
            title: input.title.clone().filter(|t| !t.trim().is_empty()),
            description: input.description.clone().filter(|d| !d.trim().is_empty()),
            severity: input.severity,
            reasons: check.reasons.iter().map(ToString::to_string).collect(),
            grant: check.grant.clone().filter(|_| input.allow_always),
        });
        CreateApproval {
            id: input.id.clone(),
            request,
            timeout: input.timeout.or_else(|| self.tool_timeout(&check.tool)),
            allow_always_patterns: patterns,
        }
    }

    /// `approvals.tools.byTool` (an entry with the tool's own name first, then the first in
    /// key order naming it), else `approvals.tools.timeout`; `None` leaves the default.
    fn tool_timeout(&self, tool: &str) -> Option<Duration> {
        let config = self.core().config.approvals.tools.as_ref()?;
        let plugin = parse_mcp_tool_name(tool).map(|(server, _)| mcp_server_id(server));
        let entries: Vec<String> = config.by_tool.keys().cloned().collect();
        let exact = config
            .by_tool
            .iter()
            .find(|(key, _)| gatehouse_policy::tools::normalize_tool_name(key) == tool)
            .map(|(_, timeout)| *timeout);
        exact
            .or_else(|| {
                first_entry_denoting(&entries, tool, plugin.as_deref())
                    .and_then(|entry| config.by_tool.get(entry).copied())
            })
            .or(config.timeout)
    }

    /// The audit record of a decision: who asked, the call as approvers would read it, and
    /// the decision as the caller got it; tied to the call by its id.
    fn record_decision(
        &self,
        caller: &dyn Caller,
        method: &str,
        input: &ToolCallInput,
        decision: &ToolCallDecision,
        approval_id: Option<&str>,
    ) {
        let core = self.core();
        if method == CHECK
            && let Some(call_id) = &input.call_id
        {
            let entry = CallEntry {
                agent_id: input.agent_id.clone(),
                tool: decision.tool.clone(),
                decision: decision.decision.as_str(),
                approval_id: None,
            };
            core.tools.remember(caller.name(), call_id, entry);
        } else if let (Some(call_id), Some(id)) = (&input.call_id, approval_id) {
            let entry = CallEntry {
                agent_id: input.agent_id.clone(),
                tool: decision.tool.clone(),
                decision: "ask",
                approval_id: Some(id.to_owned()),
            };
            core.tools.remember(caller.name(), call_id, entry);
        }
        let answer = ToolDecisionJson::new(decision, input.call_id.as_deref());
        let params: Vec<Value> = salient(&decision.tool, &input.params)
            .into_iter()
            .map(|(name, value)| json!([name, value]))
            .collect();
        core.audit(
            AuditKind::Decision,
            approval_id,
            input.call_id.as_deref(),
            json!({
                "method": method,
                "by": caller.name(),
                "agentId": input.agent_id,
                "sessionKey": input.session_key,
                "params": params,
                "answer": answer,
            }),
        );
    }
}

/// The value of one of the shown parameters.
fn field(shown: &[(String, String)], name: &str) -> Option<String> {
    shown
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.clone())
}

/// Refuses a text longer than `max` characters, naming the parameter.
fn bounded(name: &str, text: Option<&str>, max: usize) -> Result<(), ServiceError> {
    match text {
        Some(text) if text.chars().count() > max => {
            Err(invalid(format!("`{name}` is longer than {max} characters")))
        }
        _ => Ok(()),
    }
}
