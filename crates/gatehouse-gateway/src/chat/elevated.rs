//! `/elevated` on the gateway: the gates from `tools.elevated`, a directive carried out for a
//! session, and the session's level applied to exec decisions.
//!
//! **Invariant.** A level only narrows or widens the exec settings of an agent whose tool policy
//! allows `exec`; a tool-policy deny stays a deny whatever the level.

use std::collections::BTreeMap;

use gatehouse_chat::commands::{ElevatedContext, ElevatedRequest, ElevatedStep, elevated_step};
use gatehouse_config::Config;
use gatehouse_config::model::{ElevatedConfig, ElevatedLevel as ConfigLevel};
use gatehouse_policy::Security;
use gatehouse_policy::elevated::{
    AgentElevatedGates, AllowFromEntry, ElevatedExec, ElevatedGates, ElevatedLevel, LevelChoices,
    LevelSource, SenderIdentity, ToolVerdict, authorize_sender, elevated_exec, resolve_level,
};
use gatehouse_policy::exec::ExecPolicy;
use gatehouse_policy::tools::{Sandboxing, Sender, SessionContext, ToolPolicyInputs};
use gatehouse_store::audit::AuditKind;
use serde_json::{Value, json};

use crate::error::Error;
use crate::exec::ExecServices;
use crate::payloads::effective_tools_at_depth;
use crate::state::GatewayState;

use super::sessions::Sessions;

/// `tools.elevated` and the agent's narrowing gates. Unparsable `allowFrom` entries admit nobody
/// (they are dropped with a warning), never everybody.
pub(super) fn gates(
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

fn default_level(config: &Config) -> Option<ElevatedLevel> {
    let level = config.agents.defaults.as_ref()?.elevated_default?;
    Some(match level {
        ConfigLevel::Off => ElevatedLevel::Off,
        ConfigLevel::On => ElevatedLevel::On,
        ConfigLevel::Ask => ElevatedLevel::Ask,
        ConfigLevel::Full => ElevatedLevel::Full,
    })
}

/// Carries out an `/elevated` request for `session_key` (or answers "no session bound") and
/// returns the reply; an authorized `set` is stored durably before the reply is returned.
pub(super) fn directive(
    exec: &ExecServices,
    sessions: &Sessions,
    request: ElevatedRequest,
    sender: &SenderIdentity,
    session_key: Option<&str>,
) -> Result<String, Error> {
    let config = exec.config();
    let (gates, agent) = gates(config, None);
    let session = session_key.map(|key| LevelChoices {
        request: None,
        session: sessions.level(key),
        default: default_level(config),
    });
    let ctx = ElevatedContext {
        gates: &gates,
        agent: agent.as_ref(),
        session,
    };
    let refusal = session_key
        .and_then(|_| authorize_sender(&gates, agent.as_ref(), sender).err())
        .map(|denial| denial.to_string());
    match elevated_step(request, sender, ctx) {
        ElevatedStep::Reply(reply) => {
            if let (Some(reason), Some(key)) = (refusal, session_key) {
                audit(
                    exec,
                    key,
                    sender,
                    json!({"outcome": "refused", "reason": reason}),
                );
            }
            Ok(reply)
        }
        ElevatedStep::Store { level, reply } => {
            if let Some(key) = session_key {
                sessions.set_level(key, level)?;
                tracing::info!(session_key = %key, level = %level.as_str(), sender_id = %sender.id, channel = %sender.channel, "Elevated level set.");
                audit(
                    exec,
                    key,
                    sender,
                    json!({"outcome": "set", "level": level.as_str()}),
                );
            }
            Ok(reply)
        }
    }
}

/// Records an elevated change or refusal in the hash-chained audit log, beside the tracing
/// security event the chat core logs.
fn audit(exec: &ExecServices, session_key: &str, sender: &SenderIdentity, outcome: Value) {
    let mut payload = json!({
        "type": "elevated",
        "sessionKey": session_key,
        "channel": sender.channel,
        "senderId": sender.id,
    });
    if let (Some(payload), Some(outcome)) = (payload.as_object_mut(), outcome.as_object()) {
        payload.extend(outcome.clone());
    }
    exec.audit(AuditKind::Decision, None, None, payload);
}

/// The exec policy for one request after the session's elevated level: unchanged when no level
/// is set (or the gates are closed), host exec refused for `off` or a tool-policy deny, else the
/// level's security and ask.
pub(crate) fn apply_session_level(
    state: &GatewayState,
    exec: &ExecServices,
    agent_id: &str,
    session_key: &str,
    mut policy: ExecPolicy,
) -> ExecPolicy {
    let Some(chat) = state.chat() else {
        return policy;
    };
    let config = exec.config();
    let (gates, agent) = gates(config, Some(agent_id));
    let choices = LevelChoices {
        request: None,
        session: chat.sessions.level(session_key),
        default: default_level(config),
    };
    let resolved = resolve_level(choices, &gates, agent.as_ref());
    if matches!(
        resolved.source,
        LevelSource::Unset | LevelSource::GatesClosed
    ) {
        return policy;
    }
    match elevated_exec(resolved.level, exec_tool_verdict(exec, agent_id)) {
        ElevatedExec::ToolDenied | ElevatedExec::SandboxOnly => {
            policy.security = Security::Deny;
        }
        ElevatedExec::Host { security, ask } => {
            policy.security = security;
            policy.ask = ask;
        }
    }
    policy
}

/// Whether the agent's tool policy allows `exec`, judged for a non-owner host session so a
/// doubt is a deny.
fn exec_tool_verdict(exec: &ExecServices, agent_id: &str) -> ToolVerdict {
    let mut inputs = ToolPolicyInputs {
        config: exec.config().tool_config(agent_id),
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
