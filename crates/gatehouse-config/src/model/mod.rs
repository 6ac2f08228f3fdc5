//! The config document as typed data. Field names follow OpenClaw's keys (camelCase on disk);
//! every field is optional so a partial config means "use the defaults".
//!
//! Types here are plain data: no defaults applied, no policy decided. The loader checks
//! unknown keys and cross-field rules; conversions into policy inputs live elsewhere.

mod agents;
mod approvals;
mod channels;
pub(crate) mod de;
mod delivery;
mod gateway;
mod integrations;
mod tools;

use serde::Deserialize;

pub use agents::{
    AgentConfig, AgentDefaults, AgentsConfig, ElevatedLevel, Isolation, SandboxConfig, SandboxMode,
    SessionConfig, SessionScope, SubagentsConfig,
};
pub use approvals::{
    ApprovalsConfig, ExecForwardingConfig, ForwardTarget, ForwardingMode, ToolApprovalsConfig,
};
pub(crate) use channels::snowflake;
pub use channels::{
    ApprovalTarget, ChannelApprovalsConfig, ChannelSections, ChannelsConfig, ConversationConfig,
    ConversationTools, DeliveryBlocks, DiscordConfig, Enabled, GuildConfig, SlackConfig, SlackMode,
    StrangerRepliesConfig, TelegramConfig,
};
pub use delivery::{ChannelDeliveryConfig, ChannelRetryConfig, Fraction, Rate};
pub use gateway::{
    DnsConfig, GatewayAuthConfig, GatewayConfig, GatewayLimitsConfig, RateLimitConfig, Scope,
    StoreConfig, StoreKind, TokenConfig,
};
pub use integrations::{IntegrationConfig, IntegrationsConfig};
pub use tools::{
    ApplyPatchConfig, BrowserConfig, ElevatedConfig, ExecConfig, FsConfig, PathAccessSection,
    SafeBinProfileConfig, ScopedToolPolicy, ScopedTools, SkillBinConfig, SsrfPolicySection,
    ToolPolicyConfig, ToolProfile, ToolsConfig, WebConfig, WebFetchConfig,
};

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Config {
    /// Tool policy and exec settings.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// Agent defaults and per-agent overrides.
    #[serde(default)]
    pub agents: AgentsConfig,
    /// Server settings.
    #[serde(default)]
    pub gateway: GatewayConfig,
    /// Approval forwarding.
    #[serde(default)]
    pub approvals: ApprovalsConfig,
    /// Chat channels.
    #[serde(default)]
    pub channels: ChannelsConfig,
    /// How sessions are keyed (`mainKey`, `scope`).
    #[serde(default)]
    pub session: SessionConfig,
    /// Browser settings; Gatehouse reads `browser.ssrfPolicy`.
    pub browser: Option<BrowserConfig>,
    /// Agent hosts asking through their hooks (Claude Code, Codex).
    #[serde(default)]
    pub integrations: IntegrationsConfig,
}

impl Config {
    /// The `agents.list` entry with this id, if configured.
    pub fn agent(&self, id: &str) -> Option<&AgentConfig> {
        self.agents.list.iter().find(|agent| agent.id == id)
    }
}
