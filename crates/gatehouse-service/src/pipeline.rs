//! The one path every exec request takes, whether it asks a person (`exec.approval.request`),
//! runs (`system.run`) or only asks what would happen (`exec.policy.check`): the elevated level
//! over the agent's policy, the evaluation, the approval as stored and shown, the wait for a
//! person, and what the answer (or its absence) decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gatehouse_approvals::{ApprovalRecord, ApprovalRequest, ApprovalState, RunBinding, TurnSource};
use gatehouse_policy::Security;
use gatehouse_policy::elevated::{ElevatedLevel, ResolvedLevel, SenderIdentity};
use gatehouse_policy::exec::{ApprovalSummary, ExecEvaluation, ExecPolicy, ExecRequest, evaluate};
use gatehouse_policy::requirement::{ApprovalOutcome, FallbackResult, resolve_approval};
use gatehouse_sandbox::{Placement, SandboxSettings};

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::policy::elevated::{LevelRequest, apply_elevated_level};
use crate::policy::request::BaseVars;
use crate::service::Service;

/// The use cases by the names their audit records and elevated refusals carry.
pub(crate) const CHECK: &str = "exec.policy.check";
pub(crate) const REQUEST: &str = "exec.approval.request";
pub(crate) const RUN: &str = "system.run";

/// Whose settings apply to an exec request, and under which elevated level.
#[derive(Debug, Clone, Default)]
pub struct ExecContext {
    /// The agent whose policy, gates and allowlist apply.
    pub agent_id: String,
    /// The session whose stored `/elevated` level applies, if the request names one.
    pub session_key: Option<String>,
    /// The request's own `/elevated` level, above the session's and the default.
    pub level: Option<ElevatedLevel>,
    /// The chat sender who asked for `level`; required above `off`.
    pub sender: Option<SenderIdentity>,
}

/// Where a request's run goes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// On the gateway host (a session that is not sandboxed, or one `/elevated` moved there;
    /// a refused host exec is a policy of security `deny`).
    Host,
    /// Under bubblewrap, with the agent's sandbox settings.
    Sandbox(Box<SandboxSettings>),
}

impl Target {
    /// How approvers and the audit log name it (`exec.approval.requested`'s `host`).
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Target::Host => "gateway",
            Target::Sandbox(_) => "sandbox",
        }
    }
}

/// A request judged: the policy it runs under (after its elevated level), the agent's
/// `askFallback`, the level that applied, where it would run, and the evaluation.
pub(crate) struct Judged {
    pub(crate) policy: Arc<ExecPolicy>,
    pub(crate) ask_fallback: Security,
    pub(crate) level: ResolvedLevel,
    pub(crate) target: Target,
    pub(crate) evaluation: ExecEvaluation,
}

impl Judged {
    /// What the answer on `record` decides: a person's decision, or `askFallback` when nobody
    /// answered in time (a cancelled approval counts as unanswered).
    pub(crate) fn verdict(&self, record: &ApprovalRecord) -> FallbackResult {
        let outcome = match (record.state, record.decision) {
            (ApprovalState::Allowed | ApprovalState::Denied, Some(decision)) => {
                ApprovalOutcome::Decided(decision)
            }
            _ => ApprovalOutcome::TimedOut,
        };
        resolve_approval(
            outcome,
            self.ask_fallback,
            self.policy.security,
            self.evaluation.analysis_ok,
            self.evaluation.allowlist_satisfied,
        )
    }
}

/// What an approval asks about, beside the agent's context: as approvers see it and as it is
/// bound.
pub(crate) struct Asked<'a> {
    pub(crate) command: String,
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a BTreeMap<String, String>,
    pub(crate) host: Option<String>,
    pub(crate) resolved_path: Option<PathBuf>,
    pub(crate) turn_source: Option<TurnSource>,
    pub(crate) binding: Option<RunBinding>,
    pub(crate) summary: ApprovalSummary,
}

impl Service {
    /// The policy `context` runs under and where it would run, then the request `read` makes
    /// (once the policy is known, so a refused agent or level is reported before a malformed
    /// command, and with the `PATH` and `HOME` of where it runs) judged by it. The agent must
    /// be one the caller may act for; the level the request, its session or the default asks
    /// for is checked at the same gates as `/elevated` typed in a chat.
    pub(crate) fn judge(
        &self,
        caller: &dyn Caller,
        method: &'static str,
        context: &ExecContext,
        read: impl FnOnce(&BaseVars) -> Result<ExecRequest, ServiceError>,
    ) -> Result<(ExecRequest, Judged), ServiceError> {
        let (policy, ask_fallback, level, target) =
            self.requested_policy(caller, method, context)?;
        let base = match &target {
            Target::Host => BaseVars::host(),
            Target::Sandbox(settings) => match self.core().sandboxes.home() {
                Some(home) => {
                    BaseVars::sandbox(gatehouse_sandbox::search_path(settings, home), home)
                }
                // Refused when planned; judged as on the host meanwhile.
                None => BaseVars::host(),
            },
        };
        let request = read(&base)?;
        let evaluation = evaluate(&request, &policy);
        let judged = Judged {
            policy,
            ask_fallback,
            level,
            target,
            evaluation,
        };
        Ok((request, judged))
    }

    /// The exec policy a request runs under, with the agent's `askFallback`, the elevated
    /// level that was applied and where the run goes: a sandboxed session stays in the sandbox
    /// unless a level above `off` moves it to the host (`gatehouse_sandbox::placement`).
    pub(crate) fn requested_policy(
        &self,
        caller: &dyn Caller,
        method: &'static str,
        context: &ExecContext,
    ) -> Result<(Arc<ExecPolicy>, Security, ResolvedLevel, Target), ServiceError> {
        acting_for(caller, &context.agent_id)?;
        let core = self.core();
        let agent = core.policy(&context.agent_id)?;
        let sandboxing = core.sandboxes.sandboxing(
            &context.agent_id,
            context.session_key.as_deref().unwrap_or_default(),
        );
        let level = LevelRequest {
            method,
            agent_id: &context.agent_id,
            session_key: context.session_key.as_deref(),
            level: context.level,
            sender: context.sender.clone(),
            sandboxed: sandboxing.is_some(),
        };
        let stored = level
            .session_key
            .zip(self.chat())
            .and_then(|(key, chat)| chat.sessions.stored_level(key));
        let (policy, resolved, placement) =
            apply_elevated_level(core, stored, caller.name(), &level, agent.policy)?;
        let target = match (placement, sandboxing) {
            (Placement::Sandbox, Some(settings)) => Target::Sandbox(Box::new(settings.clone())),
            _ => Target::Host,
        };
        Ok((policy, agent.ask_fallback, resolved, target))
    }

    /// The approval as stored and shown to approvers.
    pub(crate) fn approval_request(
        caller: &dyn Caller,
        context: &ExecContext,
        judged: &Judged,
        asked: Asked<'_>,
    ) -> ApprovalRequest {
        ApprovalRequest {
            command: asked.command,
            argv: asked.argv,
            cwd: Some(asked.cwd.display().to_string()),
            env_keys: asked.env.keys().cloned().collect(),
            host: asked.host,
            agent_id: Some(context.agent_id.clone()),
            session_key: context.session_key.clone(),
            resolved_path: asked.resolved_path.map(|path| path.display().to_string()),
            security: Some(judged.policy.security),
            ask: Some(judged.policy.ask),
            turn_source: asked.turn_source,
            binding: asked.binding,
            requested_by: Some(caller.name().to_owned()),
            summary: Some(asked.summary),
            tool: None,
        }
    }
}

/// Refuses a request naming an agent its caller may not act for.
pub(crate) fn acting_for(caller: &dyn Caller, agent_id: &str) -> Result<(), ServiceError> {
    if caller.may_act_for(agent_id) {
        Ok(())
    } else {
        Err(ServiceError::AgentNotAllowed {
            token: caller.name().to_owned(),
            agent: agent_id.to_owned(),
        })
    }
}

/// An input the use case cannot take, saying why.
pub(crate) fn invalid(reason: impl Into<String>) -> ServiceError {
    ServiceError::Invalid {
        reason: reason.into(),
    }
}
