//! MCP tools, the same for every host: `mcp__<server>__<tool>`, read by the tool policy's own
//! parser so this crate and the gate never disagree about which server a name belongs to.

use gatehouse_policy::tools::{MCP_PREFIX, normalize_tool_name, parse_mcp_tool_name};
use serde_json::{Map, Value};

use super::Mapped;
use crate::error::HookError;
use crate::host::Host;

/// `tool` as an MCP tool call with its arguments as sent, or the refusal of a name that is not
/// a tool this crate maps.
pub(super) fn map_mcp(
    host: Host,
    tool: &str,
    input: &Map<String, Value>,
) -> Result<Mapped, HookError> {
    let normalized = normalize_tool_name(tool);
    if !normalized.starts_with(MCP_PREFIX) {
        return Err(HookError::UnknownTool {
            host,
            tool: tool.to_owned(),
        });
    }
    // The model APIs both hosts call take tool names of letters, digits, `_` and `-` only, so
    // anything else (a bidi mark, a newline) did not come from a real MCP server and would
    // reach approvers' cards.
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if parse_mcp_tool_name(&normalized).is_none() || tool.len() > 256 || !tool.chars().all(plain) {
        return Err(HookError::BadMcpName {
            tool: tool.to_owned(),
        });
    }
    Ok(Mapped {
        tool: tool.to_owned(),
        params: Value::Object(input.clone()),
        adjustments: Vec::new(),
        agent_note: None,
    })
}
