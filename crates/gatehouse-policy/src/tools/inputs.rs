//! The plain structs a caller fills from the config file and the session, so the policy never
//! sees config syntax.
//!
//! Every group of lists carries the config path of the object that holds it (for example
//! `agents.list[2].tools`), so a removal can name the exact key an operator would edit.

use std::collections::BTreeSet;
use std::num::NonZeroU32;

/// Everything the tool policy depends on; the only argument of [`super::effective_tools`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolPolicyInputs {
    /// What the operator configured.
    pub config: ToolConfig,
    /// Facts about the session asking: who sends, which model, sandboxed or spawned.
    pub session: SessionContext,
    /// Tools registered by plugins at run time; the core catalog is built in.
    pub plugin_tools: Vec<PluginTool>,
}

/// The tool-related parts of the config, already located by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolConfig {
    /// `tools.*`: applies to every agent.
    pub global: ToolScope,
    /// `agents.list[i]` for the agent being evaluated, if it has an entry.
    pub agent: Option<AgentScope>,
    /// The group or channel policy matching the conversation (for example
    /// `channels.discord.guilds.<id>.tools`), if any.
    pub group: Option<ToolRules>,
    /// `tools.sandbox.tools`: replaces the built-in sandbox lists for every agent.
    pub sandbox: Option<ToolRules>,
    /// Sub-agent limits shared by all agents.
    pub subagents: SubagentConfig,
    /// `tools.exec.applyPatch.allowModels`: models besides OpenAI's that may see `apply_patch`.
    pub apply_patch_allow_models: Option<Vec<String>>,
}

/// One allow/alsoAllow/deny triple and where it lives in the config.
///
/// An absent or empty `allow` filters nothing; `also_allow` widens `allow` without replacing it;
/// `deny` always wins over both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolRules {
    /// Path of the object holding the lists, e.g. `tools` or `agents.list[2].tools`; removals
    /// name `<path>.allow`, `<path>.deny` or `<path>.profile`.
    pub path: String,
    /// Tool names, groups, plugin ids or globs; absent or empty means "no restriction".
    pub allow: Option<Vec<String>>,
    /// Entries added to `allow` (and to the profile) without replacing them.
    pub also_allow: Option<Vec<String>>,
    /// Entries removed at this step whatever any allow list says.
    pub deny: Option<Vec<String>>,
}

/// The settings of one scope (`tools` or `agents.list[i].tools`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolScope {
    /// `profile`: `minimal`, `coding`, `messaging` or `full`.
    pub profile: Option<String>,
    /// `allow`, `alsoAllow` and `deny`; `rules.path` is the scope's path.
    pub rules: ToolRules,
    /// `byProvider`, keyed by provider (`openai`) or provider/model (`openai/gpt-5`).
    pub by_provider: Vec<ProviderRules>,
    /// Whether the scope has an `exec` section (e.g. `tools.exec.security`), which implies that
    /// `exec` and `process` survive the profile step.
    pub exec_configured: bool,
    /// Whether the scope has a `fs` section, which implies `read`, `write` and `edit` survive the
    /// profile step.
    pub fs_configured: bool,
}

/// One `byProvider` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProviderRules {
    /// The key as written: a provider (`anthropic`) or provider/model (`openai/gpt-5`);
    /// matched case-insensitively, provider/model first.
    pub key: String,
    /// A profile that narrows further for this provider.
    pub profile: Option<String>,
    /// Lists of this entry; `rules.path` is e.g. `tools.byProvider.openai/gpt-5`.
    pub rules: ToolRules,
}

/// The config entry of the agent being evaluated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentScope {
    /// The agent's `id`.
    pub id: String,
    /// Path of the entry, e.g. `agents.list[2]`; used for `subagents.maxSpawnDepth`.
    pub path: String,
    /// `agents.list[i].tools`.
    pub tools: ToolScope,
    /// `agents.list[i].tools.sandbox.tools`: replaces the global sandbox lists for this agent.
    pub sandbox: Option<ToolRules>,
    /// `agents.list[i].subagents.maxSpawnDepth`: overrides the default for this agent.
    pub max_spawn_depth: Option<u32>,
}

/// Sub-agent settings that apply to every agent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubagentConfig {
    /// `agents.defaults.subagents.maxSpawnDepth`; 1 when absent.
    pub default_max_spawn_depth: Option<u32>,
    /// `tools.subagents.tools`: extra lists applied to every sub-agent.
    pub tools: Option<ToolRules>,
}

/// Who and what is asking.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionContext {
    /// Whether the sender is an owner; owner-only tools vanish for everyone else.
    pub sender: Sender,
    /// Model provider, e.g. `openai`; matched case-insensitively.
    pub provider: Option<String>,
    /// Model id, e.g. `gpt-5` or `openai/gpt-5`.
    pub model: Option<String>,
    /// Whether the session runs in a sandbox, which adds the sandbox step.
    pub sandbox: Sandboxing,
    /// Set when this session was spawned by another; `None` for a main agent (depth 0).
    pub spawn: Option<SpawnContext>,
}

/// Whether the sender owns the deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Sender {
    /// Anyone else; the default, because owner rights must be proven.
    #[default]
    NonOwner,
    /// An owner: may see `whatsapp_login`, `cron`, `gateway` and `nodes`.
    Owner,
}

/// Whether the session's tools run inside a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Sandboxing {
    /// Tools run on the host; no sandbox step.
    #[default]
    Off,
    /// Tools run in a sandbox; the sandbox allow/deny lists apply.
    On,
}

/// How a sub-agent was spawned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnContext {
    /// 1 for a child of the main agent, 2 for a grandchild, and so on.
    pub depth: NonZeroU32,
    /// The parent's effective allowed set (`EffectiveTools::allowed` of the parent); a sub-agent
    /// never gets a tool outside it.
    pub parent_allowed: BTreeSet<String>,
}

/// A tool a plugin registered at run time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PluginTool {
    /// The plugin's id; usable as a group name in any list.
    pub plugin_id: String,
    /// The tool's name as the model sees it.
    pub name: String,
}
