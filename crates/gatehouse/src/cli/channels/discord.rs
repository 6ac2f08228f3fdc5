//! `channels.discord` → a connected [`DiscordChannel`]: the token resolved, the ids checked, the
//! token tried against Discord (`GET /users/@me`) before the gateway starts.

use std::sync::Arc;

use anyhow::{Context as _, bail};
use gatehouse_config::model::DiscordConfig as DiscordSection;
use gatehouse_discord::{DiscordChannel, DiscordConfig};
use gatehouse_service::ConnectedChannel;

/// Connects the bot `section` describes; a wrong token or an unreachable API stops the start.
pub(crate) async fn connect(section: &DiscordSection) -> anyhow::Result<ConnectedChannel> {
    let config = super::printing_warnings(|warnings| adapter_config(section, warnings))?;
    let channel = DiscordChannel::connect(config)
        .await
        .context("cannot connect to Discord (`channels.discord`)")?;
    tracing::info!("Discord connected.");
    Ok(ConnectedChannel {
        channel: Arc::new(channel),
        // Discord addresses a bot by mention (`<@id>`), which the adapter strips itself.
        bot_username: None,
    })
}

/// What a Discord settings refusal is reported under.
pub(super) const UNUSABLE: &str = "`channels.discord` is not usable";

/// The adapter's settings from the config section, checked as Discord would check them; every
/// missing or unusable key is named (all the keys Discord refuses, not only the first). A token
/// file readable by group or others goes to `warnings`.
fn adapter_config(
    section: &DiscordSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<DiscordConfig> {
    super::usable(
        settings(section, warnings)?,
        DiscordConfig::problems,
        UNUSABLE,
    )
}

/// The adapter's settings from the config section, before Discord's own rules are checked.
pub(super) fn settings(
    section: &DiscordSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<DiscordConfig> {
    let Some(source) = section.token_source() else {
        bail!("`channels.discord`: set one of botToken, tokenFile, tokenEnv (or enabled: false)");
    };
    let Some(application_id) = section.application_snowflake() else {
        bail!(
            "`channels.discord.applicationId`: set the application's id (Developer Portal > \
             General Information > Application ID); it names the bot's interaction webhooks"
        );
    };
    let token = super::resolve(&source, "channels.discord.botToken", warnings)?;
    let mut config = DiscordConfig::new(token, application_id);
    config.api_url = section.api_url.clone();
    config.guild_ids = section.guild_snowflakes();
    config.message_content_intent = section.message_content_intent.unwrap_or(false);
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `section`, whose tokens are inline, so there are no warnings to keep.
    fn adapter_config_of(section: &DiscordSection) -> anyhow::Result<DiscordConfig> {
        adapter_config(section, &mut Vec::new())
    }

    fn section(extra: &str) -> DiscordSection {
        let text = format!("{{ channels: {{ discord: {{ {extra} }} }} }}");
        let loaded = gatehouse_config::load_str(&text, std::path::Path::new("t.json5")).unwrap();
        loaded.config.channels.discord.unwrap()
    }

    #[test]
    fn maps_every_discord_key_into_the_adapter_config() {
        let config = adapter_config_of(&section(
            "botToken: 'MTEw.tok', applicationId: 77, guildIds: ['5', 6],
             apiUrl: 'http://127.0.0.1:9', messageContentIntent: true",
        ))
        .unwrap();
        assert_eq!(config.bot_token.expose(), "MTEw.tok");
        assert_eq!(config.application_id, 77);
        assert_eq!(config.guild_ids, vec![5, 6]);
        assert_eq!(config.api_url.as_deref(), Some("http://127.0.0.1:9"));
        assert!(config.message_content_intent);
    }

    #[test]
    fn denies_a_bot_without_an_application_id() {
        let error = adapter_config_of(&section("botToken: 'MTEw.tok'")).unwrap_err();
        assert!(error.to_string().contains("applicationId"), "{error}");
    }

    #[test]
    fn denies_an_api_url_with_a_path() {
        let error = adapter_config_of(&section(
            "botToken: 'MTEw.tok', applicationId: 77, apiUrl: 'http://127.0.0.1:9/api/v10'",
        ))
        .unwrap_err();
        assert!(format!("{error:#}").contains("apiUrl"), "{error:#}");
    }

    /// Operator review: a token with a space and an API URL with a path took two starts to fix,
    /// one refusal showing per start.
    #[test]
    fn names_every_key_discord_refuses() {
        let error = adapter_config_of(&section(
            "botToken: 'Bot a b', applicationId: 77, apiUrl: 'http://127.0.0.1:9/api/v10'",
        ))
        .unwrap_err();
        let shown = format!("{error:#}");
        assert!(
            shown.starts_with("`channels.discord` is not usable: 2 keys are refused:\n  "),
            "{shown}"
        );
        let token = shown.find("\n  invalid channels.discord.botToken: expected the bot token");
        let url = shown.find("\n  invalid channels.discord.apiUrl: must be an http(s) origin");
        assert!(
            matches!((token, url), (Some(t), Some(u)) if t < u),
            "{shown}"
        );
    }

    /// One refused key is reported as before: the key itself under the channel.
    #[test]
    fn names_a_single_refused_key_without_a_count() {
        let error =
            adapter_config_of(&section("botToken: 'Bot a b', applicationId: 77")).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "`channels.discord` is not usable: invalid channels.discord.botToken: expected the \
             bot token from the Developer Portal (Bot > Reset Token)"
        );
    }
}
