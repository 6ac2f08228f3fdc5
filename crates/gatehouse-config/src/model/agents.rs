//! `agents.defaults` and `agents.list[]`: per-agent overrides of the global tool policy.

use serde::Deserialize;

use super::tools::ToolsConfig;

/// The `agents` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct AgentsConfig {
    /// Settings every agent inherits.
    pub defaults: Option<AgentDefaults>,
    /// The configured agents, each with a unique `id`.
    #[serde(default)]
    pub list: Vec<AgentConfig>,
}

/// `agents.defaults`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDefaults {
    /// Session elevated level when neither the request nor the session sets one.
    pub elevated_default: Option<ElevatedLevel>,
    /// Sub-agent limits.
    pub subagents: Option<SubagentsConfig>,
    /// Sandbox settings.
    pub sandbox: Option<SandboxConfig>,
    /// The workspace every agent without its own works in: relative file-tool paths start
    /// here, and `workspaceOnly` keeps file tools inside it.
    pub workspace: Option<String>,
}

/// `/elevated` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElevatedLevel {
    /// Host exec refused (sandbox only).
    Off,
    /// Host exec with approvals (allowlist, on-miss).
    On,
    /// Host exec, asking for every command.
    Ask,
    /// Host exec without approvals.
    Full,
}

/// `agents.defaults.subagents` and `agents.list[].subagents`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentsConfig {
    /// Deepest spawn depth; an agent at this depth is a leaf. OpenClaw allows 1–5, default 1.
    pub max_spawn_depth: Option<u32>,
}

/// `sandbox` of `agents.defaults` or one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxConfig {
    /// Which sessions run sandboxed.
    pub mode: Option<SandboxMode>,
}

/// `sandbox.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No session is sandboxed.
    Off,
    /// Every session but the agent's main session is sandboxed.
    NonMain,
    /// Every session is sandboxed.
    All,
}

/// One entry of `agents.list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentConfig {
    /// The agent id requests name (`main`, `work`, …).
    pub id: String,
    /// Whether this agent is the default one.
    pub default: Option<bool>,
    /// Per-agent tool policy, same keys as `tools` except `subagents` (global only).
    pub tools: Option<ToolsConfig>,
    /// Per-agent sandbox settings.
    pub sandbox: Option<SandboxConfig>,
    /// Per-agent sub-agent limits (`maxSpawnDepth` here is a Gatehouse extension).
    pub subagents: Option<SubagentsConfig>,
    /// This agent's workspace, instead of `agents.defaults.workspace`.
    pub workspace: Option<String>,
}
