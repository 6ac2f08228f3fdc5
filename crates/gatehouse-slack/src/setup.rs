//! `channels.slack` → a [`SlackChannel`], plus its signed Request URL router in HTTP mode. The
//! token is checked with `auth.test` before the gateway serves, so a wrong one stops the start.

use std::sync::Arc;

use async_trait::async_trait;
use gatehouse_chat::adapter::{Adapter, Connect, Connection, SetupError, Steps, config_url};
use gatehouse_chat::platform::Platform;
use gatehouse_config::model::{SlackConfig as Section, SlackMode as ModeKey};
use gatehouse_config::{Config, Secret, SecretSource};

use crate::platform::Slack;
use crate::{SlackChannel, SlackConfig, SlackError, SlackMode};

/// The Slack adapter, as the binary registers it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlackAdapter;

/// How `channels.slack` becomes the adapter's settings.
const STEPS: Steps<Section, SlackConfig, SlackError> = Steps {
    unusable: UNUSABLE,
    settings,
    problems,
};

/// What a Slack settings refusal is reported under.
const UNUSABLE: &str = "`channels.slack` is not usable";

impl<R: From<axum::Router>> Adapter<Config, R> for SlackAdapter {
    fn platform(&self) -> &'static dyn Platform {
        &Slack
    }

    fn configured(&self, config: &Config) -> bool {
        config.channels.configured().slack.is_some()
    }

    fn check(&self, config: &Config, warnings: &mut Vec<String>) -> Vec<SetupError> {
        STEPS.check(config.channels.started().slack, warnings)
    }

    fn prepare(
        &self,
        config: &Config,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Box<dyn Connect<R>>>, SetupError> {
        let ready = STEPS.prepare(config.channels.started().slack, warnings)?;
        Ok(ready.map(|settings| Box::new(Ready(settings)) as Box<dyn Connect<R>>))
    }
}

/// Settings Slack's rules accept.
struct Ready(SlackConfig);

#[async_trait]
impl<R: From<axum::Router>> Connect<R> for Ready {
    /// Connects the app; in HTTP mode, also returns `POST /slack/events` for the gateway to
    /// serve (Socket Mode needs no public URL).
    async fn connect(self: Box<Self>) -> Result<Connection<R>, SetupError> {
        let mode = self.0.mode;
        let channel = SlackChannel::connect(self.0).await.map_err(|error| {
            SetupError::because("cannot connect to Slack (`channels.slack`)", error)
        })?;
        let routes = match mode {
            SlackMode::Http => Some(R::from(
                channel
                    .http_router()
                    .map_err(|error| SetupError::because(UNUSABLE, error))?,
            )),
            SlackMode::Socket => None,
        };
        Ok(Connection {
            channel: Arc::new(channel),
            // Slack addresses a bot by mention (`<@U…>`), not by an `@name` suffix.
            bot_username: None,
            routes,
        })
    }
}

/// The spellings of the bot token, the app-level token and the signing secret.
const TOKEN_KEYS: [&str; 3] = ["botToken", "tokenFile", "tokenEnv"];
const APP_TOKEN_KEYS: [&str; 3] = ["appToken", "appTokenFile", "appTokenEnv"];
const SIGNING_KEYS: [&str; 3] = ["signingSecret", "signingSecretFile", "signingSecretEnv"];

/// Stand in for a token or secret already refused, so Slack's rules still judge every other
/// key; never used, as the refusal stops the start.
const STAND_IN_BOT_TOKEN: &str = "xoxb-stand-in";
const STAND_IN_APP_TOKEN: &str = "xapp-stand-in";
const STAND_IN_SIGNING_SECRET: &str = "stand-in";

/// The adapter's settings from the config section, before Slack's own rules are checked; each
/// part it cannot build goes to `refused` (see [`Steps::settings`]).
fn settings(
    section: &Section,
    warnings: &mut Vec<String>,
    refused: &mut Vec<SetupError>,
) -> Option<SlackConfig> {
    let mut secret = |source: Option<SecretSource>, names: [&str; 3], stand_in: &str| {
        let source = source?;
        let key = format!("channels.slack.{}", source.key_name(names));
        Some(
            resolve(&source, &key, warnings)
                .map_err(|error| refused.push(error))
                .unwrap_or_else(|()| Secret::new(stand_in)),
        )
    };
    let bot = secret(section.token_source(), TOKEN_KEYS, STAND_IN_BOT_TOKEN);
    let app = secret(
        section.app_token_source(),
        APP_TOKEN_KEYS,
        STAND_IN_APP_TOKEN,
    );
    let signing = secret(
        section.signing_secret_source(),
        SIGNING_KEYS,
        STAND_IN_SIGNING_SECRET,
    );
    let bot = bot.unwrap_or_else(|| {
        refused.push(SetupError::Refused(
            "`channels.slack`: set one of botToken, tokenFile, tokenEnv (or enabled: false)"
                .to_owned(),
        ));
        Secret::new(STAND_IN_BOT_TOKEN)
    });
    let mode = match section.mode {
        None | Some(ModeKey::Socket) => SlackMode::Socket,
        Some(ModeKey::Http) => SlackMode::Http,
    };
    let app = match app {
        None if mode == SlackMode::Socket => {
            refused.push(SetupError::Refused(
                "`channels.slack`: Socket Mode (the default) needs an app-level token: set one \
                 of appToken, appTokenFile, appTokenEnv, or `mode: \"http\"` with a signing \
                 secret"
                    .to_owned(),
            ));
            Some(Secret::new(STAND_IN_APP_TOKEN))
        }
        app => app,
    };
    // `new` fills Slack's published defaults; the tokens are then set to exactly what the
    // operator configured (HTTP mode may have no app token).
    let new = SlackConfig::new(bot, app.clone().unwrap_or_else(|| Secret::new("")));
    let mut config = new
        .map_err(|error| refused.push(SetupError::because(UNUSABLE, error)))
        .ok()?;
    config.app_token = app;
    config.signing_secret = signing;
    config.mode = mode;
    if let Some(connections) = section.socket_connections {
        config.socket_connections = connections;
    }
    if let Some(max) = section.delivery.as_ref().and_then(|d| d.max_connections) {
        config.max_connections = usize::try_from(max).unwrap_or(usize::MAX);
    }
    if let Some(api_url) = &section.api_url {
        match config_url("channels.slack.apiUrl", api_url) {
            Ok(url) => config.api_url = url,
            Err(error) => refused.push(error),
        }
    }
    Some(config)
}

/// Slack's refusals of `settings`, each secret's naming the key the section used for it.
fn problems(section: &Section, settings: &SlackConfig) -> Vec<SlackError> {
    let used = |source: Option<SecretSource>, names: [&'static str; 3]| {
        source.map_or(names[0], |source| source.key_name(names))
    };
    let token_key = used(section.token_source(), TOKEN_KEYS);
    let app_key = used(section.app_token_source(), APP_TOKEN_KEYS);
    let signing_key = used(section.signing_secret_source(), SIGNING_KEYS);
    settings
        .problems()
        .into_iter()
        .map(|problem| match problem {
            SlackError::InvalidConfig { field, reason } => SlackError::InvalidConfig {
                field: match field {
                    "botToken" => token_key,
                    "appToken" => app_key,
                    "signingSecret" => signing_key,
                    other => other,
                },
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
    fn adapter_config_of(section: &Section) -> Result<SlackConfig, SetupError> {
        STEPS
            .prepare(Some(section), &mut Vec::new())
            .map(Option::unwrap)
    }

    fn section(extra: &str) -> Section {
        let text = format!("{{ channels: {{ slack: {{ botToken: 'xoxb-1', {extra} }} }} }}");
        let loaded = gatehouse_config::load_str(&text, std::path::Path::new("t.json5")).unwrap();
        loaded.config.channels.slack.unwrap()
    }

    #[test]
    fn maps_socket_mode_with_the_app_token() {
        let config = adapter_config_of(&section(
            "appToken: 'xapp-1', apiUrl: 'http://127.0.0.1:9/api'",
        ))
        .unwrap();
        assert_eq!(config.mode, SlackMode::Socket);
        assert_eq!(
            config.app_token.map(|t| t.expose().to_owned()).as_deref(),
            Some("xapp-1")
        );
        assert_eq!(config.api_url.as_str(), "http://127.0.0.1:9/api");
    }

    /// Serving its route is covered end to end (`tests/it/slack.rs`, HTTP mode), since
    /// connecting checks the token with Slack.
    #[test]
    fn maps_http_mode_with_the_signing_secret() {
        let section = section("mode: 'http', signingSecret: 'shh'");
        let config = adapter_config_of(&section).unwrap();
        assert_eq!(
            (config.mode, config.app_token.is_none()),
            (SlackMode::Http, true)
        );
    }

    #[test]
    fn maps_socket_connections_and_keeps_two_by_default() {
        let default = adapter_config_of(&section("appToken: 'xapp-1'")).unwrap();
        assert_eq!(default.socket_connections, 2);
        let one = adapter_config_of(&section("appToken: 'xapp-1', socketConnections: 1")).unwrap();
        assert_eq!(one.socket_connections, 1);
    }

    #[test]
    fn denies_zero_socket_connections() {
        let error =
            adapter_config_of(&section("appToken: 'xapp-1', socketConnections: 0")).unwrap_err();
        assert!(error.explained().contains("socketConnections"), "{error}");
    }

    #[test]
    fn denies_socket_mode_without_an_app_token() {
        let error = adapter_config_of(&section("")).unwrap_err();
        assert!(error.to_string().contains("app-level token"), "{error}");
    }

    #[test]
    fn denies_http_mode_without_a_signing_secret() {
        let error = adapter_config_of(&section("mode: 'http'")).unwrap_err();
        assert!(error.explained().contains("signingSecret"), "{error}");
    }

    /// Operator review: a user token as bot token and a bot token as app token took two starts
    /// to fix, one refusal showing per start.
    #[test]
    fn names_every_key_slack_refuses() {
        let text = "{ channels: { slack: { botToken: 'xoxp-1', appToken: 'xoxb-2' } } }";
        let loaded = gatehouse_config::load_str(text, std::path::Path::new("t.json5")).unwrap();
        let section = loaded.config.channels.slack.unwrap();
        let error = adapter_config_of(&section).unwrap_err();
        let text = error.explained();
        assert!(
            text.starts_with("`channels.slack` is not usable: 2 keys are refused:\n  "),
            "{text}"
        );
        let bot = text.find("\n  invalid channels.slack.botToken: expected a bot token");
        let app = text.find("\n  invalid channels.slack.appToken: expected an app-level token");
        assert!(matches!((bot, app), (Some(b), Some(a)) if b < a), "{text}");
    }
}
