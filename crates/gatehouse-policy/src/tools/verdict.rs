//! What the policy returns: the allowed set plus, for every catalog tool, the step that removed
//! it, so an operator can see *why* a tool is missing.

use std::collections::BTreeSet;
use std::fmt;

/// The outcome of [`super::effective_tools`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EffectiveTools {
    /// Canonical names of the tools the agent may see and call.
    pub allowed: BTreeSet<String>,
    /// One verdict per catalog tool (core tools first, in catalog order, then plugin tools in
    /// registration order).
    pub tools: Vec<ToolVerdict>,
    /// Config problems found on the way, each reported once.
    pub warnings: Vec<String>,
    /// Where the sandbox lists came from; `None` when the session is not sandboxed.
    pub sandbox: Option<SandboxDecision>,
}

/// The verdict for one catalog tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolVerdict {
    /// Canonical tool name.
    pub name: String,
    /// Whether the tool survived every step; always `removed_by.is_none()`.
    pub allowed: bool,
    /// The first step that removed the tool.
    pub removed_by: Option<Removal>,
}

/// The step and config key that removed a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The pipeline step.
    pub step: Step,
    /// The config key to edit to change the outcome (e.g. `agents.list[2].tools.deny`), or a
    /// parenthesised description for rules with no key, such as `(owner-only tool)`.
    pub config_path: String,
}

/// The labelled steps of the pipeline, in the order they run.
///
/// Each step only removes tools, so the order decides which step a removal is reported under,
/// never whether a tool survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// `apply_patch` is offered only to OpenAI models unless `allowModels` names others.
    Model,
    /// Owner-only tools are removed for non-owner senders.
    Owner,
    /// `tools.profile` (or the agent's profile), widened by `alsoAllow`.
    Profile,
    /// `tools.byProvider.<key>.profile`.
    ProviderProfile,
    /// `tools.allow` / `tools.deny`.
    Global,
    /// `tools.byProvider.<key>.allow` / `deny`.
    GlobalProvider,
    /// `agents.list[i].tools.allow` / `deny`.
    Agent,
    /// `agents.list[i].tools.byProvider.<key>.allow` / `deny`.
    AgentProvider,
    /// The group or channel policy of the conversation.
    Group,
    /// The sandbox lists, for sandboxed sessions.
    Sandbox,
    /// Sub-agent restrictions: spawn depth, built-in denials and the parent's set.
    Subagent,
}

impl Step {
    /// Every step in pipeline order.
    pub const ALL: [Step; 11] = [
        Step::Model,
        Step::Owner,
        Step::Profile,
        Step::ProviderProfile,
        Step::Global,
        Step::GlobalProvider,
        Step::Agent,
        Step::AgentProvider,
        Step::Group,
        Step::Sandbox,
        Step::Subagent,
    ];

    /// The stable label used in diagnostics and JSON output.
    pub fn label(self) -> &'static str {
        match self {
            Step::Model => "model",
            Step::Owner => "owner",
            Step::Profile => "profile",
            Step::ProviderProfile => "providerProfile",
            Step::Global => "global",
            Step::GlobalProvider => "globalProvider",
            Step::Agent => "agent",
            Step::AgentProvider => "agentProvider",
            Step::Group => "group",
            Step::Sandbox => "sandbox",
            Step::Subagent => "subagent",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Where the sandbox allow and deny lists of a sandboxed session came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxDecision {
    /// Origin of the allow list.
    pub allow: SandboxListOrigin,
    /// Origin of the deny list.
    pub deny: SandboxListOrigin,
}

/// One sandbox list's origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxListOrigin {
    /// Which layer supplied the list.
    pub source: SandboxSource,
    /// The config key of the list (for `Default`, the key that would replace it).
    pub config_path: String,
}

/// Which layer supplied a sandbox list: the agent's entry beats the global one, which beats the
/// built-in default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxSource {
    /// `agents.list[i].tools.sandbox.tools`.
    Agent,
    /// `tools.sandbox.tools`.
    Global,
    /// The built-in lists.
    Default,
}

impl SandboxSource {
    /// The label used in diagnostics and JSON output.
    pub fn label(self) -> &'static str {
        match self {
            SandboxSource::Agent => "agent",
            SandboxSource::Global => "global",
            SandboxSource::Default => "default",
        }
    }
}
