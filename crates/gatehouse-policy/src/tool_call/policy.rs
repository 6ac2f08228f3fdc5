//! Everything a tool-call decision depends on, borrowed from what the service keeps per agent
//! and session.

use crate::exec::ExecPolicy;
use crate::files::FileRules;
use crate::tools::{EffectiveTools, ToolPolicyInputs};
use crate::urls::UrlRules;

use super::grant::Grant;

/// The inputs of [`super::decide_tool_call`].
#[derive(Debug, Clone, Copy)]
pub struct ToolCallPolicy<'a> {
    /// The session's tool-policy inputs (the sender among them).
    pub tools: &'a ToolPolicyInputs,
    /// `effective_tools(tools)`, computed once per session.
    pub effective: &'a EffectiveTools,
    /// `tools.alwaysAsk` and the agent's `agents.list[i].tools.alwaysAsk`: a call of a tool
    /// any list names asks a person (unless a grant covers it).
    pub always_ask: &'a [AskList],
    /// The agent's file rules; `None` (the config did not load) refuses every file tool.
    pub files: Option<&'a FileRules>,
    /// `tools.web.fetch` rules, for `web_fetch` and URL parameters of other tools; `None`
    /// refuses them.
    pub fetch: Option<&'a UrlRules>,
    /// `browser` rules, for browser navigation; `None` refuses it.
    pub browser: Option<&'a UrlRules>,
    /// The agent's exec policy.
    pub exec: &'a ExecPolicy,
    /// The agent's stored allow-always grants.
    pub grants: &'a [Grant],
}

/// One `alwaysAsk` list: entries as in `tools.allow` (names, globs, groups, plugin ids, MCP
/// servers as `mcp__<server>`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AskList {
    /// The config key (`tools.alwaysAsk`, `agents.list[1].tools.alwaysAsk`).
    pub key: String,
    /// The entries.
    pub entries: Vec<String>,
}
