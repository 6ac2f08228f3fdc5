//! Agent-host hooks for Gatehouse: the translation between Claude Code's and Codex's hook
//! contracts and Gatehouse tool calls.
//!
//! An agent host runs a hook before each tool call (`PreToolUse`) and when it would ask its user
//! for permission (`PermissionRequest`). This crate reads that hook's input
//! ([`parse_input`]), maps the host's tool to the reference's tool and parameters with an
//! agent id and a session key ([`map_call`], or both at once with [`translate`]), and renders
//! Gatehouse's answer in exactly the shape the host honours ([`render`] for a command hook,
//! [`render_http`] for Claude Code's `http` hook). It is an adapter for agent hosts, as the
//! chat adapters are for platforms: the `gatehouse hook claude-code|codex` command and the
//! gateway's `POST /hooks/claude-code` call it; the gateway decides, and its answers are read
//! back into an [`Answer`] here ([`after_check`], [`after_request`]).
//!
//! **Invariants.** Decides nothing: no policy, no I/O, no clock, no network. Anything it cannot
//! read or map — oversized, malformed, an unknown event or tool — is a [`Rejected`] that renders
//! as a deny, never an allow and never a panic. An [`Answer::Ask`] is rendered as a deny where
//! "no decision" would let the host run the call (Codex's PreToolUse). Every file path handed
//! on is absolute, joined to the hook's `cwd` as the host joins it.
//!
//! ```
//! use gatehouse_hooks::{Answer, Host, IntegrationSettings, render, translate};
//!
//! let stdin = br#"{"session_id":"0317bc51","cwd":"/srv/app","hook_event_name":"PreToolUse",
//!   "tool_name":"Bash","tool_input":{"command":"make test"},"tool_use_id":"toolu_01"}"#;
//! let settings = IntegrationSettings::default();
//! let translated = translate(Host::ClaudeCode, stdin, &settings, "build-box").unwrap();
//! assert_eq!(translated.call.tool, "exec");
//! assert_eq!(translated.call.session_key, "claude-code:0317bc51");
//!
//! // … ask the gateway with `translated.call.check_params()`; say it refused:
//! let answer = Answer::Deny { reason: "Gatehouse denied this call: not allowlisted".into() };
//! let output = render(Host::ClaudeCode, translated.event(), &answer);
//! assert_eq!(output.exit_code, 0);
//! assert!(String::from_utf8(output.stdout).unwrap().contains(r#""permissionDecision":"deny""#));
//! ```

mod answer;
mod call;
mod decide;
mod error;
mod host;
mod input;
mod map;
mod render;
mod settings;

pub use answer::Answer;
pub use call::{ApproverContext, HookToolCall};
pub use decide::{AfterCheck, after_check, after_request};
pub use error::{HookError, Rejected, SettingsError};
pub use host::{HookEvent, Host};
pub use input::{HookInput, MAX_INPUT_BYTES, parse_input};
pub use map::{Translated, map_call, translate};
pub use render::{HookOutput, HttpAnswer, render, render_http};
pub use settings::{AgentId, CardRoute, IntegrationSettings, OnUnreachable, SessionKeyTemplate};
