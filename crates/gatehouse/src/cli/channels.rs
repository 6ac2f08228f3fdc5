//! Connecting the chat adapters configured under `channels.*` and handing them to the gateway.
//!
//! The gateway never depends on an adapter crate: each adapter is built here and passed on as an
//! `Arc<dyn Channel>`. Discord and Slack plug in the same way: one `connect_<channel>` function
//! returning a [`ConnectedChannel`], one line in [`connect_all`].
//!
//! Each channel connects in two steps: its settings are built from the config (secrets resolved,
//! keys checked), then the adapter connects. [`check_all`] runs only the first step, so `doctor`
//! finds what `serve` would refuse without calling any platform.

use std::sync::Arc;

use anyhow::{Context as _, bail};
use axum::Router;
use gatehouse_config::model::TelegramConfig as TelegramSection;
use gatehouse_config::{Config, SecretSource};
use gatehouse_discord::DiscordConfig;
use gatehouse_service::ConnectedChannel;
use gatehouse_slack::SlackConfig;
use gatehouse_telegram::{HostedWebhook, Secret, TelegramChannel, TelegramConfig, UpdateMode};

mod discord;
mod slack;

/// The connected channels, and the HTTP routes some of them need served by the gateway.
pub(crate) struct Connected {
    /// Every enabled adapter, for the chat runtime.
    pub(crate) channels: Vec<ConnectedChannel>,
    /// Routes merged into the gateway's router (Slack's signed Request URL in HTTP mode,
    /// Telegram's webhook in webhook mode).
    pub(crate) routes: Router,
}

/// Connects every enabled channel; a channel that is configured but cannot connect (wrong token,
/// unreachable API) stops the start with the reason, rather than running without approvers.
pub(crate) async fn connect_all(config: &Config) -> anyhow::Result<Connected> {
    let started = config.channels.started();
    let mut connected = Vec::new();
    let mut routes = Router::new();
    if let Some(telegram) = started.telegram {
        let (telegram, telegram_routes) = connect_telegram(telegram).await?;
        connected.push(telegram);
        if let Some(telegram_routes) = telegram_routes {
            routes = routes.merge(telegram_routes);
        }
    }
    if let Some(section) = started.discord {
        connected.push(discord::connect(section).await?);
    }
    if let Some(section) = started.slack {
        let slack = slack::connect(section).await?;
        connected.push(slack.connected);
        if let Some(slack_routes) = slack.routes {
            routes = routes.merge(slack_routes);
        }
    }
    Ok(Connected {
        channels: connected,
        routes,
    })
}

/// Builds the settings of every enabled channel as [`connect_all`] does, stopping short of the
/// network: an error for everything `serve` would refuse before connecting (a secret it cannot
/// read, a missing key, a malformed URL). A secret file readable by group or others goes to
/// `warnings`. Building a channel's settings stops at its first error, like its start; settings
/// that could be built are then checked by the adapter's own rules, and every key it refuses is
/// an error of its own.
pub(crate) fn check_all(config: &Config, warnings: &mut Vec<String>) -> Vec<anyhow::Error> {
    let started = config.channels.started();
    let mut errors = Vec::new();
    if let Some(section) = started.telegram {
        errors.extend(refusals(
            telegram_settings(section, warnings),
            TelegramConfig::problems,
            TELEGRAM_UNUSABLE,
        ));
    }
    if let Some(section) = started.discord {
        errors.extend(refusals(
            discord::settings(section, warnings),
            DiscordConfig::problems,
            discord::UNUSABLE,
        ));
    }
    if let Some(section) = started.slack {
        errors.extend(refusals(
            slack::settings(section, warnings),
            SlackConfig::problems,
            slack::UNUSABLE,
        ));
    }
    errors
}

/// For `doctor`: the error that stopped a channel's settings being built, or every key of them
/// its adapter refuses (`problems`), each reported under `unusable` as `serve` reports it.
fn refusals<C, E>(
    settings: anyhow::Result<C>,
    problems: impl FnOnce(&C) -> Vec<E>,
    unusable: &'static str,
) -> Vec<anyhow::Error>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match settings {
        Ok(settings) => problems(&settings)
            .into_iter()
            .map(|problem| anyhow::Error::new(problem).context(unusable))
            .collect(),
        Err(error) => vec![error],
    }
}

/// For `serve`: a channel's settings, unless its adapter refuses a key (`problems`). Then one
/// error under `unusable` naming every refused key, one a line, so a single start shows all
/// there is to fix, as `doctor` lists them.
fn usable<C, E>(
    settings: C,
    problems: impl FnOnce(&C) -> Vec<E>,
    unusable: &'static str,
) -> anyhow::Result<C>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut problems = problems(&settings);
    if problems.len() <= 1 {
        return match problems.pop() {
            Some(problem) => Err(anyhow::Error::new(problem).context(unusable)),
            None => Ok(settings),
        };
    }
    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    Err(anyhow::anyhow!(
        "{} keys are refused:\n  {}",
        problems.len(),
        lines.join("\n  ")
    )
    .context(unusable))
}

/// Runs one channel's settings step for `serve`, printing the warnings its secrets raised on
/// stderr, as the config loader does, also when the step then fails.
fn printing_warnings<T>(step: impl FnOnce(&mut Vec<String>) -> T) -> T {
    let mut warnings = Vec::new();
    let outcome = step(&mut warnings);
    for warning in &warnings {
        eprintln!("gatehouse: warning: {warning}");
    }
    outcome
}

/// The Telegram adapter and, in webhook mode, its route on the gateway's own listener.
async fn connect_telegram(
    section: &TelegramSection,
) -> anyhow::Result<(ConnectedChannel, Option<Router>)> {
    let config = printing_warnings(|warnings| telegram_config(section, warnings))?;
    let channel = TelegramChannel::connect(config)
        .await
        .context("cannot connect to Telegram (`channels.telegram`)")?;
    tracing::info!(bot = %channel.bot_username(), "Telegram connected.");
    let bot_username = Some(channel.bot_username().to_owned());
    let routes = channel.hosted_webhook_router();
    Ok((
        ConnectedChannel {
            channel: Arc::new(channel),
            bot_username,
        },
        routes,
    ))
}

/// What a Telegram settings refusal is reported under.
const TELEGRAM_UNUSABLE: &str = "`channels.telegram` is not usable";

/// The adapter's settings from `channels.telegram`, checked as Telegram would check them; every
/// missing or unusable key is named (all the keys Telegram refuses, not only the first).
fn telegram_config(
    section: &TelegramSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<TelegramConfig> {
    usable(
        telegram_settings(section, warnings)?,
        TelegramConfig::problems,
        TELEGRAM_UNUSABLE,
    )
}

/// The adapter's settings from `channels.telegram`, before Telegram's own rules are checked.
fn telegram_settings(
    section: &TelegramSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<TelegramConfig> {
    let Some(source) = section.token_source() else {
        bail!("`channels.telegram`: set one of botToken, tokenFile, tokenEnv (or enabled: false)");
    };
    let token = resolve(&source, "channels.telegram.botToken", warnings)?;
    let mut config = TelegramConfig::new(token)?;
    if let Some(mode) = webhook_mode(section, warnings)? {
        config.mode = mode;
    }
    if let Some(api_url) = &section.api_url {
        config.api_url = config_url("channels.telegram.apiUrl", api_url)?;
    }
    Ok(config)
}

/// A URL from the config at `key`, refused with the key named when it does not parse.
fn config_url<U: std::str::FromStr>(key: &str, text: &str) -> anyhow::Result<U>
where
    U::Err: std::error::Error + Send + Sync + 'static,
{
    text.parse()
        .with_context(|| format!("`{key}`: {text:?} is not a URL"))
}

/// `webhookUrl` → webhook mode served by the gateway on the URL's path, guarded by the webhook
/// secret; `None` (long polling) without it. A webhook without a secret is refused: anyone who
/// learns the URL could otherwise post forged updates.
fn webhook_mode(
    section: &TelegramSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Option<UpdateMode>> {
    let Some(url) = &section.webhook_url else {
        return Ok(None);
    };
    let url = config_url("channels.telegram.webhookUrl", url)?;
    let Some(source) = section.webhook_secret_source() else {
        bail!(
            "`channels.telegram.webhookUrl` needs a secret: set one of webhookSecret, \
             webhookSecretFile, webhookSecretEnv"
        );
    };
    let secret = resolve(&source, "channels.telegram.webhookSecret", warnings)?;
    Ok(Some(UpdateMode::HostedWebhook(HostedWebhook::new(
        url, secret,
    ))))
}

/// A secret from its source; a file others can read goes to `warnings`, which the caller
/// prints (`serve`) or lists (`doctor`).
fn resolve(source: &SecretSource, key: &str, warnings: &mut Vec<String>) -> anyhow::Result<Secret> {
    let resolved = source.resolve(key)?;
    warnings.extend(resolved.warning);
    Ok(resolved.secret)
}
