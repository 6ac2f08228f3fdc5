//! Layer 1 of the policy: which tool names an agent may see and call at all.
//!
//! [`effective_tools`] runs the catalog (core tools plus plugin tools) through labelled steps —
//! model gate, owner-only, profile, provider profile, global, global provider, agent, agent
//! provider, group, sandbox, sub-agent — each of which can only remove tools. Deny always wins,
//! so a later layer (elevated mode, approvals) can never bring back a tool removed here, and a
//! sub-agent never holds a tool its parent lacks. [`check_tool_call`] repeats the decision when a
//! call arrives.
//!
//! Inputs are plain structs filled by the caller from the config file; each list carries its
//! config path so a removal names the key to edit. Output types are not `Serialize`: the binary
//! and the gateway own the JSON shape.
//!
//! ```
//! use gatehouse_policy::tools::{Step, ToolPolicyInputs, effective_tools};
//!
//! let mut inputs = ToolPolicyInputs::default();
//! inputs.config.global.rules.path = "tools".to_owned();
//! inputs.config.global.profile = Some("coding".to_owned());
//! inputs.config.global.rules.deny = Some(vec!["bash".to_owned()]);
//! let tools = effective_tools(&inputs);
//!
//! assert!(tools.allowed.contains("read"));
//! let exec = tools.tools.iter().find(|t| t.name == "exec").and_then(|t| t.removed_by.as_ref());
//! assert_eq!(exec.map(|r| (r.step, r.config_path.as_str())), Some((Step::Global, "tools.deny")));
//! ```

mod call;
mod catalog;
mod filter;
mod inputs;
mod names;
mod pipeline;
mod profile;
mod provider;
mod sandbox;
mod selector;
mod subagent;
mod verdict;
mod warnings;

pub use call::{ToolCallRefused, check_tool_call, check_tool_call_registering_mcp};
pub use catalog::{CORE_TOOLS, OWNER_ONLY_TOOLS, is_core_tool, is_owner_only, mcp_tool};
pub use inputs::{
    AgentScope, PluginTool, ProviderRules, Sandboxing, Sender, SessionContext, SpawnContext,
    SubagentConfig, ToolConfig, ToolPolicyInputs, ToolRules, ToolScope,
};
pub(crate) use names::glob_matches;
pub use names::{
    MCP_PREFIX, mcp_server_id, mcp_tool_name, normalize_tool_name, parse_mcp_tool_name,
};
pub use pipeline::{APPLY_PATCH_MODELS_PATH, OWNER_ONLY_PATH, effective_tools};
pub use profile::{Profile, UnknownProfile};
pub use sandbox::{CHANNEL_IDS, SANDBOX_DEFAULT_ALLOW, SANDBOX_DEFAULT_DENY_TOOLS};
pub use selector::first_entry_denoting;
pub use subagent::{
    ALWAYS_DENY_PATH, DEFAULT_MAX_SPAWN_DEPTH, PARENT_PATH, SUBAGENT_ALWAYS_DENY,
    SUBAGENT_LEAF_DENY,
};
pub use verdict::{
    EffectiveTools, Removal, SandboxDecision, SandboxListOrigin, SandboxSource, Step, ToolVerdict,
};
pub use warnings::WarningLog;
