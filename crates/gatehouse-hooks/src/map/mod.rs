//! From a hook input to a Gatehouse tool call: the host's tool mapped to the reference's tool
//! and parameters, the identity derived from the input and the integration's settings.

mod args;
mod claude_code;
mod codex;
mod mcp;
mod paths;

use serde_json::Value;

use crate::call::{ApproverContext, HookToolCall, agent_note};
use crate::error::{HookError, Rejected};
use crate::host::{HookEvent, Host};
use crate::input::{HookInput, parse_input};
use crate::settings::IntegrationSettings;

/// What a host tool maps to, before identity and context are added.
pub(crate) struct Mapped {
    tool: String,
    params: Value,
    adjustments: Vec<String>,
    agent_note: Option<String>,
}

/// A hook input read and translated.
#[derive(Debug, Clone, PartialEq)]
pub struct Translated {
    /// The input as read.
    pub input: HookInput,
    /// The call to put to Gatehouse.
    pub call: HookToolCall,
}

impl Translated {
    /// The hook event, which decides the answer's shape.
    pub fn event(&self) -> HookEvent {
        self.input.event
    }
}

/// Reads a hook input of `host` and translates it: [`parse_input`], then [`map_call`].
/// `machine` names the machine the host runs on (the settings' `machine` wins).
pub fn translate(
    host: Host,
    bytes: &[u8],
    settings: &IntegrationSettings,
    machine: &str,
) -> Result<Translated, Rejected> {
    let input = parse_input(host, bytes)?;
    let call = map_call(&input, settings, machine).map_err(|error| Rejected {
        event: Some(input.event),
        error,
    })?;
    Ok(Translated { input, call })
}

/// The Gatehouse tool call for `input`.
///
/// Identity: the agent id is the settings' `agent_id`; the session key is the settings'
/// template rendered with the host and `session_id`, plus `:subagent:<agent_id>` for a call
/// from a sub-agent. Both depend only on the session (and sub-agent), never on the call, so
/// every call of one conversation lands in one Gatehouse session.
pub fn map_call(
    input: &HookInput,
    settings: &IntegrationSettings,
    machine: &str,
) -> Result<HookToolCall, HookError> {
    let mapped = match input.host {
        Host::ClaudeCode => claude_code::map(input)?,
        Host::Codex => codex::map(input)?,
    };
    let mut session_key =
        settings
            .session_key
            .render(input.host, &input.session_id, &settings.agent_id);
    if let Some(subagent) = &input.subagent_id {
        session_key.push_str(":subagent:");
        session_key.push_str(subagent);
    }
    let subagent = input
        .subagent_id
        .as_ref()
        .map(|id| match &input.subagent_type {
            Some(kind) => format!("{kind} ({id})"),
            None => id.clone(),
        });
    Ok(HookToolCall {
        agent_id: settings.agent_id.as_str().to_owned(),
        session_key,
        tool: mapped.tool,
        params: mapped.params,
        call_id: input.tool_use_id.clone(),
        context: ApproverContext {
            host: input.host,
            event: input.event,
            host_tool: input.tool_name.clone(),
            machine: settings.machine.as_deref().unwrap_or(machine).to_owned(),
            project_dir: input.cwd.clone(),
            session_id: input.session_id.clone(),
            permission_mode: input.permission_mode.clone(),
            subagent,
            agent_note: mapped.agent_note.as_deref().and_then(agent_note),
            adjustments: mapped.adjustments,
        },
        route: settings.route.clone(),
    })
}
