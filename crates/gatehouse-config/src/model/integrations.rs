//! `integrations.claudeCode`, `integrations.codex`: the agent hosts that ask Gatehouse through
//! their hooks — which agent their calls run as, how their sessions are keyed, where their
//! approval cards go, and what a hook answers when the gateway is down.

use std::time::Duration;

use gatehouse_hooks::{AgentId, CardRoute, IntegrationSettings, OnUnreachable, SessionKeyTemplate};
use serde::Deserialize;

use super::approvals::ForwardTarget;

/// The `integrations` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationsConfig {
    /// Claude Code (`gatehouse hook claude-code`, `POST /hooks/claude-code`).
    pub claude_code: Option<IntegrationConfig>,
    /// Codex (`gatehouse hook codex`).
    pub codex: Option<IntegrationConfig>,
}

/// One integration's block; each key absent means the default of
/// [`IntegrationSettings::default`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationConfig {
    /// The Gatehouse agent the host's calls run as (`main`).
    #[serde(default, deserialize_with = "super::de::opt_parsed")]
    pub agent_id: Option<AgentId>,
    /// The session key template (`{host}:{session_id}`).
    #[serde(default, deserialize_with = "super::de::opt_parsed")]
    pub session_key: Option<SessionKeyTemplate>,
    /// `deny` (default) or `ask` when the gateway cannot be reached; never allow.
    #[serde(default, deserialize_with = "super::de::opt_parsed")]
    pub on_unreachable: Option<OnUnreachable>,
    /// The chat this integration's approval cards go to (the request's `turnSource`).
    pub route: Option<ForwardTarget>,
    /// How long a call waits for a person (280 s); keep it below the hook's `timeout`.
    #[serde(default, deserialize_with = "super::de::opt_duration")]
    pub approval_timeout: Option<Duration>,
    /// The machine name approvers see.
    pub machine: Option<String>,
}

impl IntegrationConfig {
    /// The settings this block gives, over the defaults.
    pub fn settings(&self) -> IntegrationSettings {
        let defaults = IntegrationSettings::default();
        IntegrationSettings {
            agent_id: self.agent_id.clone().unwrap_or(defaults.agent_id),
            session_key: self.session_key.clone().unwrap_or(defaults.session_key),
            on_unreachable: self.on_unreachable.unwrap_or(defaults.on_unreachable),
            route: self.route.as_ref().map(|target| CardRoute {
                channel: target.channel.clone(),
                to: target.to.clone(),
                account_id: target.account_id.clone(),
                thread_id: target.thread_id.clone(),
            }),
            approval_timeout: self.approval_timeout.unwrap_or(defaults.approval_timeout),
            machine: self.machine.clone().filter(|m| !m.trim().is_empty()),
        }
    }
}
