//! `/elevated` on the gateway: the gates from `tools.elevated`, a directive carried out for a
//! session, and the level in force (request, session or default) applied to exec decisions.
//!
//! **Invariant.** A level only narrows or widens the exec settings of an agent whose tool policy
//! allows `exec`; a tool-policy deny stays a deny whatever the level.

use std::collections::BTreeMap;
use std::sync::Arc;

use gatehouse_chat::commands::{ElevatedContext, ElevatedRequest, ElevatedStep, elevated_step};
use gatehouse_chat::sanitize::one_line;
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
use gatehouse_store::audit::AuditKind;
use serde_json::{Value, json};

use crate::error::Error;
use crate::exec::ExecServices;
use crate::payloads::effective_tools_at_depth;
use crate::state::GatewayState;

use super::sessions::{BoundRoute, Sessions};

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

/// The most of a session key a chat reply shows.
const SESSION_KEY_CHARS: usize = 80;

/// Carries out an `/elevated` request for `session_key` (or answers "no session bound") and
/// returns the reply; an authorized `set` is stored durably before the reply is returned.
/// `token` is the agent host's relaying it (`elevated.directive`; see [`Sessions::set_level`]).
pub(super) fn directive(
    exec: &ExecServices,
    sessions: &Sessions,
    request: ElevatedRequest,
    sender: &SenderIdentity,
    session_key: Option<&str>,
    token: Option<&str>,
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
                sessions.set_level(key, level, sender, token)?;
                tracing::info!(session_key = ?key, level = %level.as_str(), sender_id = ?sender.id, channel = %sender.channel, "Elevated level set.");
                audit(
                    exec,
                    key,
                    sender,
                    json!({"outcome": "set", "level": level.as_str()}),
                );
                // Name the session, so the owner sees which one their words reached.
                return Ok(format!(
                    "{reply} Session: {}.",
                    one_line(key, SESSION_KEY_CHARS)
                ));
            }
            Ok(reply)
        }
    }
}

/// Binds a session to a chat route for `token`'s agent host (`session.bind`, or a request's
/// `turnSource`), and records
/// every level the move dropped (see [`Sessions::bind`]) in the log and the audit log: the owner
/// should be able to tell why a level they set is gone.
pub(super) fn bind_session(
    exec: &ExecServices,
    sessions: &Sessions,
    session_key: &str,
    route: BoundRoute,
    token: Option<&str>,
) -> Result<(), Error> {
    for dropped in sessions.bind(session_key, route, token)? {
        tracing::warn!(session_key = ?dropped, bound = ?session_key, "Elevated level dropped: the session's chat binding moved.");
        exec.audit(
            AuditKind::Decision,
            None,
            None,
            json!({
                "type": "elevated",
                "sessionKey": dropped,
                "outcome": "dropped",
                "reason": "binding-moved",
            }),
        );
    }
    Ok(())
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
}

/// The exec policy for one request after its elevated level (request > session > default):
/// unchanged when no level is set or a stored one meets closed gates, host exec refused for
/// `off` or a tool-policy deny, else the level's security and ask. Works without a chat runtime
/// (no session levels then). A request that itself asks for more than `off` must name the sender
/// who asked, and is refused with [`Error::ElevatedUnavailable`] (and audited) when the gates are
/// closed or that sender is not allowed, never quietly run under another level: otherwise any
/// agent token could skip approvals by asking for `full`.
pub(crate) fn apply_elevated_level(
    state: &GatewayState,
    exec: &ExecServices,
    token: &str,
    request: &LevelRequest<'_>,
    mut policy: Arc<ExecPolicy>,
) -> Result<(Arc<ExecPolicy>, ResolvedLevel), Error> {
    let config = exec.config();
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
                    exec,
                    request.session_key.unwrap_or(""),
                    sender,
                    json!({"outcome": "refused", "level": level.as_str(), "reason": reason, "method": request.method}),
                );
            }
            return Err(Error::ElevatedUnavailable {
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
    let session = request
        .session_key
        .zip(state.chat())
        .and_then(|(key, chat)| chat.sessions.stored_level(key))
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
    match resolved.source {
        LevelSource::Unset => return Ok((policy, resolved)),
        // A stored or default level meeting closed gates grants nothing; a requested one was
        // refused above.
        LevelSource::GatesClosed => return Ok((policy, resolved)),
        LevelSource::Request | LevelSource::Session | LevelSource::Default => {}
    }
    match elevated_exec(resolved.level, exec_tool_verdict(exec, request.agent_id)) {
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
    Ok((policy, resolved))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::exec::{ExecLimits, ExecSetup};
    use crate::methods::Call;
    use crate::scope::Scope;
    use crate::settings::{GatewaySettings, Limits, Secret, TokenSpec};

    const AGENT: &str = "agent-secret-0123456789";

    /// A gateway with exec services and no chat runtime, and an agent-scope call on it.
    async fn gateway(config: &str) -> (tempfile::TempDir, Call) {
        let dir = tempfile::tempdir().unwrap();
        let loaded = gatehouse_config::load_str(config, &dir.path().join("gatehouse.json5"));
        let exec = ExecServices::start(ExecSetup {
            config: loaded.unwrap().config,
            approvals_file: dir.path().join("exec-approvals.json"),
            database: dir.path().join("approvals.db"),
            audit_log: dir.path().join("audit.jsonl"),
            limits: ExecLimits::default(),
        })
        .await
        .unwrap();
        let settings = GatewaySettings {
            tokens: vec![TokenSpec {
                name: "agent".into(),
                secret: Secret::new(AGENT),
                scopes: vec![Scope::Agent],
                agents: None,
            }],
            limits: Limits::default(),
        };
        let state = GatewayState::with_exec(&settings, exec).unwrap();
        assert!(state.chat().is_none());
        let caller = state.authenticate(AGENT).unwrap();
        (dir, Call { state, caller })
    }

    /// `exec.policy.check` of `echo hi` with `extra` params: the decision, or the error code.
    async fn check(call: &Call, extra: Value) -> Result<String, (String, String)> {
        let mut params = json!({"argv": ["echo", "hi"], "cwd": "/", "agentId": "main"});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let registry = call.state.registry();
        let params = serde_json::value::to_raw_value(&params).unwrap();
        match registry
            .dispatch(call.clone(), "exec.policy.check", Some(params))
            .await
        {
            Ok(answer) => {
                let answer: Value = serde_json::from_str(answer.get()).unwrap();
                Ok(answer["decision"].as_str().unwrap().to_owned())
            }
            Err(error) => Err((error.code().to_owned(), error.to_string())),
        }
    }

    const ENABLED: &str = "tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } },
        exec: { security: 'deny' } }";

    /// `extra` plus the sender the configs above allow.
    fn asked_by_approver(mut extra: Value) -> Value {
        extra["sender"] = json!({"channel": "telegram", "id": "42"});
        extra
    }

    #[tokio::test]
    async fn applies_a_request_level_without_a_chat_runtime() {
        let (_dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        assert_eq!(check(&call, json!({})).await.unwrap(), "deny");
        assert_eq!(
            check(&call, asked_by_approver(json!({"elevated": "full"})))
                .await
                .unwrap(),
            "allow"
        );
        assert_eq!(
            check(
                &call,
                asked_by_approver(json!({"elevated": "full", "sessionKey": "s1"}))
            )
            .await
            .unwrap(),
            "allow"
        );
    }

    #[tokio::test]
    async fn applies_the_default_without_a_session_and_lets_a_request_override_it() {
        let config =
            format!("{{ {ENABLED}, agents: {{ defaults: {{ elevatedDefault: 'full' }} }} }}");
        let (_dir, call) = gateway(&config).await;
        assert_eq!(check(&call, json!({})).await.unwrap(), "allow");
        assert_eq!(
            check(&call, json!({"elevated": "off"})).await.unwrap(),
            "deny"
        );
    }

    #[tokio::test]
    async fn refuses_a_requested_level_when_elevated_is_disabled() {
        let (_dir, call) = gateway("{ tools: { exec: { security: 'full', ask: 'off' } } }").await;
        let (code, message) = check(&call, asked_by_approver(json!({"elevated": "on"})))
            .await
            .unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert_eq!(
            message,
            "`exec.policy.check` asked for elevated level `on`, \
             but elevated mode is disabled (tools.elevated.enabled)"
        );
        // `off` only narrows, so it needs no gate.
        assert_eq!(
            check(&call, json!({"elevated": "off"})).await.unwrap(),
            "deny"
        );
    }

    #[tokio::test]
    async fn names_the_agent_gate_that_refused_a_requested_level() {
        let config = "{ tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } } },
            agents: { list: [{ id: 'main', tools: { elevated: { enabled: false } } }] } }";
        let (_dir, call) = gateway(config).await;
        let (code, message) = check(&call, asked_by_approver(json!({"elevated": "full"})))
            .await
            .unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert!(
            message.contains("agents.main.tools.elevated.enabled"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn denies_a_requested_full_level_when_tool_policy_denies_exec() {
        let config = "{ tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } },
            deny: ['exec'], exec: { security: 'full', ask: 'off' } } }";
        let (_dir, call) = gateway(config).await;
        assert_eq!(
            check(&call, asked_by_approver(json!({"elevated": "full"})))
                .await
                .unwrap(),
            "deny"
        );
    }

    #[tokio::test]
    async fn refuses_a_requested_level_without_a_sender() {
        let (_dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        let (code, message) = check(&call, json!({"elevated": "full"})).await.unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert_eq!(
            message,
            "`exec.policy.check` asked for elevated level `full`, \
             but a per-request level above `off` needs the `sender` who asked for it"
        );
    }

    #[tokio::test]
    async fn refuses_a_requested_level_from_a_sender_outside_allow_from() {
        let (dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        let stranger = json!({"elevated": "full", "sessionKey": "s1",
            "sender": {"channel": "telegram", "id": "7"}});
        let (code, message) = check(&call, stranger).await.unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert!(
            message.contains("tools.elevated.allowFrom.telegram"),
            "{message}"
        );
        let other_channel = json!({"elevated": "full",
            "sender": {"channel": "discord", "id": "42"}});
        assert!(check(&call, other_channel).await.is_err());
        // The refusal is a security event in the audit log, with who asked; the log is written
        // by its own thread, so it is read until the record shows up.
        let log = dir.path().join("audit.jsonl");
        let mut audit = String::new();
        let mut refused = None;
        for _ in 0..100 {
            audit = std::fs::read_to_string(&log).unwrap_or_default();
            refused = audit
                .lines()
                .find(|line| line.contains("\"refused\"") && line.contains("\"7\""))
                .map(str::to_owned);
            if refused.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(refused.is_some(), "{audit}");
    }

    #[tokio::test]
    async fn refuses_an_unknown_level_listing_the_valid_ones() {
        let (_dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        for level in [json!("max"), json!("yes"), json!(1)] {
            let (code, message) = check(&call, json!({"elevated": level})).await.unwrap_err();
            assert_eq!(code, "invalid_params", "{level}");
            if level.is_string() {
                assert!(message.contains("off, on, ask, full"), "{message}");
            }
        }
        let (_, message) = check(&call, json!({"elevated": "loud"})).await.unwrap_err();
        assert_eq!(
            message,
            "invalid params for `exec.policy.check`: unknown elevated level \"loud\" \
             (expected one of: off, on, ask, full)"
        );
    }
}
