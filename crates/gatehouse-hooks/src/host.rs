//! The agent hosts and the hook events Gatehouse answers.

use std::fmt;

/// An agent host whose hook contract this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// Anthropic's Claude Code (command hooks and `http` hooks), contract of 2.1.332.
    ClaudeCode,
    /// OpenAI's Codex CLI (command hooks), contract of 0.171.0.
    Codex,
}

impl Host {
    /// The name in commands, URLs and session keys: `claude-code`, `codex`.
    pub fn slug(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
        }
    }

    /// The name people read: `Claude Code`, `Codex`.
    pub fn display_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::Codex => "Codex",
        }
    }

    /// The host named by `slug` (`claude-code`, `codex`), as `gatehouse hook <slug>` takes it.
    pub fn from_slug(slug: &str) -> Option<Host> {
        [Host::ClaudeCode, Host::Codex]
            .into_iter()
            .find(|host| host.slug() == slug)
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

/// A hook event Gatehouse answers. Both hosts name them alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// Before a tool runs: the host asks whether it may.
    PreToolUse,
    /// When the host would show its own permission prompt.
    PermissionRequest,
}

impl HookEvent {
    /// The `hook_event_name` / `hookEventName` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }

    /// The event spelled `name`, exactly (the hosts send these names verbatim).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        [HookEvent::PreToolUse, HookEvent::PermissionRequest]
            .into_iter()
            .find(|event| event.as_str() == name)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
