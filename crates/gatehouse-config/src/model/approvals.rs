//! `approvals.exec`: forwarding pending exec approvals to chat routes.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// The `approvals` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ApprovalsConfig {
    /// Exec approval forwarding.
    pub exec: Option<ExecForwardingConfig>,
    /// How long tool approvals (`tools.call.request`) wait, per tool.
    pub tools: Option<ToolApprovalsConfig>,
}

/// `approvals.tools`: how long a person has to answer a tool approval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolApprovalsConfig {
    /// Every tool approval's timeout, instead of `approvals.exec.timeout`.
    #[serde(default, deserialize_with = "super::de::opt_duration")]
    pub timeout: Option<Duration>,
    /// Timeouts of particular tools, keyed by entries as in `tools.allow` (a name, a glob, a
    /// group, an MCP server as `mcp__<server>`); the first entry naming the tool wins.
    #[serde(default, deserialize_with = "super::de::durations")]
    pub by_tool: BTreeMap<String, Duration>,
}

/// `approvals.exec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecForwardingConfig {
    /// Forward approvals to chat at all (default false).
    pub enabled: Option<bool>,
    /// Where to deliver: the request's own chat, the configured targets, or both.
    pub mode: Option<ForwardingMode>,
    /// Only forward approvals of these agent ids; absent = all agents.
    pub agent_filter: Option<Vec<String>>,
    /// Only forward approvals whose session key contains one of these (or matches
    /// `re:<regex>`); absent = all sessions.
    pub session_filter: Option<Vec<String>>,
    /// Explicit delivery targets.
    #[serde(default)]
    pub targets: Vec<ForwardTarget>,
    /// How long a person has to answer an approval whose request names no timeout (seconds,
    /// or a duration such as `"30m"`); 30 minutes when unset.
    #[serde(default, deserialize_with = "super::de::opt_duration")]
    pub timeout: Option<Duration>,
}

/// `approvals.exec.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForwardingMode {
    /// The chat the request came from (its `turnSource`).
    Session,
    /// The configured targets.
    Targets,
    /// Both.
    Both,
}

/// One delivery target.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForwardTarget {
    /// Channel id (`telegram`, `discord`, `slack`).
    pub channel: String,
    /// Destination (chat, channel or user id).
    pub to: String,
    /// Account id for multi-account channels.
    pub account_id: Option<String>,
    /// Thread or topic to post in.
    #[serde(default, deserialize_with = "thread_id")]
    pub thread_id: Option<String>,
}

fn thread_id<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(Option::<super::de::Id>::deserialize(deserializer)?.map(|id| id.0))
}
