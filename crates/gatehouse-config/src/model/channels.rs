//! `channels.{telegram,discord,slack}`: bot credentials and native approval clients.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::de;
use super::delivery::{ChannelDeliveryConfig, ChannelRetryConfig};
use super::tools::ScopedToolPolicy;
use crate::secret::{self, Secret, SecretSource};

/// The `channels` section. Other OpenClaw channels are accepted with a warning.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ChannelsConfig {
    /// Telegram bot.
    pub telegram: Option<TelegramConfig>,
    /// Discord bot.
    pub discord: Option<DiscordConfig>,
    /// Slack app.
    pub slack: Option<SlackConfig>,
}

/// `channels.telegram`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TelegramConfig {
    /// Start this channel (default true when configured).
    pub enabled: Option<bool>,
    /// Bot token, inline.
    pub bot_token: Option<Secret>,
    /// File holding the bot token.
    pub token_file: Option<PathBuf>,
    /// Environment variable holding the bot token.
    pub token_env: Option<String>,
    /// Bot API base URL (tests and proxies).
    pub api_url: Option<String>,
    /// Public URL for webhook mode; absent = long polling.
    pub webhook_url: Option<String>,
    /// Secret token Telegram sends with each webhook call, inline.
    pub webhook_secret: Option<Secret>,
    /// File holding the webhook secret.
    pub webhook_secret_file: Option<PathBuf>,
    /// Environment variable holding the webhook secret.
    pub webhook_secret_env: Option<String>,
    /// Native approval client.
    pub exec_approvals: Option<ChannelApprovalsConfig>,
    /// Pacing, digests and connections.
    pub delivery: Option<ChannelDeliveryConfig>,
    /// Retries and backoff (OpenClaw's key).
    pub retry: Option<ChannelRetryConfig>,
    /// Per-group settings by chat id (`"*"` for every group without its own); Gatehouse reads
    /// their `tools`.
    #[serde(default)]
    pub groups: BTreeMap<String, ConversationConfig>,
}

/// `channels.discord`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscordConfig {
    /// Start this channel (default true when configured).
    pub enabled: Option<bool>,
    /// Bot token, inline (`token` is OpenClaw's spelling).
    #[serde(alias = "token")]
    pub bot_token: Option<Secret>,
    /// File holding the bot token.
    pub token_file: Option<PathBuf>,
    /// Environment variable holding the bot token.
    pub token_env: Option<String>,
    /// API base URL (tests and proxies).
    pub api_url: Option<String>,
    /// Application id, for registering `/approve` and `/elevated` commands. A string or a
    /// number; checked to be a snowflake (see [`DiscordConfig::application_snowflake`]).
    #[serde(default, deserialize_with = "opt_id")]
    pub application_id: Option<String>,
    /// Guilds to register `/approve` and `/elevated` in (guild commands appear at once).
    #[serde(default, deserialize_with = "de::ids")]
    pub guild_ids: Vec<String>,
    /// Ask for the privileged MESSAGE_CONTENT intent, so text `/approve` in guild channels is
    /// read without mentioning the bot (it must also be enabled in the Developer Portal).
    pub message_content_intent: Option<bool>,
    /// Native approval client.
    pub exec_approvals: Option<ChannelApprovalsConfig>,
    /// Pacing, digests and connections.
    pub delivery: Option<ChannelDeliveryConfig>,
    /// Retries and backoff (OpenClaw's key).
    pub retry: Option<ChannelRetryConfig>,
    /// Per-guild settings by guild id (`"*"` for every guild without its own); Gatehouse
    /// reads their `tools`.
    #[serde(default)]
    pub guilds: BTreeMap<String, GuildConfig>,
}

/// `channels.slack`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlackConfig {
    /// Start this channel (default true when configured).
    pub enabled: Option<bool>,
    /// Bot token (`xoxb-…`), inline.
    pub bot_token: Option<Secret>,
    /// File holding the bot token.
    pub token_file: Option<PathBuf>,
    /// Environment variable holding the bot token.
    pub token_env: Option<String>,
    /// App-level token (`xapp-…`) for Socket Mode, inline.
    pub app_token: Option<Secret>,
    /// File holding the app-level token.
    pub app_token_file: Option<PathBuf>,
    /// Environment variable holding the app-level token.
    pub app_token_env: Option<String>,
    /// Signing secret for HTTP mode, inline.
    pub signing_secret: Option<Secret>,
    /// File holding the signing secret.
    pub signing_secret_file: Option<PathBuf>,
    /// Environment variable holding the signing secret.
    pub signing_secret_env: Option<String>,
    /// Web API base URL (tests and proxies).
    pub api_url: Option<String>,
    /// Socket Mode (default) or HTTP events.
    pub mode: Option<SlackMode>,
    /// Socket Mode connections kept open at once (default 2, so one can drop while the other
    /// still receives); at least 1.
    pub socket_connections: Option<u32>,
    /// Native approval client.
    pub exec_approvals: Option<ChannelApprovalsConfig>,
    /// Pacing, digests and connections.
    pub delivery: Option<ChannelDeliveryConfig>,
    /// Retries and backoff (OpenClaw's key).
    pub retry: Option<ChannelRetryConfig>,
    /// Per-channel settings by channel id (`"*"` for every channel without its own);
    /// Gatehouse reads their `tools`.
    #[serde(default)]
    pub channels: BTreeMap<String, ConversationConfig>,
}

/// One channel's `delivery` and `retry` blocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeliveryBlocks<'a> {
    /// `channels.<name>.delivery`.
    pub delivery: Option<&'a ChannelDeliveryConfig>,
    /// `channels.<name>.retry`.
    pub retry: Option<&'a ChannelRetryConfig>,
}

/// One group, guild channel or Slack channel: the tool policy of calls made from it (the
/// pipeline's `group` step). Its other OpenClaw settings load with a warning.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationConfig {
    /// `allow`, `alsoAllow`, `deny` for calls from this conversation.
    pub tools: Option<ScopedToolPolicy>,
}

/// One Discord guild: its tool policy, and its channels (whose own `tools` Gatehouse refuses:
/// the policy applies per guild).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuildConfig {
    /// `allow`, `alsoAllow`, `deny` for calls from this guild.
    pub tools: Option<ScopedToolPolicy>,
    /// Per-channel settings; a `tools` there is refused when the config loads.
    #[serde(default)]
    pub channels: BTreeMap<String, ConversationConfig>,
}

/// The tool policy configured for calls from one conversation, and the key it lives at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationTools<'a> {
    /// `channels.discord.guilds.42.tools`: named in every removal it makes.
    pub path: String,
    /// The lists.
    pub tools: &'a ScopedToolPolicy,
}

impl ChannelsConfig {
    /// The tool policy of a conversation: `channels.telegram.groups.<id>`,
    /// `channels.discord.guilds.<id>` or `channels.slack.channels.<id>`, else the platform's
    /// `"*"` entry; `None` when neither sets `tools`.
    pub fn conversation_tools(&self, channel: &str, id: &str) -> Option<ConversationTools<'_>> {
        let (key, entries): (&str, Vec<(&String, Option<&ScopedToolPolicy>)>) = match channel {
            "telegram" => (
                "groups",
                self.telegram
                    .iter()
                    .flat_map(|c| c.groups.iter().map(|(k, v)| (k, v.tools.as_ref())))
                    .collect(),
            ),
            "discord" => (
                "guilds",
                self.discord
                    .iter()
                    .flat_map(|c| c.guilds.iter().map(|(k, v)| (k, v.tools.as_ref())))
                    .collect(),
            ),
            "slack" => (
                "channels",
                self.slack
                    .iter()
                    .flat_map(|c| c.channels.iter().map(|(k, v)| (k, v.tools.as_ref())))
                    .collect(),
            ),
            _ => return None,
        };
        let find = |wanted: &str| {
            entries
                .iter()
                .find(|(k, tools)| k.as_str() == wanted && tools.is_some())
                .and_then(|(k, tools)| Some((k.as_str(), (*tools)?)))
        };
        let (entry, tools) = find(id.trim()).or_else(|| find("*"))?;
        Some(ConversationTools {
            path: format!("channels.{channel}.{key}.{entry}.tools"),
            tools,
        })
    }
}

/// One reference per channel section, for walking the channels in one fixed order.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelSections<'a> {
    /// `channels.telegram`.
    pub telegram: Option<&'a TelegramConfig>,
    /// `channels.discord`.
    pub discord: Option<&'a DiscordConfig>,
    /// `channels.slack`.
    pub slack: Option<&'a SlackConfig>,
}

impl ChannelsConfig {
    /// Every channel written in the config, switched off or not.
    pub fn configured(&self) -> ChannelSections<'_> {
        ChannelSections {
            telegram: self.telegram.as_ref(),
            discord: self.discord.as_ref(),
            slack: self.slack.as_ref(),
        }
    }

    /// The channels a start connects: configured and not `enabled: false`. `serve`, `doctor`
    /// and the list of secrets in use all ask here, so they cannot disagree on it.
    pub fn started(&self) -> ChannelSections<'_> {
        let on = |enabled: Option<bool>| enabled != Some(false);
        ChannelSections {
            telegram: self.telegram.as_ref().filter(|c| on(c.enabled)),
            discord: self.discord.as_ref().filter(|c| on(c.enabled)),
            slack: self.slack.as_ref().filter(|c| on(c.enabled)),
        }
    }

    /// Each channel's `delivery` and `retry` blocks by channel name, in the order of
    /// [`ChannelsConfig::exec_approvals`].
    pub fn delivery(&self) -> [(&'static str, DeliveryBlocks<'_>); 3] {
        [
            (
                "telegram",
                DeliveryBlocks {
                    delivery: self.telegram.as_ref().and_then(|c| c.delivery.as_ref()),
                    retry: self.telegram.as_ref().and_then(|c| c.retry.as_ref()),
                },
            ),
            (
                "discord",
                DeliveryBlocks {
                    delivery: self.discord.as_ref().and_then(|c| c.delivery.as_ref()),
                    retry: self.discord.as_ref().and_then(|c| c.retry.as_ref()),
                },
            ),
            (
                "slack",
                DeliveryBlocks {
                    delivery: self.slack.as_ref().and_then(|c| c.delivery.as_ref()),
                    retry: self.slack.as_ref().and_then(|c| c.retry.as_ref()),
                },
            ),
        ]
    }

    /// Each channel's `execApprovals` block by channel name, in a fixed order, so validation and
    /// the gateway walk the same list.
    pub fn exec_approvals(&self) -> [(&'static str, Option<&ChannelApprovalsConfig>); 3] {
        [
            (
                "telegram",
                self.telegram
                    .as_ref()
                    .and_then(|c| c.exec_approvals.as_ref()),
            ),
            (
                "discord",
                self.discord
                    .as_ref()
                    .and_then(|c| c.exec_approvals.as_ref()),
            ),
            (
                "slack",
                self.slack.as_ref().and_then(|c| c.exec_approvals.as_ref()),
            ),
        ]
    }
}

impl TelegramConfig {
    /// Where the bot token comes from (`botToken | tokenFile | tokenEnv`).
    pub fn token_source(&self) -> Option<SecretSource> {
        secret::first(
            self.bot_token.as_ref(),
            self.token_file.as_ref(),
            self.token_env.as_ref(),
        )
    }

    /// Where the webhook secret comes from (`webhookSecret | …File | …Env`).
    pub fn webhook_secret_source(&self) -> Option<SecretSource> {
        secret::first(
            self.webhook_secret.as_ref(),
            self.webhook_secret_file.as_ref(),
            self.webhook_secret_env.as_ref(),
        )
    }
}

impl DiscordConfig {
    /// Where the bot token comes from (`botToken`/`token` | `tokenFile` | `tokenEnv`).
    pub fn token_source(&self) -> Option<SecretSource> {
        secret::first(
            self.bot_token.as_ref(),
            self.token_file.as_ref(),
            self.token_env.as_ref(),
        )
    }

    /// `applicationId` as Discord's number; `None` when unset or not a snowflake (the loader
    /// refuses the latter, so a loaded config only lacks it when unset).
    pub fn application_snowflake(&self) -> Option<u64> {
        self.application_id.as_deref().and_then(snowflake)
    }

    /// `guildIds` as Discord's numbers; entries that are not snowflakes are refused at load.
    pub fn guild_snowflakes(&self) -> Vec<u64> {
        self.guild_ids
            .iter()
            .filter_map(|id| snowflake(id))
            .collect()
    }
}

/// A Discord id: a positive 64-bit integer, written as digits.
pub(crate) fn snowflake(id: &str) -> Option<u64> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse::<u64>().ok().filter(|&id| id != 0)
}

impl SlackConfig {
    /// Where the bot token comes from (`botToken | tokenFile | tokenEnv`).
    pub fn token_source(&self) -> Option<SecretSource> {
        secret::first(
            self.bot_token.as_ref(),
            self.token_file.as_ref(),
            self.token_env.as_ref(),
        )
    }

    /// Where the app-level token comes from (`appToken | appTokenFile | appTokenEnv`).
    pub fn app_token_source(&self) -> Option<SecretSource> {
        secret::first(
            self.app_token.as_ref(),
            self.app_token_file.as_ref(),
            self.app_token_env.as_ref(),
        )
    }

    /// Where the signing secret comes from (`signingSecret | …File | …Env`).
    pub fn signing_secret_source(&self) -> Option<SecretSource> {
        secret::first(
            self.signing_secret.as_ref(),
            self.signing_secret_file.as_ref(),
            self.signing_secret_env.as_ref(),
        )
    }
}

/// `channels.slack.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlackMode {
    /// Outbound WebSocket with the app-level token; no public URL needed.
    Socket,
    /// Signed HTTP requests to a public URL.
    Http,
}

/// `channels.<channel>.execApprovals`: approval cards with buttons for configured approvers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelApprovalsConfig {
    /// `true`, `false` or `"auto"` (on when at least one approver is configured).
    pub enabled: Option<Enabled>,
    /// Platform user ids allowed to decide.
    #[serde(default, deserialize_with = "de::ids")]
    pub approvers: Vec<String>,
    /// Where cards go.
    pub target: Option<ApprovalTarget>,
    /// Only these agent ids; absent = all.
    pub agent_filter: Option<Vec<String>>,
    /// Only matching session keys; absent = all.
    pub session_filter: Option<Vec<String>>,
    /// Delete the cards once resolved.
    pub cleanup_after_resolve: Option<bool>,
    /// Let this channel's approvers decide, by id, approvals never shown on this channel
    /// (default false: a person decides only what was put in front of them).
    pub decide_undelivered: Option<bool>,
    /// How often people who may decide nothing here are answered.
    pub stranger_replies: Option<StrangerRepliesConfig>,
}

/// `execApprovals.strangerReplies`: replies to people who are neither approvers nor admitted by
/// `tools.elevated.allowFrom` on the channel; each absent key keeps its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StrangerRepliesConfig {
    /// After a reply, that sender gets no other for this long (default 600).
    pub sender_quiet_seconds: Option<u64>,
    /// After a reply in a shared chat, no other reply to a stranger goes there for this long
    /// (default 60).
    pub chat_quiet_seconds: Option<u64>,
    /// Replies to strangers on the channel in any minute, private ones included (default 20;
    /// 0 answers none).
    pub per_minute: Option<u32>,
}

/// `execApprovals.enabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enabled {
    /// Explicitly on or off.
    Bool(bool),
    /// On when approvers are configured.
    Auto,
}

impl<'de> Deserialize<'de> for Enabled {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnabledVisitor)
    }
}

struct EnabledVisitor;

impl serde::de::Visitor<'_> for EnabledVisitor {
    type Value = Enabled;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("true, false or \"auto\"")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Enabled, E> {
        Ok(Enabled::Bool(value))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Enabled, E> {
        match value {
            "auto" => Ok(Enabled::Auto),
            other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
        }
    }
}

/// `execApprovals.target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalTarget {
    /// Approvers' direct messages (default).
    Dm,
    /// The chat the request came from.
    Channel,
    /// Both.
    Both,
}

fn opt_id<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(Option::<de::Id>::deserialize(deserializer)?.map(|id| id.0))
}
