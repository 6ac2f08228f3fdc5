//! What the file means for one agent: its settings, its allowlist, and how they compose with the
//! settings the agent's config requests.
//!
//! Lookup order per field is OpenClaw's: `agents.<id>`, then `agents.*`, then `defaults`, then the
//! caller's fallback. One deliberate difference: a value that is present but invalid resolves to
//! the strictest value (`deny`, `always`, `deny`, `false`) instead of being skipped, because
//! Gatehouse fails closed on anything it does not understand.

use gatehouse_policy::{Ask, Security};

use super::model::{AgentEntry, AllowlistEntry, ExecApprovalsFile, PolicySettings, Setting};
use super::parse::WILDCARD_AGENT_ID;

/// Values used for a field no level of the file sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostFallback {
    /// `security` when unset (OpenClaw: `full`, or the requested security when composing).
    pub security: Security,
    /// `ask` when unset (OpenClaw: `off`, or the requested ask when composing).
    pub ask: Ask,
    /// `askFallback` when unset (OpenClaw: `deny`).
    pub ask_fallback: Security,
    /// `autoAllowSkills` when unset (OpenClaw: `false`).
    pub auto_allow_skills: bool,
}

impl Default for HostFallback {
    fn default() -> Self {
        HostFallback {
            security: Security::Full,
            ask: Ask::Off,
            ask_fallback: Security::Deny,
            auto_allow_skills: false,
        }
    }
}

/// Which level of the file decided a field; lets `gatehouse check` explain a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingSource {
    /// `agents.<id>.<field>`.
    Agent,
    /// `agents.*.<field>`.
    Wildcard,
    /// `defaults.<field>`.
    Defaults,
    /// Not set anywhere: the caller's [`HostFallback`].
    Fallback,
    /// Set to an invalid value at the first level that sets it; the strictest value applies.
    Invalid,
}

/// A resolved value and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved<T> {
    /// The value in force.
    pub value: T,
    /// Which level decided it.
    pub source: SettingSource,
}

/// The file's settings for one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentPolicy<'a> {
    /// Host `security`.
    pub security: Resolved<Security>,
    /// Host `ask`.
    pub ask: Resolved<Ask>,
    /// Host `askFallback`.
    pub ask_fallback: Resolved<Security>,
    /// Host `autoAllowSkills`.
    pub auto_allow_skills: Resolved<bool>,
    /// `agents.*` entries then the agent's own, in file order, malformed items skipped.
    pub allowlist: Vec<&'a AllowlistEntry>,
}

/// The settings an agent's config asks for (`tools.exec.security` / `tools.exec.ask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedPolicy {
    /// Requested security; `full` when the config does not say.
    pub security: Security,
    /// Requested ask; `off` when the config does not say.
    pub ask: Ask,
}

impl Default for RequestedPolicy {
    fn default() -> Self {
        RequestedPolicy {
            security: Security::Full,
            ask: Ask::Off,
        }
    }
}

/// A setting as requested, as the host file allows, and the stricter of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Composed<T> {
    /// From the agent's config.
    pub requested: T,
    /// From `exec-approvals.json`.
    pub host: T,
    /// What applies: the stricter of the two.
    pub effective: T,
}

/// The policy in force for an agent once config and host file are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectivePolicy {
    /// `min` of requested and host security.
    pub security: Composed<Security>,
    /// `max` of requested and host ask: a host `ask: off` never silences a requested prompt.
    pub ask: Composed<Ask>,
    /// Host `askFallback`, clamped to the effective security so a timeout never grants more than
    /// an answer could.
    pub ask_fallback: Security,
    /// Host `autoAllowSkills`.
    pub auto_allow_skills: bool,
}

impl ExecApprovalsFile {
    /// Resolves the file's settings and allowlist for `agent_id`.
    pub fn resolve_agent(&self, agent_id: &str, fallback: &HostFallback) -> AgentPolicy<'_> {
        let agent = self.agents.get(agent_id);
        let wildcard = self.agents.get(WILDCARD_AGENT_ID);
        let levels = Levels {
            agent: agent.map(|a| &a.settings),
            wildcard: wildcard.map(|a| &a.settings),
            defaults: self.defaults.as_ref(),
        };
        let mut allowlist: Vec<&AllowlistEntry> = entries(wildcard).collect();
        if agent_id != WILDCARD_AGENT_ID {
            allowlist.extend(entries(agent));
        }
        AgentPolicy {
            security: levels.pick(|s| s.security.as_ref(), fallback.security, Security::Deny),
            ask: levels.pick(|s| s.ask.as_ref(), fallback.ask, Ask::Always),
            ask_fallback: levels.pick(
                |s| s.ask_fallback.as_ref(),
                fallback.ask_fallback,
                Security::Deny,
            ),
            auto_allow_skills: levels.pick(
                |s| s.auto_allow_skills.as_ref(),
                fallback.auto_allow_skills,
                false,
            ),
            allowlist,
        }
    }

    /// Composes the agent's requested settings with this host file (stricter wins).
    ///
    /// Fields the file leaves unset take the requested value, as in OpenClaw; an unset
    /// `askFallback` is `deny`.
    pub fn effective_policy(&self, agent_id: &str, requested: RequestedPolicy) -> EffectivePolicy {
        let host = self.resolve_agent(
            agent_id,
            &HostFallback {
                security: requested.security,
                ask: requested.ask,
                ..HostFallback::default()
            },
        );
        let security = requested.security.min_security(host.security.value);
        EffectivePolicy {
            security: Composed {
                requested: requested.security,
                host: host.security.value,
                effective: security,
            },
            ask: Composed {
                requested: requested.ask,
                host: host.ask.value,
                effective: requested.ask.max_ask(host.ask.value),
            },
            ask_fallback: host.ask_fallback.value.min_security(security),
            auto_allow_skills: host.auto_allow_skills.value,
        }
    }
}

fn entries(agent: Option<&AgentEntry>) -> impl Iterator<Item = &AllowlistEntry> {
    agent
        .and_then(|a| a.allowlist.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|item| item.entry())
}

struct Levels<'a> {
    agent: Option<&'a PolicySettings>,
    wildcard: Option<&'a PolicySettings>,
    defaults: Option<&'a PolicySettings>,
}

impl<'a> Levels<'a> {
    /// The first level that sets the field decides it, valid or not.
    fn pick<T: Copy + 'a>(
        &self,
        field: impl Fn(&'a PolicySettings) -> Option<&'a Setting<T>>,
        fallback: T,
        strictest: T,
    ) -> Resolved<T> {
        let levels = [
            (self.agent, SettingSource::Agent),
            (self.wildcard, SettingSource::Wildcard),
            (self.defaults, SettingSource::Defaults),
        ];
        for (settings, source) in levels {
            match settings.and_then(&field) {
                Some(Setting::Valid(value)) => {
                    return Resolved {
                        value: *value,
                        source,
                    };
                }
                Some(Setting::Invalid(_)) => {
                    return Resolved {
                        value: strictest,
                        source: SettingSource::Invalid,
                    };
                }
                None => {}
            }
        }
        Resolved {
            value: fallback,
            source: SettingSource::Fallback,
        }
    }
}
