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
    /// The agents' workspace (`/srv/agents/main`, `~/work`): where a sandboxed run may write,
    /// where relative file-tool paths start, and what the file tools keep to (`workspaceOnly`),
    /// unless an agent sets its own.
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

/// `sandbox` of `agents.defaults` or one agent (docs/sandbox.md). Each key an agent sets
/// replaces the default's; lists are replaced, not merged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxConfig {
    /// Which sessions run sandboxed.
    pub mode: Option<SandboxMode>,
    /// What a sandboxed run sees of the host and what survives it.
    pub isolation: Option<Isolation>,
    /// Whether a sandboxed run may use the host's network.
    pub network: Option<bool>,
    /// Home paths that persist under isolation `volumes`.
    pub volumes: Option<Vec<String>>,
    /// Directories added to a sandboxed run's `PATH` (absolute ones mounted read-only).
    pub extra_paths: Option<Vec<String>>,
    /// The host directories the workspace and extra paths may lie in.
    pub allowed_roots: Option<Vec<String>>,
    /// The bubblewrap binary; `bwrap` on the gateway's `PATH` when unset.
    pub bwrap_path: Option<String>,
}

/// `sandbox.isolation`, with GoClaw's mode names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// A persistent home of the agent's own under the data directory.
    Home,
    /// The real home's top-level, non-hidden directories, read-only.
    AutodocsRead,
    /// The same, read-write.
    AutodocsWrite,
    /// Only the configured volumes persist.
    Volumes,
    /// Nothing persists but the workspace.
    Ephemeral,
}

/// `session`: how OpenClaw keys sessions, which decides which one is an agent's main session
/// (sandbox mode `non-main`). Its other keys are OpenClaw's and ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionConfig {
    /// The main session's key below `agent:<id>:` (OpenClaw's default `main`).
    pub main_key: Option<String>,
    /// `per-sender` (default) or `global`: one session for everything.
    pub scope: Option<SessionScope>,
}

/// `session.scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionScope {
    /// A session per sender (per chat, per direct message).
    PerSender,
    /// One session, keyed `global`.
    Global,
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
