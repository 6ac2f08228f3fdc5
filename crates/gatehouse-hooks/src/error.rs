//! Why a hook input was refused before Gatehouse was asked, and why settings are invalid.
//!
//! Every [`HookError`] becomes a deny the model or the user reads, so its messages name the
//! field or tool at fault and what to do about it.

use crate::host::{HookEvent, Host};

/// A hook input that is not read, or a tool call that is not translated. Each one is answered
/// with a deny ([`crate::Rejected`]); none is ever an allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// Nothing on stdin or in the body.
    #[error("the hook input is empty")]
    Empty,
    /// Over [`crate::MAX_INPUT_BYTES`].
    #[error("the hook input is {len} bytes, over Gatehouse's limit of {limit} bytes")]
    TooLarge {
        /// Bytes received (at least; a reader may stop at the limit plus one).
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Not JSON, or not UTF-8.
    #[error("the hook input is not JSON (line {line}, column {column}: {message})")]
    NotJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the JSON reader said.
        message: String,
    },
    /// JSON, but not an object.
    #[error("the hook input is not a JSON object")]
    NotAnObject,
    /// A field Gatehouse needs is absent.
    #[error("the hook input has no `{field}`")]
    MissingField {
        /// The field.
        field: &'static str,
    },
    /// A field of the wrong JSON type.
    #[error("`{field}` in the hook input must be {expected}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A field whose value is not acceptable.
    #[error("`{field}` in the hook input {why}")]
    InvalidField {
        /// The field.
        field: &'static str,
        /// What is wrong, as the end of a sentence.
        why: String,
    },
    /// An event other than `PreToolUse` and `PermissionRequest`.
    #[error(
        "Gatehouse answers PreToolUse and PermissionRequest hooks only, not {name:?}; \
         remove it from the hook settings"
    )]
    UnsupportedEvent {
        /// The `hook_event_name` sent.
        name: String,
    },
    /// A tool Gatehouse has no mapping for.
    #[error(
        "Gatehouse does not know the {host} tool {tool:?}, so it refuses it \
         (docs/integrations/ lists the tools it maps)"
    )]
    UnknownTool {
        /// The host.
        host: Host,
        /// The tool name as sent.
        tool: String,
    },
    /// A name that starts like an MCP tool but is not `mcp__<server>__<tool>` of letters,
    /// digits, `_`, `-` and `.`.
    #[error(
        "{tool:?} is not an MCP tool name of the form mcp__<server>__<tool> \
         (letters, digits, '_', '-', '.')"
    )]
    BadMcpName {
        /// The tool name as sent.
        tool: String,
    },
    /// A parameter the tool's mapping needs is absent.
    #[error("the {tool} call has no `{param}`")]
    MissingParam {
        /// The host's tool name.
        tool: String,
        /// The parameter in `tool_input`.
        param: &'static str,
    },
    /// A parameter of the wrong JSON type.
    #[error("`{param}` of the {tool} call must be {expected}")]
    WrongParam {
        /// The host's tool name.
        tool: String,
        /// The parameter in `tool_input`.
        param: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A parameter whose value cannot be judged as sent.
    #[error("`{param}` of the {tool} call {why}")]
    InvalidParam {
        /// The host's tool name.
        tool: String,
        /// The parameter in `tool_input`.
        param: &'static str,
        /// What is wrong, as the end of a sentence.
        why: String,
    },
}

/// A [`HookError`] with the event it happened in, when the input got that far: what the host
/// is answered depends on the event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct Rejected {
    /// The event, once `hook_event_name` was read.
    pub event: Option<HookEvent>,
    /// Why.
    #[source]
    pub error: HookError,
}

/// Settings an operator wrote that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// An agent id that is not `[A-Za-z0-9][A-Za-z0-9_-]{0,63}`.
    #[error(
        "agent id {0:?} must be 1-64 letters, digits, '_' or '-', starting with a letter or digit"
    )]
    AgentId(String),
    /// A session key template that does not parse or lacks `{session_id}`.
    #[error("session key template {template:?}: {why}")]
    SessionKeyTemplate {
        /// The template.
        template: String,
        /// What is wrong.
        why: String,
    },
    /// An `onUnreachable` other than `deny` and `ask`.
    #[error(
        "{0:?} is not an answer for an unreachable gateway: use \"deny\" or \"ask\" (never allow)"
    )]
    OnUnreachable(String),
    /// A card route without a channel or a chat.
    #[error("the card route needs a non-empty `{0}`")]
    Route(&'static str),
}
