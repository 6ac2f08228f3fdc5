//! `channels.telegram` → a connected [`TelegramChannel`]: the token resolved, the webhook (if
//! any) checked, the token tried against Telegram before the gateway starts.

use std::sync::Arc;

use async_trait::async_trait;
use gatehouse_chat::adapter::{Adapter, Connect, Connection, SetupError, Steps, config_url};
use gatehouse_chat::platform::Platform;
use gatehouse_config::model::TelegramConfig as Section;
use gatehouse_config::{Config, SecretSource};

use crate::config::{HostedWebhook, TelegramConfig, UpdateMode};
use crate::platform::Telegram;
use crate::{Secret, TelegramChannel, TelegramError};

/// The Telegram adapter, as the binary registers it.
#[derive(Debug, Clone, Copy, Default)]
pub struct TelegramAdapter;

/// How `channels.telegram` becomes the adapter's settings.
const STEPS: Steps<Section, TelegramConfig, TelegramError> = Steps {
    unusable: UNUSABLE,
    settings,
    problems,
};

/// What a Telegram settings refusal is reported under.
const UNUSABLE: &str = "`channels.telegram` is not usable";

impl<R: From<axum::Router>> Adapter<Config, R> for TelegramAdapter {
    fn platform(&self) -> &'static dyn Platform {
        &Telegram
    }

    fn configured(&self, config: &Config) -> bool {
        config.channels.configured().telegram.is_some()
    }

    fn check(&self, config: &Config, warnings: &mut Vec<String>) -> Vec<SetupError> {
        STEPS.check(config.channels.started().telegram, warnings)
    }

    fn prepare(
        &self,
        config: &Config,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Box<dyn Connect<R>>>, SetupError> {
        let ready = STEPS.prepare(config.channels.started().telegram, warnings)?;
        Ok(ready.map(|settings| Box::new(Ready(settings)) as Box<dyn Connect<R>>))
    }
}

/// Settings Telegram's rules accept.
struct Ready(TelegramConfig);

#[async_trait]
impl<R: From<axum::Router>> Connect<R> for Ready {
    /// Connects, and in webhook mode returns the webhook's route on the gateway's listener.
    async fn connect(self: Box<Self>) -> Result<Connection<R>, SetupError> {
        let channel = TelegramChannel::connect(self.0).await.map_err(|error| {
            SetupError::because("cannot connect to Telegram (`channels.telegram`)", error)
        })?;
        tracing::info!(bot = %channel.bot_username(), "Telegram connected.");
        let bot_username = Some(channel.bot_username().to_owned());
        let routes = channel.hosted_webhook_router().map(R::from);
        Ok(Connection {
            channel: Arc::new(channel),
            bot_username,
            routes,
        })
    }
}

/// The bot token's spellings: `botToken`, `tokenFile`, `tokenEnv`.
const TOKEN_KEYS: [&str; 3] = ["botToken", "tokenFile", "tokenEnv"];
/// The webhook secret's spellings.
const WEBHOOK_SECRET_KEYS: [&str; 3] = ["webhookSecret", "webhookSecretFile", "webhookSecretEnv"];

/// Stands in for a token or secret already refused, so Telegram's rules still judge every
/// other key; never used, as the refusal stops the start.
const STAND_IN_TOKEN: &str = "0:stand-in";
const STAND_IN_SECRET: &str = "stand-in-for-a-refused-webhook-secret";

/// The adapter's settings from `channels.telegram`, before Telegram's own rules are checked;
/// each part it cannot build goes to `refused` (see [`Steps::settings`]).
fn settings(
    section: &Section,
    warnings: &mut Vec<String>,
    refused: &mut Vec<SetupError>,
) -> Option<TelegramConfig> {
    let token = match section.token_source() {
        Some(source) => resolve(&source, &key(source.key_name(TOKEN_KEYS)), warnings),
        None => Err(SetupError::Refused(
            "`channels.telegram`: set one of botToken, tokenFile, tokenEnv (or enabled: false)"
                .to_owned(),
        )),
    };
    let token = kept(token, refused).unwrap_or_else(|| Secret::new(STAND_IN_TOKEN));
    let mut config = kept(
        TelegramConfig::new(token).map_err(SetupError::failed),
        refused,
    )?;
    if let Some(mode) = webhook_mode(section, warnings, refused) {
        config.mode = mode;
    }
    if let Some(api_url) = &section.api_url
        && let Some(url) = kept(config_url("channels.telegram.apiUrl", api_url), refused)
    {
        config.api_url = url;
    }
    if let Some(max) = section.delivery.as_ref().and_then(|d| d.max_connections) {
        config.max_connections = usize::try_from(max).unwrap_or(usize::MAX);
    }
    Some(config)
}

/// Telegram's refusals of `settings`, each naming the key the section used for it.
fn problems(section: &Section, settings: &TelegramConfig) -> Vec<TelegramError> {
    let token_key = section
        .token_source()
        .map_or(TOKEN_KEYS[0], |source| source.key_name(TOKEN_KEYS));
    let secret_key = section
        .webhook_secret_source()
        .map_or(WEBHOOK_SECRET_KEYS[0], |source| {
            source.key_name(WEBHOOK_SECRET_KEYS)
        });
    settings
        .problems()
        .into_iter()
        .map(|problem| match problem {
            TelegramError::InvalidConfig { field, reason } => TelegramError::InvalidConfig {
                field: match field {
                    "botToken" => token_key,
                    "webhookSecret" => secret_key,
                    other => other,
                },
                reason,
            },
            other => other,
        })
        .collect()
}

/// `channels.telegram.<name>`.
fn key(name: &str) -> String {
    format!("channels.telegram.{name}")
}

/// `result`'s value, or `None` with its error recorded in `refused`.
fn kept<T>(result: Result<T, SetupError>, refused: &mut Vec<SetupError>) -> Option<T> {
    result.map_err(|error| refused.push(error)).ok()
}

/// `webhookUrl` → webhook mode served by the gateway on the URL's path, guarded by the webhook
/// secret; `None` (long polling) without it, or when the URL is refused. A webhook without a
/// secret is refused: anyone who learns the URL could otherwise post forged updates.
fn webhook_mode(
    section: &Section,
    warnings: &mut Vec<String>,
    refused: &mut Vec<SetupError>,
) -> Option<UpdateMode> {
    let url = section.webhook_url.as_ref()?;
    let url = kept(config_url("channels.telegram.webhookUrl", url), refused);
    let secret = match section.webhook_secret_source() {
        Some(source) => {
            let key = key(source.key_name(WEBHOOK_SECRET_KEYS));
            kept(resolve(&source, &key, warnings), refused)
        }
        None => {
            refused.push(SetupError::Refused(
                "`channels.telegram.webhookUrl` needs a secret: set one of webhookSecret, \
                 webhookSecretFile, webhookSecretEnv"
                    .to_owned(),
            ));
            None
        }
    };
    let secret = secret.unwrap_or_else(|| Secret::new(STAND_IN_SECRET));
    Some(UpdateMode::HostedWebhook(HostedWebhook::new(url?, secret)))
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
