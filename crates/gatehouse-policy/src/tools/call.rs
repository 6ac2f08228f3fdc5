//! The call-time check: a tool call is refused unless the evaluated policy allows the tool, and
//! owner-only tools are refused to non-owners even if a stale or hand-built tool list offered
//! them.

use super::catalog::{is_owner_only, mcp_tool};
use super::inputs::{Sender, ToolPolicyInputs};
use super::names::{is_glob, normalize_tool_name, parse_mcp_tool_name};
use super::pipeline::effective_tools;
use super::verdict::{EffectiveTools, Removal};

/// Why a tool call is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolCallRefused {
    /// The tool is owner-only and the sender is not an owner.
    #[error("tool {tool:?} is restricted to owner senders")]
    OwnerOnly {
        /// Canonical tool name.
        tool: String,
    },
    /// A policy step removed the tool.
    #[error("tool {tool:?} was removed by the {} step ({})", removal.step, removal.config_path)]
    Removed {
        /// Canonical tool name.
        tool: String,
        /// The step and config key that removed it.
        removal: Removal,
    },
    /// The name is not a tool of this run (or is a pattern, which a call never is).
    #[error("tool {tool:?} is not in the tool catalog")]
    Unknown {
        /// The name as requested.
        tool: String,
    },
}

/// Checks one tool call against an evaluated policy, returning the canonical tool name to run.
pub fn check_tool_call(
    effective: &EffectiveTools,
    sender: Sender,
    requested: &str,
) -> Result<String, ToolCallRefused> {
    let tool = normalize_tool_name(requested);
    if sender == Sender::NonOwner && is_owner_only(&tool) {
        return Err(ToolCallRefused::OwnerOnly { tool });
    }
    if is_glob(&tool) || tool.starts_with("group:") {
        return Err(ToolCallRefused::Unknown {
            tool: requested.to_owned(),
        });
    }
    match effective.tools.iter().find(|v| v.name == tool) {
        Some(verdict) if verdict.allowed && effective.allowed.contains(&tool) => Ok(tool),
        Some(verdict) => match &verdict.removed_by {
            Some(removal) => Err(ToolCallRefused::Removed {
                tool,
                removal: removal.clone(),
            }),
            None => Err(ToolCallRefused::Unknown {
                tool: requested.to_owned(),
            }),
        },
        None => Err(ToolCallRefused::Unknown {
            tool: requested.to_owned(),
        }),
    }
}

/// As [`check_tool_call`] against `effective` (computed from `inputs`), except that an MCP tool
/// missing from the catalog (a server that gained a tool after the session's policy was
/// computed) is judged as if its server had registered it: the profile and the lists decide,
/// so `full` or an entry naming it, its server or a matching glob admits it, and anything else
/// removes it. Any other unknown name stays refused.
pub fn check_tool_call_registering_mcp(
    inputs: &ToolPolicyInputs,
    effective: &EffectiveTools,
    requested: &str,
) -> Result<String, ToolCallRefused> {
    let sender = inputs.session.sender;
    match check_tool_call(effective, sender, requested) {
        Err(ToolCallRefused::Unknown { tool }) => {
            let name = normalize_tool_name(requested);
            let Some((server, tool_name)) = parse_mcp_tool_name(&name) else {
                return Err(ToolCallRefused::Unknown { tool });
            };
            let mut extended = inputs.clone();
            extended.plugin_tools.push(mcp_tool(server, tool_name));
            check_tool_call(&effective_tools(&extended), sender, requested)
        }
        decided => decided,
    }
}
