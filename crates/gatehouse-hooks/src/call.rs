//! The Gatehouse tool call a hook input becomes, and what approvers are told about it.

use serde_json::{Map, Value, json};

use crate::host::{HookEvent, Host};
use crate::settings::CardRoute;

/// Longest free text (the agent's own description of a call) carried to approvers, in
/// characters; longer is cut with `…`.
const MAX_NOTE_CHARS: usize = 500;

/// One hook input as a Gatehouse tool call: the fields of `tools.call.check`, and the context
/// `tools.call.request` shows approvers.
#[derive(Debug, Clone, PartialEq)]
pub struct HookToolCall {
    /// The Gatehouse agent id.
    pub agent_id: String,
    /// The session key (see [`crate::SessionKeyTemplate`]).
    pub session_key: String,
    /// The reference's tool name: `exec`, `read`, `write`, `edit`, `apply_patch`, `web_fetch`,
    /// `web_search`, `sessions_spawn`, or the MCP name as the host sent it.
    pub tool: String,
    /// The tool's parameters, in the reference's names (`path`, `command` + `cwd`, `url`,
    /// `input`, …); an MCP tool's arguments as sent.
    pub params: Value,
    /// The host's id of the call (`tool_use_id`), when it sent one.
    pub call_id: Option<String>,
    /// What approvers see besides the tool and its parameters.
    pub context: ApproverContext,
    /// The chat its approval card goes to, from the integration's settings.
    pub route: Option<CardRoute>,
}

/// Who asked, from where: shown to approvers in the request's title and description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApproverContext {
    /// The host.
    pub host: Host,
    /// The hook event.
    pub event: HookEvent,
    /// The tool as the host named it (`Bash`, `Write`).
    pub host_tool: String,
    /// The machine the host runs on.
    pub machine: String,
    /// The project: the hook's `cwd`.
    pub project_dir: String,
    /// The host's session id.
    pub session_id: String,
    /// The host's permission mode, when it sent one.
    pub permission_mode: Option<String>,
    /// The sub-agent the call comes from: its kind and id.
    pub subagent: Option<String>,
    /// What the agent said the call is for (`description` of a Bash call, Codex's
    /// justification); the agent's words, cut to 500 characters.
    pub agent_note: Option<String>,
    /// What Gatehouse changed to judge the call (a relative path joined to `cwd`, …).
    pub adjustments: Vec<String>,
}

impl HookToolCall {
    /// The params of `tools.call.check`: `{agentId, sessionKey, tool, params, callId?}`.
    pub fn check_params(&self) -> Value {
        let mut params = Map::new();
        params.insert("agentId".into(), json!(self.agent_id));
        params.insert("sessionKey".into(), json!(self.session_key));
        params.insert("tool".into(), json!(self.tool));
        params.insert("params".into(), self.params.clone());
        if let Some(call_id) = &self.call_id {
            params.insert("callId".into(), json!(call_id));
        }
        Value::Object(params)
    }

    /// The params of `tools.call.request`: the check's, plus `title`, `description`,
    /// `timeoutMs` and, when the integration routes its cards, `turnSource`.
    pub fn request_params(&self, timeout_ms: u64) -> Value {
        let mut params = self.check_params();
        if let Value::Object(fields) = &mut params {
            fields.insert("title".into(), json!(self.title()));
            fields.insert("description".into(), json!(self.description()));
            fields.insert("timeoutMs".into(), json!(timeout_ms));
            if let Some(route) = &self.route {
                fields.insert("turnSource".into(), turn_source(route));
            }
        }
        params
    }

    /// One line: `Claude Code on build-box: Bash`.
    pub fn title(&self) -> String {
        let c = &self.context;
        format!("{} on {}: {}", c.host, c.machine, c.host_tool)
    }

    /// The lines approvers read under the title: project, session, mode, sub-agent, the
    /// agent's note (marked as the agent's words) and Gatehouse's adjustments.
    pub fn description(&self) -> String {
        let c = &self.context;
        let mut lines = vec![
            format!("Project: {}", c.project_dir),
            format!("Session: {} ({} {})", c.session_id, c.host, c.event),
        ];
        if let Some(mode) = &c.permission_mode {
            lines.push(format!("Permission mode: {mode}"));
        }
        if let Some(subagent) = &c.subagent {
            lines.push(format!("Sub-agent: {subagent}"));
        }
        if let Some(note) = &c.agent_note {
            lines.push(format!("The agent says: {note:?}"));
        }
        lines.extend(c.adjustments.iter().map(|a| format!("Gatehouse: {a}")));
        lines.join("\n")
    }
}

fn turn_source(route: &CardRoute) -> Value {
    let mut source = Map::new();
    source.insert("channel".into(), json!(route.channel));
    source.insert("to".into(), json!(route.to));
    if let Some(account) = &route.account_id {
        source.insert("accountId".into(), json!(account));
    }
    if let Some(thread) = &route.thread_id {
        source.insert("threadId".into(), json!(thread));
    }
    Value::Object(source)
}

/// The agent's free text, without control characters and cut to [`MAX_NOTE_CHARS`].
pub(crate) fn agent_note(text: &str) -> Option<String> {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() {
        return None;
    }
    Some(cut(cleaned, MAX_NOTE_CHARS))
}

/// `text` cut to `max` characters, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
