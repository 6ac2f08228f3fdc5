//! From the config model to the plain inputs of the policy core. The policy never sees config
//! syntax; every list keeps the config path it came from so a decision can name the key an
//! operator would edit.

use gatehouse_policy::Security;
use gatehouse_policy::exec::{ExecPolicy, SkillBin};
use gatehouse_policy::tools::{
    AgentScope, ProviderRules, SubagentConfig, ToolConfig, ToolRules, ToolScope,
};

use crate::model::{
    AgentConfig, Config, ExecConfig, ScopedTools, ToolPolicyConfig, ToolProfile, ToolsConfig,
};
use crate::safe_bins::SafeBinConfig;

/// The agent id used when a request names none (OpenClaw's default agent).
pub const DEFAULT_AGENT_ID: &str = "main";

/// The exec settings of one agent: the policy input plus what only the approval flow needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentExecSettings {
    /// Input for `gatehouse_policy::exec::evaluate`. Its allowlist is empty: allowlists live in
    /// `exec-approvals.json`, which the caller composes in (stricter settings win).
    pub policy: ExecPolicy,
    /// What an unanswered approval falls back to; `deny` when not configured.
    pub ask_fallback: Security,
}

impl Config {
    /// The exec settings for `agent_id`: the agent's `tools.exec` over the global `tools.exec`,
    /// field by field. Unset `security`/`ask` take the policy core's defaults (`allowlist`,
    /// `on-miss`), which are stricter than OpenClaw's `full`/`off`: an unconfigured host asks.
    pub fn exec_settings(&self, agent_id: &str) -> AgentExecSettings {
        let global = self.tools.exec.as_ref();
        let local = self.agent_exec(agent_id);
        let pick = |field| layered(local, global, field);
        let defaults = ExecPolicy::default();
        let skill_bins = local
            .filter(|l| !l.skill_bins.is_empty())
            .or(global)
            .map(|scope| {
                scope
                    .skill_bins
                    .iter()
                    .filter(|bin| !bin.resolved_path.as_os_str().is_empty())
                    .map(|bin| SkillBin {
                        name: bin.name.clone(),
                        resolved_path: bin.resolved_path.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let safe = self.safe_bins(agent_id);
        AgentExecSettings {
            policy: ExecPolicy {
                security: layered(local, global, |e| e.security).unwrap_or(defaults.security),
                ask: layered(local, global, |e| e.ask).unwrap_or(defaults.ask),
                safe_bins: safe.safe_bins.into_iter().collect(),
                safe_bin_trusted_dirs: safe.trusted_dirs,
                safe_bin_profiles: safe.profiles,
                strict_inline_eval: pick(|e| e.strict_inline_eval).unwrap_or(false),
                auto_allow_skills: pick(|e| e.auto_allow_skills).unwrap_or(false),
                skill_bins,
                allowlist: Vec::new(),
            },
            ask_fallback: layered(local, global, |e| e.ask_fallback).unwrap_or(Security::Deny),
        }
    }

    /// The tool-policy configuration for `agent_id`; an agent without an `agents.list` entry
    /// gets the global settings only.
    pub fn tool_config(&self, agent_id: &str) -> ToolConfig {
        let tools = &self.tools;
        let global = tool_scope("tools", tools);
        let agent = self
            .agents
            .list
            .iter()
            .enumerate()
            .find(|(_, agent)| agent.id == agent_id)
            .map(|(index, agent)| agent_scope(index, agent));
        let default_max_spawn_depth = self
            .agents
            .defaults
            .as_ref()
            .and_then(|d| d.subagents.as_ref())
            .and_then(|s| s.max_spawn_depth);
        ToolConfig {
            global,
            agent,
            group: None,
            sandbox: scoped("tools.sandbox.tools", tools.sandbox.as_ref()),
            subagents: SubagentConfig {
                default_max_spawn_depth,
                tools: scoped("tools.subagents.tools", tools.subagents.as_ref()),
            },
            apply_patch_allow_models: tools
                .exec
                .as_ref()
                .and_then(|e| e.apply_patch.as_ref())
                .and_then(|a| a.allow_models.clone()),
        }
    }

    /// The safe-bin settings for `agent_id`, its `tools.exec` merged over the global one.
    pub fn safe_bins(&self, agent_id: &str) -> SafeBinConfig {
        SafeBinConfig::resolve(self.tools.exec.as_ref(), self.agent_exec(agent_id))
    }

    fn agent_exec(&self, agent_id: &str) -> Option<&ExecConfig> {
        self.agent(agent_id)
            .and_then(|agent| agent.tools.as_ref())
            .and_then(|tools| tools.exec.as_ref())
    }
}

/// The agent's value of one `tools.exec` field, else the global one.
fn layered<T>(
    local: Option<&ExecConfig>,
    global: Option<&ExecConfig>,
    field: fn(&ExecConfig) -> Option<T>,
) -> Option<T> {
    local.and_then(field).or_else(|| global.and_then(field))
}

fn agent_scope(index: usize, agent: &AgentConfig) -> AgentScope {
    let path = format!("agents.list[{index}]");
    let tools_path = format!("{path}.tools");
    let tools = agent.tools.clone().unwrap_or_default();
    AgentScope {
        id: agent.id.clone(),
        tools: tool_scope(&tools_path, &tools),
        sandbox: scoped(
            &format!("{tools_path}.sandbox.tools"),
            tools.sandbox.as_ref(),
        ),
        max_spawn_depth: agent.subagents.as_ref().and_then(|s| s.max_spawn_depth),
        path,
    }
}

/// One scope of tool settings (`tools` or `agents.list[i].tools`) with its config path.
fn tool_scope(path: &str, tools: &ToolsConfig) -> ToolScope {
    ToolScope {
        profile: tools.profile.map(profile_name),
        rules: rules(
            path,
            tools.allow.as_ref(),
            tools.also_allow.as_ref(),
            tools.deny.as_ref(),
        ),
        by_provider: providers(path, tools.by_provider.iter()),
        exec_configured: tools.exec.is_some(),
        fs_configured: tools.fs.is_some(),
    }
}

fn profile_name(profile: ToolProfile) -> String {
    match profile {
        ToolProfile::Minimal => "minimal",
        ToolProfile::Coding => "coding",
        ToolProfile::Messaging => "messaging",
        ToolProfile::Full => "full",
    }
    .to_owned()
}

fn rules(
    path: &str,
    allow: Option<&Vec<String>>,
    also_allow: Option<&Vec<String>>,
    deny: Option<&Vec<String>>,
) -> ToolRules {
    ToolRules {
        path: path.to_owned(),
        allow: allow.cloned(),
        also_allow: also_allow.cloned(),
        deny: deny.cloned(),
    }
}

fn providers<'a>(
    scope_path: &str,
    entries: impl Iterator<Item = (&'a String, &'a ToolPolicyConfig)>,
) -> Vec<ProviderRules> {
    entries
        .map(|(key, policy)| ProviderRules {
            key: key.clone(),
            profile: policy.profile.map(profile_name),
            rules: rules(
                &format!("{scope_path}.byProvider.{key}"),
                policy.allow.as_ref(),
                policy.also_allow.as_ref(),
                policy.deny.as_ref(),
            ),
        })
        .collect()
}

fn scoped(path: &str, scope: Option<&ScopedTools>) -> Option<ToolRules> {
    let policy = scope?.tools.as_ref()?;
    Some(rules(
        path,
        policy.allow.as_ref(),
        policy.also_allow.as_ref(),
        policy.deny.as_ref(),
    ))
}
