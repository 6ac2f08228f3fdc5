//! `channels.discord` → a connected [`DiscordChannel`]: the token resolved, the ids checked, the
//! token tried against Discord (`GET /users/@me`) before the gateway starts.

use std::sync::Arc;

use async_trait::async_trait;
use gatehouse_chat::adapter::{Adapter, Connect, Connection, SetupError, Steps};
use gatehouse_chat::platform::Platform;
use gatehouse_config::model::DiscordConfig as Section;
use gatehouse_config::{Config, SecretSource};

use crate::platform::Discord;
use crate::{DiscordChannel, DiscordConfig, DiscordError, Secret};

/// The Discord adapter, as the binary registers it.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiscordAdapter;

/// How `channels.discord` becomes the adapter's settings.
const STEPS: Steps<Section, DiscordConfig, DiscordError> = Steps {
    unusable: UNUSABLE,
    settings,
    problems: DiscordConfig::problems,
};

/// What a Discord settings refusal is reported under.
const UNUSABLE: &str = "`channels.discord` is not usable";

/// Discord needs no routes on the gateway's listener, whatever type they have.
impl<R> Adapter<Config, R> for DiscordAdapter {
    fn platform(&self) -> &'static dyn Platform {
        &Discord
    }

    fn configured(&self, config: &Config) -> bool {
        config.channels.configured().discord.is_some()
    }

    fn check(&self, config: &Config, warnings: &mut Vec<String>) -> Vec<SetupError> {
        STEPS.check(config.channels.started().discord, warnings)
    }

    fn prepare(
        &self,
        config: &Config,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Box<dyn Connect<R>>>, SetupError> {
        let ready = STEPS.prepare(config.channels.started().discord, warnings)?;
        Ok(ready.map(|settings| Box::new(Ready(settings)) as Box<dyn Connect<R>>))
    }
}

/// Settings Discord's rules accept.
struct Ready(DiscordConfig);

#[async_trait]
impl<R> Connect<R> for Ready {
    /// Connects the bot; a wrong token or an unreachable API stops the start.
    async fn connect(self: Box<Self>) -> Result<Connection<R>, SetupError> {
        let channel = DiscordChannel::connect(self.0).await.map_err(|error| {
            SetupError::because("cannot connect to Discord (`channels.discord`)", error)
        })?;
        tracing::info!("Discord connected.");
        Ok(Connection {
            channel: Arc::new(channel),
            // Discord addresses a bot by mention (`<@id>`), which the adapter strips itself.
            bot_username: None,
            routes: None,
        })
    }
}

/// The adapter's settings from the config section, before Discord's own rules are checked.
fn settings(section: &Section, warnings: &mut Vec<String>) -> Result<DiscordConfig, SetupError> {
    let Some(source) = section.token_source() else {
        return Err(SetupError::Refused(
            "`channels.discord`: set one of botToken, tokenFile, tokenEnv (or enabled: false)"
                .to_owned(),
        ));
    };
    let Some(application_id) = section.application_snowflake() else {
        return Err(SetupError::Refused(
            "`channels.discord.applicationId`: set the application's id (Developer Portal > \
             General Information > Application ID); it names the bot's interaction webhooks"
                .to_owned(),
        ));
    };
    let token = resolve(&source, "channels.discord.botToken", warnings)?;
    let mut config = DiscordConfig::new(token, application_id);
    config.api_url = section.api_url.clone();
    if let Some(max) = section.delivery.as_ref().and_then(|d| d.max_connections) {
        config.max_connections = usize::try_from(max).unwrap_or(usize::MAX);
    }
    config.guild_ids = section.guild_snowflakes();
    config.message_content_intent = section.message_content_intent.unwrap_or(false);
    Ok(config)
}

/// A secret from its source; a file others can read goes to `warnings`.
fn resolve(
    source: &SecretSource,
    key: &str,
    warnings: &mut Vec<String>,
) -> Result<Secret, SetupError> {
    let resolved = source.resolve(key).map_err(SetupError::failed)?;
    warnings.extend(resolved.warning);
    Ok(resolved.secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `section`, whose tokens are inline, so there are no warnings to keep.
    fn adapter_config_of(section: &Section) -> Result<DiscordConfig, SetupError> {
        STEPS
            .prepare(Some(section), &mut Vec::new())
            .map(Option::unwrap)
    }

    fn section(extra: &str) -> Section {
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
        assert!(error.explained().contains("apiUrl"), "{error}");
    }

    /// Operator review: a token with a space and an API URL with a path took two starts to fix,
    /// one refusal showing per start.
    #[test]
    fn names_every_key_discord_refuses() {
        let error = adapter_config_of(&section(
            "botToken: 'Bot a b', applicationId: 77, apiUrl: 'http://127.0.0.1:9/api/v10'",
        ))
        .unwrap_err();
        let text = error.explained();
        assert!(
            text.starts_with("`channels.discord` is not usable: 2 keys are refused:\n  "),
            "{text}"
        );
        let token = text.find("\n  invalid channels.discord.botToken: expected the bot token");
        let url = text.find("\n  invalid channels.discord.apiUrl: must be an http(s) origin");
        assert!(
            matches!((token, url), (Some(t), Some(u)) if t < u),
            "{text}"
        );
    }

    /// One refused key is reported as before: the key itself under the channel.
    #[test]
    fn names_a_single_refused_key_without_a_count() {
        let error =
            adapter_config_of(&section("botToken: 'Bot a b', applicationId: 77")).unwrap_err();
        assert_eq!(
            error.explained(),
            "`channels.discord` is not usable: invalid channels.discord.botToken: expected the \
             bot token from the Developer Portal (Bot > Reset Token)"
        );
    }
}
