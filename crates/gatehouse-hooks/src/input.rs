//! Reading a hook input: the JSON a command hook gets on stdin and an `http` hook in its body.
//!
//! Only the fields Gatehouse needs are required and typed; every other field is kept in
//! [`HookInput::extra`], because both hosts add fields between versions (`prompt_id`, `effort`
//! and `mcp_server` appeared in Claude Code after its reference was written) and a reader that
//! refused them would deny every call after a host upgrade.

use serde_json::{Map, Value};

use crate::error::{HookError, Rejected};
use crate::host::{HookEvent, Host};

/// The largest hook input read, in bytes: 1 MiB.
///
/// One input is one tool call. What makes one large is the content a `Write` carries or the
/// strings of an `Edit`, and 1 MiB is the gateway's default HTTP body limit
/// (`limits.maxBodyBytes`), so the command hook and `POST /hooks/claude-code` accept the same
/// inputs and the call forwarded to the gateway fits its body limit too. A larger input is
/// refused (a deny naming the limit), never cut: a truncated `Write` would be judged on content
/// it does not carry.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// Longest `session_id` or sub-agent id accepted; the hosts send UUIDs (36 characters).
const MAX_ID_LEN: usize = 128;

/// One hook input, read.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    /// Who sent it (the caller says so: the command or endpoint names the host).
    pub host: Host,
    /// `hook_event_name`.
    pub event: HookEvent,
    /// `session_id`: the host's conversation, stable for its life. Letters, digits, `.`, `_`
    /// and `-` only, so it cannot forge another session key's shape.
    pub session_id: String,
    /// `cwd`: the session's working directory when the tool was called; absolute.
    pub cwd: String,
    /// `tool_name`, as the host spells it (`Bash`, `Write`, `mcp__gh__run_command`).
    pub tool_name: String,
    /// `tool_input`: the tool's arguments (`null` reads as `{}`).
    pub tool_input: Map<String, Value>,
    /// `tool_use_id`: the host's id of this call (PreToolUse only).
    pub tool_use_id: Option<String>,
    /// `permission_mode` (`default`, `acceptEdits`, `plan`, `dontAsk`, `bypassPermissions`, …).
    pub permission_mode: Option<String>,
    /// `transcript_path`.
    pub transcript_path: Option<String>,
    /// `agent_id`: the sub-agent the call comes from, when it is not the main conversation;
    /// same character rules as `session_id`.
    pub subagent_id: Option<String>,
    /// `agent_type`: the sub-agent's kind (`general-purpose`, …).
    pub subagent_type: Option<String>,
    /// `model` (Codex).
    pub model: Option<String>,
    /// `turn_id` (Codex).
    pub turn_id: Option<String>,
    /// Every other field, as sent.
    pub extra: Map<String, Value>,
}

/// Reads a hook input of `host` from `bytes`.
///
/// Refused: more than [`MAX_INPUT_BYTES`], empty, not JSON, not an object, an event other than
/// `PreToolUse`/`PermissionRequest`, and a missing or mistyped `session_id`, `cwd` (absolute),
/// `tool_name` or `tool_input`. The error carries the event when it was read, so the answer
/// can take that event's shape.
pub fn parse_input(host: Host, bytes: &[u8]) -> Result<HookInput, Rejected> {
    let unknown_event = |error| Rejected { event: None, error };
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(unknown_event(HookError::TooLarge {
            len: bytes.len(),
            limit: MAX_INPUT_BYTES,
        }));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(unknown_event(HookError::Empty));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        // serde_json's text ends with the position, which the error carries as fields.
        let text = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        unknown_event(HookError::NotJson {
            line: e.line(),
            column: e.column(),
            message: text.strip_suffix(&position).unwrap_or(&text).to_owned(),
        })
    })?;
    let Value::Object(mut fields) = value else {
        return Err(unknown_event(HookError::NotAnObject));
    };
    let event = take_event(&mut fields).map_err(unknown_event)?;
    read_fields(host, event, fields).map_err(|error| Rejected {
        event: Some(event),
        error,
    })
}

fn take_event(fields: &mut Map<String, Value>) -> Result<HookEvent, HookError> {
    let name = take_string(fields, "hook_event_name")?;
    HookEvent::from_name(&name).ok_or(HookError::UnsupportedEvent { name })
}

fn read_fields(
    host: Host,
    event: HookEvent,
    mut fields: Map<String, Value>,
) -> Result<HookInput, HookError> {
    let session_id = take_string(&mut fields, "session_id")?;
    check_id("session_id", &session_id)?;
    let cwd = take_string(&mut fields, "cwd")?;
    if !cwd.starts_with('/') {
        return Err(HookError::InvalidField {
            field: "cwd",
            why: format!("must be an absolute path, not {cwd:?}"),
        });
    }
    let tool_name = take_string(&mut fields, "tool_name")?;
    if tool_name.trim().is_empty() {
        return Err(HookError::InvalidField {
            field: "tool_name",
            why: "is empty".to_owned(),
        });
    }
    let tool_input = match fields.remove("tool_input") {
        None => {
            return Err(HookError::MissingField {
                field: "tool_input",
            });
        }
        Some(Value::Null) => Map::new(),
        Some(Value::Object(input)) => input,
        Some(_) => {
            return Err(HookError::WrongType {
                field: "tool_input",
                expected: "an object",
            });
        }
    };
    let subagent_id = take_optional_string(&mut fields, "agent_id")?;
    if let Some(id) = &subagent_id {
        check_id("agent_id", id)?;
    }
    Ok(HookInput {
        host,
        event,
        session_id,
        cwd,
        tool_name,
        tool_input,
        tool_use_id: take_optional_string(&mut fields, "tool_use_id")?,
        permission_mode: take_optional_string(&mut fields, "permission_mode")?,
        transcript_path: take_optional_string(&mut fields, "transcript_path")?,
        subagent_id,
        subagent_type: take_optional_string(&mut fields, "agent_type")?,
        model: take_optional_string(&mut fields, "model")?,
        turn_id: take_optional_string(&mut fields, "turn_id")?,
        extra: fields,
    })
}

fn take_string(fields: &mut Map<String, Value>, field: &'static str) -> Result<String, HookError> {
    take_optional_string(fields, field)?.ok_or(HookError::MissingField { field })
}

/// An optional string field; `null` reads as absent (Codex sends `transcript_path: null`).
fn take_optional_string(
    fields: &mut Map<String, Value>,
    field: &'static str,
) -> Result<Option<String>, HookError> {
    match fields.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(HookError::WrongType {
            field,
            expected: "a string",
        }),
    }
}

/// Session and sub-agent ids become part of a session key, so they may not carry `:` (which
/// would let an input name another session's key) or anything a person could misread.
fn check_id(field: &'static str, id: &str) -> Result<(), HookError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > MAX_ID_LEN || !id.chars().all(plain) {
        return Err(HookError::InvalidField {
            field,
            why: format!(
                "must be 1-{MAX_ID_LEN} letters, digits, '.', '_' or '-' (the hosts send UUIDs)"
            ),
        });
    }
    Ok(())
}
