//! What applies to one agent's commands, for operators to read: the exec settings composed
//! with `exec-approvals.json` (exactly what requests are judged under), its allowlist, its
//! safe bins and the elevated gates from the config.

use std::collections::BTreeMap;

use gatehouse_policy::exec::AllowlistEntry;
use gatehouse_policy::{Ask, Security};

use super::elevated::default_level;
use crate::error::ServiceError;
use crate::pipeline::invalid;
use crate::service::Service;

/// One agent's effective exec policy.
#[derive(Debug, Clone)]
pub struct AgentPolicyView {
    /// The agent asked about.
    pub agent_id: String,
    /// `security`, config and file composed (the stricter wins).
    pub security: Security,
    /// `ask`, config and file composed (the more asking wins).
    pub ask: Ask,
    /// What a request nobody answers comes to.
    pub ask_fallback: Security,
    /// Stdin-only filters that run without an allowlist entry.
    pub safe_bins: Vec<String>,
    /// Whether inline interpreter code always needs a person.
    pub strict_inline_eval: bool,
    /// Whether trusted skill binaries run without an allowlist entry.
    pub auto_allow_skills: bool,
    /// The allowlist that applies to it (`*`'s entries and its own), in the order they apply.
    pub allowlist: Vec<AllowlistEntry>,
    /// Who may switch it to `/elevated`.
    pub elevated: ElevatedView,
    /// Every agent the config or the approvals file names, sorted, for choosing another.
    pub known_agents: Vec<String>,
}

/// The elevated gates that apply to one agent.
#[derive(Debug, Clone)]
pub struct ElevatedView {
    /// Whether `/elevated` is available to this agent: on globally and not off for it.
    pub enabled: bool,
    /// `tools.elevated.enabled` as configured (absent: off when `tools.elevated` is absent).
    pub global_enabled: bool,
    /// `agents.list[].tools.elevated.enabled`, when the agent sets it.
    pub agent_enabled: Option<bool>,
    /// `tools.elevated.allowFrom`, per channel, as written.
    pub allow_from: BTreeMap<String, Vec<String>>,
    /// The agent's own `allowFrom`, which narrows the global one, when set.
    pub agent_allow_from: Option<BTreeMap<String, Vec<String>>>,
    /// `agents.defaults.elevatedDefault`, the level of a session nobody set.
    pub default_level: Option<&'static str>,
}

impl Service {
    /// `exec.policy.effective`: the policy `agent_id`'s commands are judged under right now.
    pub fn agent_policy(&self, agent_id: &str) -> Result<AgentPolicyView, ServiceError> {
        if agent_id.trim().is_empty() {
            return Err(invalid("agentId must name an agent"));
        }
        let core = self.core();
        let applied = core.policy(agent_id)?;
        let policy = &applied.policy;
        let config = &core.config;
        let global = config.tools.elevated.as_ref();
        let agent_elevated = config
            .agents
            .list
            .iter()
            .find(|agent| agent.id == agent_id)
            .and_then(|agent| agent.tools.as_ref()?.elevated.as_ref());
        let global_enabled = global.is_some_and(|gate| gate.enabled.unwrap_or(true));
        let agent_enabled = agent_elevated.and_then(|gate| gate.enabled);
        let mut known_agents: Vec<String> = config
            .agents
            .list
            .iter()
            .map(|agent| agent.id.clone())
            .chain(core.snapshot()?.file.agents.keys().cloned())
            .filter(|agent| agent != "*")
            .collect();
        known_agents.sort();
        known_agents.dedup();
        Ok(AgentPolicyView {
            agent_id: agent_id.to_owned(),
            security: policy.security,
            ask: policy.ask,
            ask_fallback: applied.ask_fallback,
            safe_bins: policy.safe_bins.clone(),
            strict_inline_eval: policy.strict_inline_eval,
            auto_allow_skills: policy.auto_allow_skills,
            allowlist: policy.allowlist.clone(),
            elevated: ElevatedView {
                enabled: global_enabled && agent_enabled != Some(false),
                global_enabled,
                agent_enabled,
                allow_from: global
                    .map(|gate| gate.allow_from.clone())
                    .unwrap_or_default(),
                agent_allow_from: agent_elevated
                    .filter(|gate| !gate.allow_from.is_empty())
                    .map(|gate| gate.allow_from.clone()),
                default_level: default_level(config).map(|level| level.as_str()),
            },
            known_agents,
        })
    }
}
