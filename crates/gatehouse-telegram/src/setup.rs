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
    problems: TelegramConfig::problems,
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

/// The adapter's settings from `channels.telegram`, before Telegram's own rules are checked.
fn settings(section: &Section, warnings: &mut Vec<String>) -> Result<TelegramConfig, SetupError> {
    let Some(source) = section.token_source() else {
        return Err(SetupError::Refused(
            "`channels.telegram`: set one of botToken, tokenFile, tokenEnv (or enabled: false)"
                .to_owned(),
        ));
    };
    let token = resolve(&source, "channels.telegram.botToken", warnings)?;
    let mut config = TelegramConfig::new(token).map_err(SetupError::failed)?;
    if let Some(mode) = webhook_mode(section, warnings)? {
        config.mode = mode;
    }
    if let Some(api_url) = &section.api_url {
        config.api_url = config_url("channels.telegram.apiUrl", api_url)?;
    }
    if let Some(max) = section.delivery.as_ref().and_then(|d| d.max_connections) {
        config.max_connections = usize::try_from(max).unwrap_or(usize::MAX);
    }
    Ok(config)
}

/// `webhookUrl` → webhook mode served by the gateway on the URL's path, guarded by the webhook
/// secret; `None` (long polling) without it. A webhook without a secret is refused: anyone who
/// learns the URL could otherwise post forged updates.
fn webhook_mode(
    section: &Section,
    warnings: &mut Vec<String>,
) -> Result<Option<UpdateMode>, SetupError> {
    let Some(url) = &section.webhook_url else {
        return Ok(None);
    };
    let url = config_url("channels.telegram.webhookUrl", url)?;
    let Some(source) = section.webhook_secret_source() else {
        return Err(SetupError::Refused(
            "`channels.telegram.webhookUrl` needs a secret: set one of webhookSecret, \
             webhookSecretFile, webhookSecretEnv"
                .to_owned(),
        ));
    };
    let secret = resolve(&source, "channels.telegram.webhookSecret", warnings)?;
    Ok(Some(UpdateMode::HostedWebhook(HostedWebhook::new(
        url, secret,
    ))))
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
