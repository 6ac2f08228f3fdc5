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
    problems,
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

/// The bot token's spellings: `botToken` (or `token`), `tokenFile`, `tokenEnv`.
const TOKEN_KEYS: [&str; 3] = ["botToken", "tokenFile", "tokenEnv"];

/// Stand in for a token or application id already refused, so Discord's rules still judge
/// every other key; never used, as the refusal stops the start.
const STAND_IN_TOKEN: &str = "stand-in";
const STAND_IN_APPLICATION_ID: u64 = 1;

/// The adapter's settings from the config section, before Discord's own rules are checked;
/// each part it cannot build goes to `refused` (see [`Steps::settings`]).
fn settings(
    section: &Section,
    warnings: &mut Vec<String>,
    refused: &mut Vec<SetupError>,
) -> Option<DiscordConfig> {
    let token = match section.token_source() {
        Some(source) => {
            let key = format!("channels.discord.{}", source.key_name(TOKEN_KEYS));
            resolve(&source, &key, warnings)
        }
        None => Err(SetupError::Refused(
            "`channels.discord`: set one of botToken, tokenFile, tokenEnv (or enabled: false)"
                .to_owned(),
        )),
    };
    let token = token
        .map_err(|error| refused.push(error))
        .unwrap_or_else(|()| Secret::new(STAND_IN_TOKEN));
    let application_id = section.application_snowflake().unwrap_or_else(|| {
        refused.push(SetupError::Refused(
            "`channels.discord.applicationId`: set the application's id (Developer Portal > \
             General Information > Application ID); it names the bot's interaction webhooks"
                .to_owned(),
        ));
        STAND_IN_APPLICATION_ID
    });
    let mut config = DiscordConfig::new(token, application_id);
    config.api_url = section.api_url.clone();
    if let Some(max) = section.delivery.as_ref().and_then(|d| d.max_connections) {
        config.max_connections = usize::try_from(max).unwrap_or(usize::MAX);
    }
    config.guild_ids = section.guild_snowflakes();
    config.message_content_intent = section.message_content_intent.unwrap_or(false);
    Some(config)
}

/// Discord's refusals of `settings`, the token's naming the key the section used for it.
fn problems(section: &Section, settings: &DiscordConfig) -> Vec<DiscordError> {
    let token_key = section
        .token_source()
        .map_or(TOKEN_KEYS[0], |source| source.key_name(TOKEN_KEYS));
    settings
        .problems()
        .into_iter()
        .map(|problem| match problem {
            DiscordError::InvalidConfig {
                field: "botToken",
                reason,
            } => DiscordError::InvalidConfig {
                field: token_key,
                reason,
            },
            other => other,
        })
        .collect()
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

    /// Operator review: a missing `applicationId` hid a malformed token and API URL, and a
    /// token read from `tokenFile` was reported as `botToken`.
    #[test]
    fn names_every_broken_key_and_the_key_the_token_came_from() {
        let section = section(
            "tokenEnv: 'GATEHOUSE_TEST_UNSET_DISCORD_TOKEN', apiUrl: 'http://127.0.0.1:9/api/v10'",
        );
        let error = STEPS
            .prepare(Some(&section), &mut Vec::new())
            .err()
            .unwrap();
        let text = error.explained();
        assert!(
            text.starts_with("`channels.discord` is not usable: 3 keys are refused:\n  "),
            "{text}"
        );
        for key in ["tokenEnv", "applicationId", "apiUrl"] {
            assert!(
                text.contains(&format!("channels.discord.{key}")),
                "{key}: {text}"
            );
        }
        assert!(!text.contains("botToken"), "{text}");
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
