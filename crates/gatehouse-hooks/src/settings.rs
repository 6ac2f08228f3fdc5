//! One integration's settings: which Gatehouse agent a host's calls run as, how its session
//! keys are built, where its approval cards go, and what to answer when the gateway is down.
//!
//! A plain struct: the config crate (or a flag) fills it; this crate knows no config syntax.

use std::time::Duration;

use crate::error::SettingsError;
use crate::host::Host;

/// The settings of one integration (`claude-code` or `codex`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrationSettings {
    /// The Gatehouse agent every call of this integration runs as (its policy, workspace and
    /// grants). Default `main`, OpenClaw's default agent.
    pub agent_id: AgentId,
    /// How a session key is built. Default `{host}:{session_id}`.
    pub session_key: SessionKeyTemplate,
    /// The answer when the gateway cannot be reached. Default [`OnUnreachable::Deny`].
    pub on_unreachable: OnUnreachable,
    /// Where approval cards for this integration go (sent as the request's `turnSource`).
    /// `None`: the forwarding rules alone decide (`approvals.exec.targets`, filters on the
    /// session key).
    pub route: Option<CardRoute>,
    /// How long a call waits for a person (`timeoutMs` of `tools.call.request`). Keep it
    /// below the hook's `timeout` in the host's settings, so Gatehouse answers (deny) before
    /// the host gives up on the hook. Default 280 s, for the documented `timeout: 300`.
    pub approval_timeout: Duration,
    /// The machine name approvers see; `None`: the name the caller passes (the binary's host
    /// name; for the HTTP endpoint, whatever identifies the peer).
    pub machine: Option<String>,
}

impl Default for IntegrationSettings {
    fn default() -> Self {
        IntegrationSettings {
            agent_id: AgentId::main(),
            session_key: SessionKeyTemplate::default(),
            on_unreachable: OnUnreachable::Deny,
            route: None,
            approval_timeout: Duration::from_secs(280),
            machine: None,
        }
    }
}

/// What a hook answers when the gateway cannot be reached. Never allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnUnreachable {
    /// Refuse the call, saying the gateway is down.
    #[default]
    Deny,
    /// Hand the call to the host's own permission prompt where the host has one for this event
    /// (Claude Code; Codex's PermissionRequest); elsewhere this is a deny.
    Ask,
}

impl std::str::FromStr for OnUnreachable {
    type Err = SettingsError;

    /// `deny` or `ask`, as `integrations.*.onUnreachable` and `--on-unreachable` spell them.
    fn from_str(text: &str) -> Result<Self, SettingsError> {
        match text {
            "deny" => Ok(OnUnreachable::Deny),
            "ask" => Ok(OnUnreachable::Ask),
            _ => Err(SettingsError::OnUnreachable(text.to_owned())),
        }
    }
}

/// A Gatehouse agent id: `[A-Za-z0-9][A-Za-z0-9_-]{0,63}`, OpenClaw's shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentId(String);

impl AgentId {
    /// `id`, if it has the shape of an agent id.
    pub fn parse(id: &str) -> Result<AgentId, SettingsError> {
        let mut chars = id.chars();
        let first = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
        let rest = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if first && rest && id.len() <= 64 {
            Ok(AgentId(id.to_owned()))
        } else {
            Err(SettingsError::AgentId(id.to_owned()))
        }
    }

    /// `main`.
    pub fn main() -> AgentId {
        AgentId("main".to_owned())
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for AgentId {
    type Err = SettingsError;

    fn from_str(id: &str) -> Result<Self, SettingsError> {
        AgentId::parse(id)
    }
}

/// The chat an integration's approval cards go to: `turnSource` of the approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardRoute {
    /// `telegram`, `discord`, `slack`.
    pub channel: String,
    /// The chat (`-1001234567890`, `C0123ABCD`, `user:123…`).
    pub to: String,
    /// The bot account, for channels with several.
    pub account_id: Option<String>,
    /// A forum topic or thread.
    pub thread_id: Option<String>,
}

impl CardRoute {
    /// A route to `to` on `channel`; both must be non-empty.
    pub fn new(channel: &str, to: &str) -> Result<CardRoute, SettingsError> {
        if channel.trim().is_empty() {
            return Err(SettingsError::Route("channel"));
        }
        if to.trim().is_empty() {
            return Err(SettingsError::Route("to"));
        }
        Ok(CardRoute {
            channel: channel.trim().to_owned(),
            to: to.trim().to_owned(),
            account_id: None,
            thread_id: None,
        })
    }
}

/// How a session key is built from a hook input.
///
/// Placeholders: `{host}` (`claude-code`, `codex`), `{session_id}` (the host's session id,
/// required, so two conversations never share a key), `{agent_id}` (the Gatehouse agent id).
/// A call from a sub-agent gets `:subagent:<its id>` appended, so its calls are told apart and
/// still group under the parent's key. The key is stable across every call of one session:
/// nothing in it depends on the call (not even `cwd`, which moves when a command `cd`s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKeyTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Host,
    SessionId,
    AgentId,
}

impl Default for SessionKeyTemplate {
    fn default() -> Self {
        SessionKeyTemplate {
            text: "{host}:{session_id}".to_owned(),
            parts: vec![Part::Host, Part::Text(":".to_owned()), Part::SessionId],
        }
    }
}

impl std::str::FromStr for SessionKeyTemplate {
    type Err = SettingsError;

    fn from_str(template: &str) -> Result<Self, SettingsError> {
        SessionKeyTemplate::parse(template)
    }
}

impl SessionKeyTemplate {
    /// Reads a template; it must name `{session_id}` and no other placeholder than the three.
    pub fn parse(template: &str) -> Result<SessionKeyTemplate, SettingsError> {
        let invalid = |why: &str| SettingsError::SessionKeyTemplate {
            template: template.to_owned(),
            why: why.to_owned(),
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(at) if rest[at..].starts_with('}') => return Err(invalid("unmatched '}'")),
                Some(at) => {
                    if at > 0 {
                        parts.push(Part::Text(rest[..at].to_owned()));
                    }
                    let Some(len) = rest[at..].find('}') else {
                        return Err(invalid("unmatched '{'"));
                    };
                    parts.push(match &rest[at + 1..at + len] {
                        "host" => Part::Host,
                        "session_id" => Part::SessionId,
                        "agent_id" => Part::AgentId,
                        _ => {
                            return Err(invalid(
                                "placeholders are {host}, {session_id} and {agent_id}",
                            ));
                        }
                    });
                    rest = &rest[at + len + 1..];
                }
                None => {
                    parts.push(Part::Text(rest.to_owned()));
                    rest = "";
                }
            }
        }
        if !parts.contains(&Part::SessionId) {
            return Err(invalid(
                "must contain {session_id}, or every conversation would share one session",
            ));
        }
        Ok(SessionKeyTemplate {
            text: template.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The session key of a session of `host`, for Gatehouse agent `agent_id`.
    pub fn render(&self, host: Host, session_id: &str, agent_id: &AgentId) -> String {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.as_str(),
                Part::Host => host.slug(),
                Part::SessionId => session_id,
                Part::AgentId => agent_id.as_str(),
            })
            .collect()
    }
}
