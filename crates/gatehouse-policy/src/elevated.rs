//! Elevated mode: who may switch a session out of the sandbox, which level applies to a request,
//! and what that level does to exec settings.
//!
//! Three pure steps, each taking everything it needs as a parameter:
//! [`authorize_sender`] checks the gates (all required, per-agent gates only narrow),
//! [`resolve_level`] applies the precedence per-request > session > `elevatedDefault`, and
//! [`elevated_exec`] turns a level into exec settings without ever loosening a tool-policy deny.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::modes::{Ask, Security};

/// How far a session's exec may leave the sandbox.
///
/// Ordered from least to most permissive, so `min` picks the more cautious of two levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ElevatedLevel {
    /// Exec stays in the sandbox; host exec is refused.
    Off,
    /// Host exec with approvals: allowlist, ask on a miss.
    On,
    /// Host exec, and a person is asked for every command.
    Ask,
    /// Host exec without approvals.
    Full,
}

/// Every level, in the order replies list them.
pub const ELEVATED_LEVELS: [ElevatedLevel; 4] = [
    ElevatedLevel::Off,
    ElevatedLevel::On,
    ElevatedLevel::Ask,
    ElevatedLevel::Full,
];

impl ElevatedLevel {
    /// The config and reply spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ElevatedLevel::Off => "off",
            ElevatedLevel::On => "on",
            ElevatedLevel::Ask => "ask",
            ElevatedLevel::Full => "full",
        }
    }
}

impl fmt::Display for ElevatedLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A level spelling that is not one of `off`, `on`, `ask`, `full`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown elevated level {value:?} (expected one of: off, on, ask, full)")]
pub struct ParseLevelError {
    /// The rejected input, verbatim.
    pub value: String,
}

impl FromStr for ElevatedLevel {
    type Err = ParseLevelError;

    /// Accepts the canonical spellings only (as `agents.defaults.elevatedDefault` is written);
    /// chat aliases such as `yes` belong to the chat grammar.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        ELEVATED_LEVELS
            .into_iter()
            .find(|level| level.as_str() == value)
            .ok_or_else(|| ParseLevelError {
                value: value.to_owned(),
            })
    }
}

/// Who sent a chat message, with every identity field a platform may supply.
///
/// Fields a platform does not know stay `None`; an entry that needs a missing field never matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderIdentity {
    /// The channel the message came from (`telegram`, `discord`, `slack`, …): selects the
    /// `allowFrom.<channel>` list.
    pub channel: String,
    /// The platform's stable user id; the field approvals and bare entries rely on.
    pub id: String,
    /// The platform's "from" address when it differs from the id (e.g. a phone-based sender).
    pub from: Option<String>,
    /// The sender's phone number in E.164 form, where the platform exposes it.
    pub e164: Option<String>,
    /// The display name; mutable by the user, so only matched by explicit `name:` entries.
    pub name: Option<String>,
    /// The handle; mutable, so only matched by explicit `username:` entries.
    pub username: Option<String>,
    /// A platform tag (e.g. a Discord tag); mutable, matched only by `tag:` entries.
    pub tag: Option<String>,
}

/// One `allowFrom` entry, parsed so its meaning is fixed when the config loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowFromEntry {
    /// `*`: any sender on this channel.
    Any,
    /// A bare value: matches the sender's id, from address or E.164 number.
    Bare(String),
    /// `id:`: the sender's id only.
    Id(String),
    /// `from:`: the sender's from address only.
    From(String),
    /// `e164:`: the sender's phone number only.
    E164(String),
    /// `name:`: the display name, case-insensitively.
    Name(String),
    /// `username:`: the handle, case-insensitively, with or without a leading `@`.
    Username(String),
    /// `tag:`: the platform tag, case-insensitively, with or without a leading `#`.
    Tag(String),
}

/// An `allowFrom` entry that cannot mean anything, refused at load time instead of silently never
/// matching.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid elevated allowFrom entry {entry:?}: {reason}")]
pub struct AllowFromEntryError {
    /// The entry as written.
    pub entry: String,
    /// Why it was refused.
    pub reason: &'static str,
}

impl FromStr for AllowFromEntry {
    type Err = AllowFromEntryError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let entry = raw.trim();
        let refuse = |reason| AllowFromEntryError {
            entry: raw.to_owned(),
            reason,
        };
        if entry.is_empty() {
            return Err(refuse("empty entry"));
        }
        if entry == "*" {
            return Ok(AllowFromEntry::Any);
        }
        let Some((prefix, value)) = entry.split_once(':') else {
            return Ok(AllowFromEntry::Bare(entry.to_owned()));
        };
        let value = value.trim().to_owned();
        let build: fn(String) -> AllowFromEntry = match prefix.trim().to_ascii_lowercase().as_str()
        {
            "id" => AllowFromEntry::Id,
            "from" => AllowFromEntry::From,
            "e164" => AllowFromEntry::E164,
            "name" => AllowFromEntry::Name,
            "username" => AllowFromEntry::Username,
            "tag" => AllowFromEntry::Tag,
            // Ids that contain a colon (`user:123`) are plain ids: they only ever match exactly.
            _ => return Ok(AllowFromEntry::Bare(entry.to_owned())),
        };
        if value.is_empty() || value == "*" {
            return Err(refuse(
                "a prefixed entry needs a value (use a bare `*` for anyone)",
            ));
        }
        Ok(build(value))
    }
}

impl AllowFromEntry {
    /// Whether this entry admits `sender`; mutable fields compare case-insensitively, ids exactly.
    pub fn matches(&self, sender: &SenderIdentity) -> bool {
        let exact = |field: Option<&str>, want: &str| field.is_some_and(|got| got.trim() == want);
        let folded = |field: Option<&str>, want: &str, sigil: char| {
            field.is_some_and(|got| {
                got.trim()
                    .trim_start_matches(sigil)
                    .eq_ignore_ascii_case(want.trim_start_matches(sigil))
                    && !want.trim_start_matches(sigil).is_empty()
            })
        };
        let id = Some(sender.id.as_str()).filter(|id| !id.trim().is_empty());
        match self {
            AllowFromEntry::Any => true,
            AllowFromEntry::Bare(want) => {
                exact(id, want)
                    || exact(sender.from.as_deref(), want)
                    || exact(sender.e164.as_deref(), want)
            }
            AllowFromEntry::Id(want) => exact(id, want),
            AllowFromEntry::From(want) => exact(sender.from.as_deref(), want),
            AllowFromEntry::E164(want) => exact(sender.e164.as_deref(), want),
            AllowFromEntry::Name(want) => folded(sender.name.as_deref(), want, '\0'),
            AllowFromEntry::Username(want) => folded(sender.username.as_deref(), want, '@'),
            AllowFromEntry::Tag(want) => folded(sender.tag.as_deref(), want, '#'),
        }
    }
}

/// `tools.elevated`: the global gate every elevated directive passes first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElevatedGates {
    /// `tools.elevated.enabled`; off by default, so elevated mode is opt-in.
    pub enabled: bool,
    /// `tools.elevated.allowFrom.<channel>`: a channel without a list admits nobody.
    pub allow_from: BTreeMap<String, Vec<AllowFromEntry>>,
}

/// `agents.<id>.tools.elevated`: optional gates that can only narrow the global ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentElevatedGates {
    /// The agent these gates belong to, for refusal messages.
    pub agent_id: String,
    /// `enabled`; `Some(false)` disables elevated for this agent, `Some(true)` or `None` defer to
    /// the global gate (it cannot turn on what the global gate leaves off).
    pub enabled: Option<bool>,
    /// `allowFrom`; when set, the sender must match this list as well as the global one.
    pub allow_from: Option<BTreeMap<String, Vec<AllowFromEntry>>>,
}

/// Why an elevated directive was refused, with the config key that would change the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElevatedDenial {
    /// `tools.elevated.enabled` is not true.
    Disabled,
    /// `agents.<id>.tools.elevated.enabled` is false.
    AgentDisabled {
        /// The agent whose gate refused.
        agent_id: String,
    },
    /// The sender matched no entry of `tools.elevated.allowFrom.<channel>` (or it is absent).
    SenderNotAllowed {
        /// The channel whose list was consulted.
        channel: String,
    },
    /// The sender passed the global list but not the agent's own list.
    AgentSenderNotAllowed {
        /// The agent whose list refused.
        agent_id: String,
        /// The channel whose list was consulted.
        channel: String,
    },
}

impl fmt::Display for ElevatedDenial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElevatedDenial::Disabled => {
                f.write_str("elevated mode is disabled (tools.elevated.enabled)")
            }
            ElevatedDenial::AgentDisabled { agent_id } => write!(
                f,
                "elevated mode is disabled for agent {agent_id} (agents.{agent_id}.tools.elevated.enabled)"
            ),
            ElevatedDenial::SenderNotAllowed { channel } => {
                write!(f, "sender is not in tools.elevated.allowFrom.{channel}")
            }
            ElevatedDenial::AgentSenderNotAllowed { agent_id, channel } => write!(
                f,
                "sender is not in agents.{agent_id}.tools.elevated.allowFrom.{channel}"
            ),
        }
    }
}

fn list_admits(lists: &BTreeMap<String, Vec<AllowFromEntry>>, sender: &SenderIdentity) -> bool {
    lists
        .get(&sender.channel)
        .is_some_and(|entries| entries.iter().any(|entry| entry.matches(sender)))
}

/// Decides whether `sender` may change or use elevated mode for `agent`'s session: every gate
/// must pass, and the agent's gates can only refuse more.
pub fn authorize_sender(
    global: &ElevatedGates,
    agent: Option<&AgentElevatedGates>,
    sender: &SenderIdentity,
) -> Result<(), ElevatedDenial> {
    available(global, agent)?;
    if !list_admits(&global.allow_from, sender) {
        return Err(ElevatedDenial::SenderNotAllowed {
            channel: sender.channel.clone(),
        });
    }
    if let Some(agent) = agent
        && let Some(lists) = &agent.allow_from
        && !list_admits(lists, sender)
    {
        return Err(ElevatedDenial::AgentSenderNotAllowed {
            agent_id: agent.agent_id.clone(),
            channel: sender.channel.clone(),
        });
    }
    Ok(())
}

/// Whether elevated mode can apply at all for this agent, independent of any sender.
pub fn available(
    global: &ElevatedGates,
    agent: Option<&AgentElevatedGates>,
) -> Result<(), ElevatedDenial> {
    if !global.enabled {
        return Err(ElevatedDenial::Disabled);
    }
    if let Some(agent) = agent
        && agent.enabled == Some(false)
    {
        return Err(ElevatedDenial::AgentDisabled {
            agent_id: agent.agent_id.clone(),
        });
    }
    Ok(())
}

/// Where the level that applies to a request came from, for status replies and audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelSource {
    /// The request carried its own level.
    Request,
    /// The session's stored level.
    Session,
    /// `agents.defaults.elevatedDefault`.
    Default,
    /// Nothing was set: elevated is off.
    Unset,
    /// A level was set, but the gates are closed now, so it is off (a stored level is not a grant).
    GatesClosed,
}

/// The level in force for one request and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedLevel {
    /// The effective level.
    pub level: ElevatedLevel,
    /// Which setting supplied it.
    pub source: LevelSource,
}

/// The three places a level can come from, most specific first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelChoices {
    /// A level carried by the request itself.
    pub request: Option<ElevatedLevel>,
    /// The session's durable level, set by `/elevated`.
    pub session: Option<ElevatedLevel>,
    /// `agents.defaults.elevatedDefault`.
    pub default: Option<ElevatedLevel>,
}

/// Applies the precedence per-request > session > default, then forces `off` when the gates are
/// closed, so a level stored while elevated was enabled grants nothing after it is disabled.
pub fn resolve_level(
    choices: LevelChoices,
    global: &ElevatedGates,
    agent: Option<&AgentElevatedGates>,
) -> ResolvedLevel {
    let chosen = [
        (choices.request, LevelSource::Request),
        (choices.session, LevelSource::Session),
        (choices.default, LevelSource::Default),
    ]
    .into_iter()
    .find_map(|(level, source)| level.map(|level| ResolvedLevel { level, source }))
    .unwrap_or(ResolvedLevel {
        level: ElevatedLevel::Off,
        source: LevelSource::Unset,
    });
    if chosen.level != ElevatedLevel::Off && available(global, agent).is_err() {
        return ResolvedLevel {
            level: ElevatedLevel::Off,
            source: LevelSource::GatesClosed,
        };
    }
    chosen
}

/// The tool-policy verdict for `exec`, passed in so elevated mode cannot be consulted without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolVerdict {
    /// Tool policy allows `exec` for this agent.
    Allowed,
    /// Tool policy denies `exec`; nothing elevated does changes that.
    Denied,
}

/// What a level does to one exec request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElevatedExec {
    /// Tool policy denied `exec`: refused whatever the level.
    ToolDenied,
    /// Level `off`: host exec is refused; only the sandbox may run it.
    SandboxOnly,
    /// Host exec with these settings.
    Host {
        /// The exec security to apply on the host.
        security: Security,
        /// When to ask a person.
        ask: Ask,
    },
}

/// Maps a level to exec settings. The tool verdict is checked first, so no level can turn a
/// tool-policy deny into a run.
pub fn elevated_exec(level: ElevatedLevel, tool: ToolVerdict) -> ElevatedExec {
    match tool {
        ToolVerdict::Denied => return ElevatedExec::ToolDenied,
        ToolVerdict::Allowed => {}
    }
    match level {
        ElevatedLevel::Off => ElevatedExec::SandboxOnly,
        ElevatedLevel::On => ElevatedExec::Host {
            security: Security::Allowlist,
            ask: Ask::OnMiss,
        },
        ElevatedLevel::Ask => ElevatedExec::Host {
            security: Security::Allowlist,
            ask: Ask::Always,
        },
        ElevatedLevel::Full => ElevatedExec::Host {
            security: Security::Full,
            ask: Ask::Off,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip() {
        for level in ELEVATED_LEVELS {
            assert_eq!(level.as_str().parse::<ElevatedLevel>(), Ok(level));
        }
        assert!("yes".parse::<ElevatedLevel>().is_err());
    }

    #[test]
    fn prefixed_entries_need_a_value() {
        assert!("id:".parse::<AllowFromEntry>().is_err());
        assert!("username: ".parse::<AllowFromEntry>().is_err());
        assert!("tag:*".parse::<AllowFromEntry>().is_err());
        assert!("".parse::<AllowFromEntry>().is_err());
    }

    #[test]
    fn unknown_prefix_is_a_literal_id() {
        assert_eq!(
            "user:42".parse::<AllowFromEntry>(),
            Ok(AllowFromEntry::Bare("user:42".into()))
        );
    }

    #[test]
    fn tool_deny_wins_over_every_level() {
        for level in ELEVATED_LEVELS {
            assert_eq!(
                elevated_exec(level, ToolVerdict::Denied),
                ElevatedExec::ToolDenied
            );
        }
    }

    #[test]
    fn levels_map_to_exec_settings() {
        let host = |security, ask| ElevatedExec::Host { security, ask };
        let allowed = |level| elevated_exec(level, ToolVerdict::Allowed);
        assert_eq!(allowed(ElevatedLevel::Off), ElevatedExec::SandboxOnly);
        assert_eq!(
            allowed(ElevatedLevel::On),
            host(Security::Allowlist, Ask::OnMiss)
        );
        assert_eq!(
            allowed(ElevatedLevel::Ask),
            host(Security::Allowlist, Ask::Always)
        );
        assert_eq!(allowed(ElevatedLevel::Full), host(Security::Full, Ask::Off));
    }

    fn alice() -> SenderIdentity {
        SenderIdentity {
            channel: "telegram".into(),
            id: "1001".into(),
            from: Some("tg:alice".into()),
            e164: Some("+15550001".into()),
            name: Some("Alice Liddell".into()),
            username: Some("Alice".into()),
            tag: Some("ops".into()),
        }
    }

    fn gates(channel: &str, entries: &[&str]) -> ElevatedGates {
        let parsed = entries.iter().map(|e| e.parse().unwrap()).collect();
        ElevatedGates {
            enabled: true,
            allow_from: BTreeMap::from([(channel.to_owned(), parsed)]),
        }
    }

    fn check(entries: &[&str], sender: &SenderIdentity, expect_allowed: bool) {
        let result = authorize_sender(&gates("telegram", entries), None, sender);
        assert_eq!(
            result.is_ok(),
            expect_allowed,
            "entries {entries:?}: {result:?}"
        );
    }

    #[test]
    fn allows_every_allow_from_form() {
        let sender = alice();
        check(&["*"], &sender, true);
        check(&["1001"], &sender, true);
        check(&["tg:alice"], &sender, true);
        check(&["+15550001"], &sender, true);
        check(&["id:1001"], &sender, true);
        check(&["from:tg:alice"], &sender, true);
        check(&["e164:+15550001"], &sender, true);
        check(&["name:alice liddell"], &sender, true);
        check(&["username:@alice"], &sender, true);
        check(&["username:ALICE"], &sender, true);
        check(&["tag:#OPS"], &sender, true);
        check(&["ID:1001"], &sender, true);
        check(&["nobody", "id:1001"], &sender, true);
    }

    #[test]
    fn denies_near_misses_of_every_form() {
        let sender = alice();
        check(&[], &sender, false);
        check(&["1002"], &sender, false);
        check(&["100"], &sender, false);
        check(&["id:+15550001"], &sender, false);
        check(&["e164:1001"], &sender, false);
        check(&["from:1001"], &sender, false);
        // Mutable fields never match bare entries: a display name cannot be used to impersonate.
        check(&["Alice Liddell"], &sender, false);
        check(&["Alice"], &sender, false);
        check(&["name:alice"], &sender, false);
        check(&["username:alice2"], &sender, false);
        check(&["tag:dev"], &sender, false);
    }

    #[test]
    fn denies_entries_needing_fields_the_platform_did_not_supply() {
        let bare = SenderIdentity {
            channel: "telegram".into(),
            id: "1001".into(),
            ..SenderIdentity::default()
        };
        check(
            &[
                "username:alice",
                "name:Alice",
                "tag:ops",
                "e164:+1",
                "from:x",
            ],
            &bare,
            false,
        );
        let anonymous = SenderIdentity {
            channel: "telegram".into(),
            ..SenderIdentity::default()
        };
        check(&["id:1001"], &anonymous, false);
        check(&["*"], &anonymous, true);
    }

    #[test]
    fn denies_senders_of_a_channel_without_a_list() {
        let mut sender = alice();
        sender.channel = "discord".into();
        let result = authorize_sender(&gates("telegram", &["*"]), None, &sender);
        assert_eq!(
            result,
            Err(ElevatedDenial::SenderNotAllowed {
                channel: "discord".into()
            })
        );
    }

    #[test]
    fn denies_everyone_when_disabled() {
        let mut global = gates("telegram", &["*"]);
        global.enabled = false;
        assert_eq!(
            authorize_sender(&global, None, &alice()),
            Err(ElevatedDenial::Disabled)
        );
    }

    fn agent(enabled: Option<bool>, list: Option<&[&str]>) -> AgentElevatedGates {
        AgentElevatedGates {
            agent_id: "work".into(),
            enabled,
            allow_from: list.map(|entries| gates("telegram", entries).allow_from),
        }
    }

    #[test]
    fn agent_gates_only_narrow() {
        let global = gates("telegram", &["id:1001"]);
        let sender = alice();
        assert_eq!(
            authorize_sender(&global, Some(&agent(None, None)), &sender),
            Ok(())
        );
        assert_eq!(
            authorize_sender(&global, Some(&agent(Some(true), Some(&["*"]))), &sender),
            Ok(())
        );
        assert_eq!(
            authorize_sender(&global, Some(&agent(Some(false), None)), &sender),
            Err(ElevatedDenial::AgentDisabled {
                agent_id: "work".into()
            })
        );
        assert_eq!(
            authorize_sender(&global, Some(&agent(None, Some(&["id:9"]))), &sender),
            Err(ElevatedDenial::AgentSenderNotAllowed {
                agent_id: "work".into(),
                channel: "telegram".into()
            })
        );
        // An agent list cannot admit a sender the global list refuses.
        let mut bob = alice();
        bob.id = "2002".into();
        bob.from = None;
        bob.e164 = None;
        assert_eq!(
            authorize_sender(&global, Some(&agent(Some(true), Some(&["*"]))), &bob),
            Err(ElevatedDenial::SenderNotAllowed {
                channel: "telegram".into()
            })
        );
        // An agent cannot enable what the global gate leaves off.
        let mut off = global.clone();
        off.enabled = false;
        assert_eq!(
            authorize_sender(&off, Some(&agent(Some(true), Some(&["*"]))), &sender),
            Err(ElevatedDenial::Disabled)
        );
    }

    #[test]
    fn request_level_beats_session_beats_default() {
        let global = gates("telegram", &["*"]);
        let all = LevelChoices {
            request: Some(ElevatedLevel::Ask),
            session: Some(ElevatedLevel::Full),
            default: Some(ElevatedLevel::On),
        };
        let resolve = |choices| resolve_level(choices, &global, None);
        assert_eq!(
            resolve(all),
            ResolvedLevel {
                level: ElevatedLevel::Ask,
                source: LevelSource::Request
            }
        );
        let no_request = LevelChoices {
            request: None,
            ..all
        };
        assert_eq!(
            resolve(no_request),
            ResolvedLevel {
                level: ElevatedLevel::Full,
                source: LevelSource::Session
            }
        );
        let only_default = LevelChoices {
            session: None,
            ..no_request
        };
        assert_eq!(
            resolve(only_default),
            ResolvedLevel {
                level: ElevatedLevel::On,
                source: LevelSource::Default
            }
        );
        assert_eq!(
            resolve(LevelChoices::default()),
            ResolvedLevel {
                level: ElevatedLevel::Off,
                source: LevelSource::Unset
            }
        );
        // A request may lower the session's level as well as raise it.
        let lower = LevelChoices {
            request: Some(ElevatedLevel::Off),
            ..all
        };
        assert_eq!(resolve(lower).level, ElevatedLevel::Off);
    }

    #[test]
    fn stored_level_grants_nothing_once_gates_close() {
        let mut global = gates("telegram", &["*"]);
        let choices = LevelChoices {
            session: Some(ElevatedLevel::Full),
            ..LevelChoices::default()
        };
        assert_eq!(
            resolve_level(choices, &global, Some(&agent(Some(false), None))),
            ResolvedLevel {
                level: ElevatedLevel::Off,
                source: LevelSource::GatesClosed
            }
        );
        global.enabled = false;
        assert_eq!(
            resolve_level(choices, &global, None),
            ResolvedLevel {
                level: ElevatedLevel::Off,
                source: LevelSource::GatesClosed
            }
        );
    }

    #[test]
    fn denials_name_the_config_key() {
        let denial = ElevatedDenial::AgentSenderNotAllowed {
            agent_id: "work".into(),
            channel: "slack".into(),
        };
        assert_eq!(
            denial.to_string(),
            "sender is not in agents.work.tools.elevated.allowFrom.slack"
        );
    }
}
