//! `/elevated` levels: the gates from `tools.elevated`, and the level in force (request, session
//! or default) applied to the exec policy of every request, chat or not. Carrying out a
//! directive typed in a chat is the chat runtime's (`chat/directive.rs`), through these gates.
//!
//! **Invariant.** A level only narrows or widens the exec settings of an agent whose tool policy
//! allows `exec`; a tool-policy deny stays a deny whatever the level.

use std::collections::BTreeMap;
use std::sync::Arc;

use gatehouse_config::Config;
use gatehouse_config::model::{ElevatedConfig, ElevatedLevel as ConfigLevel};
use gatehouse_policy::Security;
use gatehouse_policy::elevated::{
    AgentElevatedGates, AllowFromEntry, ElevatedExec, ElevatedGates, ElevatedLevel, LevelChoices,
    LevelSource, ResolvedLevel, SenderIdentity, ToolVerdict, authorize_sender, elevated_exec,
    resolve_level,
};
use gatehouse_policy::exec::ExecPolicy;
use gatehouse_policy::tools::{Sandboxing, Sender, SessionContext, ToolPolicyInputs};
use gatehouse_sandbox::{Placement, placement};
use gatehouse_store::audit::AuditKind;
use serde_json::{Value, json};

use super::compose::effective_tools_at_depth;
use crate::core::Core;
use crate::error::ServiceError;

/// `tools.elevated` and the agent's narrowing gates. Unparsable `allowFrom` entries admit nobody
/// (they are dropped with a warning), never everybody.
pub(crate) fn gates(
    config: &Config,
    agent_id: Option<&str>,
) -> (ElevatedGates, Option<AgentElevatedGates>) {
    let global = config.tools.elevated.as_ref();
    let gates = ElevatedGates {
        enabled: global.is_some_and(|g| g.enabled.unwrap_or(true)),
        allow_from: global
            .map(|g| allow_from(&g.allow_from))
            .unwrap_or_default(),
    };
    let agent = agent_id.and_then(|id| {
        let entry = config.agents.list.iter().find(|agent| agent.id == id)?;
        let elevated: &ElevatedConfig = entry.tools.as_ref()?.elevated.as_ref()?;
        Some(AgentElevatedGates {
            agent_id: id.to_owned(),
            enabled: elevated.enabled,
            allow_from: (!elevated.allow_from.is_empty()).then(|| allow_from(&elevated.allow_from)),
        })
    });
    (gates, agent)
}

fn allow_from(raw: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<AllowFromEntry>> {
    raw.iter()
        .map(|(channel, entries)| {
            let parsed = entries
                .iter()
                .filter_map(|entry| match entry.parse::<AllowFromEntry>() {
                    Ok(parsed) => Some(parsed),
                    Err(error) => {
                        tracing::warn!(channel = %channel, error = %error, "Ignoring an elevated allowFrom entry.");
                        None
                    }
                })
                .collect();
            (channel.clone(), parsed)
        })
        .collect()
}

pub(crate) fn default_level(config: &Config) -> Option<ElevatedLevel> {
    let level = config.agents.defaults.as_ref()?.elevated_default?;
    Some(match level {
        ConfigLevel::Off => ElevatedLevel::Off,
        ConfigLevel::On => ElevatedLevel::On,
        ConfigLevel::Ask => ElevatedLevel::Ask,
        ConfigLevel::Full => ElevatedLevel::Full,
    })
}

/// Records an elevated change or refusal in the hash-chained audit log, beside the tracing
/// security event the chat core logs.
pub(crate) fn audit(core: &Core, session_key: &str, sender: &SenderIdentity, outcome: Value) {
    let mut payload = json!({
        "type": "elevated",
        "sessionKey": session_key,
        "channel": sender.channel,
        "senderId": sender.id,
    });
    if let (Some(payload), Some(outcome)) = (payload.as_object_mut(), outcome.as_object()) {
        payload.extend(outcome.clone());
    }
    core.audit(AuditKind::Decision, None, None, payload);
}

/// A session's stored level and who set it (unknown for a level stored before that was kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredLevel {
    pub(crate) level: ElevatedLevel,
    pub(crate) set_by: Option<SenderIdentity>,
    /// The token whose requests the level is for; `None` for any (stored before tokens were).
    pub(crate) bound_by: Option<String>,
}

/// Where one request's elevated level can come from, as the method received it.
pub(crate) struct LevelRequest<'a> {
    /// The method, for the refusal.
    pub(crate) method: &'static str,
    /// The agent whose gates and tool policy apply.
    pub(crate) agent_id: &'a str,
    /// The session whose stored level applies, if the method names one.
    pub(crate) session_key: Option<&'a str>,
    /// The request's own `elevated` param.
    pub(crate) level: Option<ElevatedLevel>,
    /// The chat sender who asked for `level`, checked against `tools.elevated.allowFrom` as
    /// `/elevated` typed in a chat would be.
    pub(crate) sender: Option<SenderIdentity>,
    /// Whether the session runs sandboxed (`sandbox.mode`), where level `off` keeps it.
    pub(crate) sandboxed: bool,
}

/// The exec policy for one request after its elevated level (request > session > default),
/// and where its run goes (`gatehouse_sandbox::placement`): unchanged when no level is set or
/// a stored one meets closed gates; for `off`, unchanged in the sandbox of a sandboxed session
/// and host exec refused (security `deny`) on any other; refused for a tool-policy deny; else
/// the level's security and ask, on the host. `stored` is the session's
/// stored level, if the request names a session and a chat runtime keeps levels. A request that
/// itself asks for more than `off` must name the sender who asked, and is refused with
/// [`ServiceError::ElevatedUnavailable`] (and audited) when the gates are closed or that sender
/// is not allowed, never quietly run under another level: otherwise any agent token could skip
/// approvals by asking for `full`.
pub(crate) fn apply_elevated_level(
    core: &Core,
    stored: Option<StoredLevel>,
    token: &str,
    request: &LevelRequest<'_>,
    mut policy: Arc<ExecPolicy>,
) -> Result<(Arc<ExecPolicy>, ResolvedLevel, Placement), ServiceError> {
    let config = &core.config;
    let (gates, agent) = gates(config, Some(request.agent_id));
    if let Some(level) = request.level.filter(|level| *level != ElevatedLevel::Off) {
        let refusal = match &request.sender {
            None => Some(
                "a per-request level above `off` needs the `sender` who asked for it".to_owned(),
            ),
            Some(sender) => authorize_sender(&gates, agent.as_ref(), sender)
                .err()
                .map(|denial| denial.to_string()),
        };
        if let Some(reason) = refusal {
            tracing::warn!(method = request.method, agent_id = ?request.agent_id, level = %level.as_str(), reason = %reason, "Per-request elevated level refused.");
            if let Some(sender) = &request.sender {
                audit(
                    core,
                    request.session_key.unwrap_or(""),
                    sender,
                    json!({"outcome": "refused", "level": level.as_str(), "reason": reason, "method": request.method}),
                );
            }
            return Err(ServiceError::ElevatedUnavailable {
                method: request.method.to_owned(),
                level: level.as_str(),
                reason,
            });
        }
    }
    // A stored level counts only for the token whose agent host bound the session, and only
    // while its setter may still grant it to this agent: the agent's own `allowFrom` narrows
    // what `/elevated` typed anywhere can do, and a sender removed from the lists stops
    // granting. `off` only narrows, so it always counts.
    let session = stored
        .filter(|stored| {
            stored.level == ElevatedLevel::Off
                || (stored
                    .bound_by
                    .as_deref()
                    .is_none_or(|owner| owner == token)
                    && stored.set_by.as_ref().is_some_and(|setter| {
                        authorize_sender(&gates, agent.as_ref(), setter).is_ok()
                    }))
        })
        .map(|stored| stored.level);
    let choices = LevelChoices {
        request: request.level,
        session,
        default: default_level(config),
    };
    let resolved = resolve_level(choices, &gates, agent.as_ref());
    let level = match resolved.source {
        // A stored or default level meeting closed gates grants nothing; a requested one was
        // refused above.
        LevelSource::Unset | LevelSource::GatesClosed => None,
        LevelSource::Request | LevelSource::Session | LevelSource::Default => Some(resolved.level),
    };
    let placement = placement(request.sandboxed, level);
    let Some(level) = level else {
        return Ok((policy, resolved, placement));
    };
    match elevated_exec(level, exec_tool_verdict(config, request.agent_id)) {
        // `off` keeps a sandboxed session's run in its sandbox, under the agent's own policy.
        ElevatedExec::SandboxOnly if placement == Placement::Sandbox => {}
        // The shared policy is copied only here, for a request whose level changes it.
        ElevatedExec::ToolDenied | ElevatedExec::SandboxOnly => {
            Arc::make_mut(&mut policy).security = Security::Deny;
        }
        ElevatedExec::Host { security, ask } => {
            let policy = Arc::make_mut(&mut policy);
            policy.security = security;
            policy.ask = ask;
        }
    }
    Ok((policy, resolved, placement))
}

/// The audit spelling of a resolved level and where it came from.
pub(crate) fn level_audit(resolved: ResolvedLevel) -> Value {
    let source = match resolved.source {
        LevelSource::Request => "request",
        LevelSource::Session => "session",
        LevelSource::Default => "default",
        LevelSource::Unset => "unset",
        LevelSource::GatesClosed => "gates-closed",
    };
    json!({"level": resolved.level.as_str(), "source": source})
}

/// Whether the agent's tool policy allows `exec`, judged for a non-owner host session so a
/// doubt is a deny.
fn exec_tool_verdict(config: &Config, agent_id: &str) -> ToolVerdict {
    let mut inputs = ToolPolicyInputs {
        config: config.tool_config(agent_id),
        session: SessionContext {
            sender: Sender::NonOwner,
            provider: None,
            model: None,
            sandbox: Sandboxing::Off,
            spawn: None,
        },
        plugin_tools: Vec::new(),
    };
    if effective_tools_at_depth(&mut inputs, 0)
        .allowed
        .contains("exec")
    {
        ToolVerdict::Allowed
    } else {
        ToolVerdict::Denied
    }
}
