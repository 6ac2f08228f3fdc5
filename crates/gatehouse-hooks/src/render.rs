//! Answers in each host's shape, exactly as the host honours them (verified with Claude Code
//! 2.1.332 and Codex 0.171.0; docs/integrations/ gives the tables).
//!
//! - **Claude Code** reads JSON on exit 0: PreToolUse `hookSpecificOutput.permissionDecision`
//!   `allow | deny | ask` with `permissionDecisionReason`; PermissionRequest
//!   `hookSpecificOutput.decision {behavior: allow | deny, message}`. PermissionRequest has no
//!   "ask": no output hands the call to Claude Code's own dialog.
//! - **Codex** honours only a deny: PreToolUse `permissionDecision: "deny"` with a non-empty
//!   reason and no other field (an `allow`, an `ask` or an extra field makes the hook "fail" and
//!   the command *run*). Its allow is exit 0 with nothing on stdout. PermissionRequest takes
//!   `decision {behavior: allow | deny, message}`; no output falls back to Codex's own approval.
//!
//! So an [`Answer::Ask`] becomes no output where the host then asks a person itself (Claude
//! Code's PermissionRequest, Codex's PermissionRequest), `permissionDecision: "ask"` for
//! Claude Code's PreToolUse, and a deny for Codex's PreToolUse, where no output would run the
//! command.
//!
//! Every output is written with infallible formatting (strings escaped by `serde_json::Value`'s
//! `Display`), so no serializer error can turn a deny into the empty output that is Codex's
//! allow.

use std::fmt;

use serde_json::Value;

use crate::answer::Answer;
use crate::call::cut;
use crate::error::Rejected;
use crate::host::{HookEvent, Host};

/// Longest reason written, in characters; hosts show it to the model and the user.
const MAX_REASON_CHARS: usize = 2000;

/// What a command hook writes: its exit code, stdout and stderr, for the binary to write as is.
#[derive(Clone, PartialEq, Eq)]
pub struct HookOutput {
    /// 0, or 2 for a deny whose event is unknown (both hosts block on exit 2 with a reason on
    /// stderr).
    pub exit_code: u8,
    /// The JSON answer, or nothing.
    pub stdout: Vec<u8>,
    /// A reason for people reading the host's logs, or the blocking reason of exit 2.
    pub stderr: Vec<u8>,
}

/// What `POST /hooks/claude-code` answers. Always status 200: Claude Code ignores the body of
/// any other status (and, unless `onFailure` is `block`, lets the call go on), so auth failures
/// and internal errors are answered 200 with a deny too.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    /// 200.
    pub status: u16,
    /// The JSON answer, or empty for "no decision".
    pub body: Vec<u8>,
}

impl HttpAnswer {
    /// The `Content-Type` to send.
    pub const CONTENT_TYPE: &'static str = "application/json";
}

// The outputs are text; showing them as text keeps a failed assertion readable.
impl fmt::Debug for HookOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookOutput")
            .field("exit_code", &self.exit_code)
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .finish()
    }
}

impl fmt::Debug for HttpAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpAnswer")
            .field("status", &self.status)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

/// `answer` to `event`, in `host`'s command-hook shape.
pub fn render(host: Host, event: HookEvent, answer: &Answer) -> HookOutput {
    match body(host, event, answer) {
        Some(json) => HookOutput {
            exit_code: 0,
            stdout: line(&json),
            stderr: Vec::new(),
        },
        None => HookOutput {
            exit_code: 0,
            stdout: Vec::new(),
            stderr: match answer {
                Answer::Allow { .. } => Vec::new(),
                Answer::Deny { reason } | Answer::Ask { reason } => line_text(reason),
            },
        },
    }
}

/// `answer` to `event` as the body of Claude Code's `http` hook.
pub fn render_http(event: HookEvent, answer: &Answer) -> HttpAnswer {
    HttpAnswer {
        status: 200,
        body: body(Host::ClaudeCode, event, answer)
            .map(|json| line(&json))
            .unwrap_or_default(),
    }
}

impl Rejected {
    /// The command hook's deny: the event's deny JSON, or exit 2 with the reason on stderr
    /// when the event is unknown (both hosts block a tool call on exit 2, whatever the event).
    pub fn render(&self, host: Host) -> HookOutput {
        let answer = self.answer();
        match self.event {
            Some(event) => render(host, event, &answer),
            None => HookOutput {
                exit_code: 2,
                stdout: Vec::new(),
                stderr: line_text(reason_of(&answer)),
            },
        }
    }

    /// The HTTP hook's deny: the event's deny JSON, or PreToolUse's when the event is unknown
    /// (a PermissionRequest then fails Claude Code's validation, which `onFailure: "block"`
    /// turns into a refusal; either way nothing is allowed).
    pub fn render_http(&self) -> HttpAnswer {
        render_http(self.event.unwrap_or(HookEvent::PreToolUse), &self.answer())
    }
}

/// The JSON answer, or `None` where the answer is "no output".
fn body(host: Host, event: HookEvent, answer: &Answer) -> Option<Json> {
    match (host, event, answer) {
        (Host::ClaudeCode, HookEvent::PreToolUse, _) => Some(claude_pre_tool_use(answer)),
        (_, HookEvent::PermissionRequest, Answer::Ask { .. }) => None,
        (_, HookEvent::PermissionRequest, Answer::Allow { .. }) => {
            Some(permission_request(vec![("behavior", text("allow"))]))
        }
        (_, HookEvent::PermissionRequest, Answer::Deny { reason }) => {
            Some(permission_request(vec![
                ("behavior", text("deny")),
                ("message", text(&clean(reason))),
            ]))
        }
        (Host::Codex, HookEvent::PreToolUse, Answer::Allow { .. }) => None,
        (Host::Codex, HookEvent::PreToolUse, Answer::Deny { reason }) => {
            Some(codex_pre_tool_use_deny(reason))
        }
        (Host::Codex, HookEvent::PreToolUse, Answer::Ask { reason }) => {
            Some(codex_pre_tool_use_deny(&format!(
                "{reason}. Codex cannot hand a call back to its own prompt from a PreToolUse \
                 hook, so Gatehouse refuses it"
            )))
        }
    }
}

fn claude_pre_tool_use(answer: &Answer) -> Json {
    let (decision, reason) = match answer {
        Answer::Allow { reason } => ("allow", reason.as_deref()),
        Answer::Deny { reason } => ("deny", Some(reason.as_str())),
        Answer::Ask { reason } => ("ask", Some(reason.as_str())),
    };
    let mut fields = vec![
        ("hookEventName", text("PreToolUse")),
        ("permissionDecision", text(decision)),
    ];
    if let Some(reason) = reason {
        fields.push(("permissionDecisionReason", text(&clean(reason))));
    }
    Json::Object(vec![("hookSpecificOutput", Json::Object(fields))])
}

/// Exactly the fields Codex accepts on a deny: any other makes the hook "fail" and the
/// command run.
fn codex_pre_tool_use_deny(reason: &str) -> Json {
    Json::Object(vec![(
        "hookSpecificOutput",
        Json::Object(vec![
            ("hookEventName", text("PreToolUse")),
            ("permissionDecision", text("deny")),
            ("permissionDecisionReason", text(&clean(reason))),
        ]),
    )])
}

fn permission_request(decision: Vec<(&'static str, Json)>) -> Json {
    Json::Object(vec![(
        "hookSpecificOutput",
        Json::Object(vec![
            ("hookEventName", text("PermissionRequest")),
            ("decision", Json::Object(decision)),
        ]),
    )])
}

/// An answer's JSON, written with its keys in the documented order whatever features
/// `serde_json` is built with (`preserve_order` or not), so the bytes a host gets are the
/// bytes the tests pin.
enum Json {
    Text(String),
    Object(Vec<(&'static str, Json)>),
}

fn text(value: &str) -> Json {
    Json::Text(value.to_owned())
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // `Value`'s `Display` escapes a string as JSON and cannot fail.
            Json::Text(value) => write!(f, "{}", Value::String(value.clone())),
            Json::Object(fields) => {
                f.write_str("{")?;
                for (at, (key, value)) in fields.iter().enumerate() {
                    if at > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "\"{key}\":{value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

fn reason_of(answer: &Answer) -> &str {
    match answer {
        Answer::Allow { reason } => reason.as_deref().unwrap_or(""),
        Answer::Deny { reason } | Answer::Ask { reason } => reason,
    }
}

/// A reason that is never empty (Codex refuses a deny with an empty one) and never huge.
fn clean(reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        "Gatehouse refused this call".to_owned()
    } else {
        cut(reason, MAX_REASON_CHARS)
    }
}

fn line(json: &Json) -> Vec<u8> {
    let mut bytes = json.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

fn line_text(reason: &str) -> Vec<u8> {
    let mut bytes = clean(reason).into_bytes();
    bytes.push(b'\n');
    bytes
}
