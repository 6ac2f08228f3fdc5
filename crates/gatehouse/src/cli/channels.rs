//! The chat adapters this build knows: the one place they are registered, and where they are
//! connected from their `channels.<name>` config sections.
//!
//! No other module (and no crate but the adapters themselves) names a platform: the service and
//! the gateway get each adapter as an `Arc<dyn Channel>` and its id rules as a
//! [`Platform`](gatehouse_chat::Platform). A new platform is its adapter crate, its fake in
//! `gatehouse-fakes`, and one line in [`ADAPTERS`].
//!
//! Each channel connects in two steps: its adapter builds its settings from the config (secrets
//! resolved, keys checked), then connects. [`check_all`] runs only the first step, so `doctor`
//! finds what `serve` would refuse without calling any platform.

use axum::Router;
use gatehouse_chat::{Adapter, Platforms, SetupError};
use gatehouse_config::{Config, ConfigError};
use gatehouse_discord::DiscordAdapter;
use gatehouse_service::ConnectedChannel;
use gatehouse_slack::SlackAdapter;
use gatehouse_telegram::TelegramAdapter;

/// Every chat adapter, in the order they connect.
static ADAPTERS: [&dyn Adapter<Config, Router>; 3] =
    [&TelegramAdapter, &DiscordAdapter, &SlackAdapter];

/// Every registered platform, for the chat settings' id rules.
pub(crate) fn platforms() -> Platforms {
    Platforms::new(ADAPTERS.iter().map(|adapter| adapter.platform()))
}

/// Whether `config` has a section for the platform named `channel`.
pub(crate) fn configured(config: &Config, channel: &str) -> bool {
    ADAPTERS
        .iter()
        .any(|adapter| adapter.platform().name() == channel && adapter.configured(config))
}

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
    let mut channels = Vec::new();
    let mut routes = Router::new();
    for adapter in ADAPTERS {
        let prepared = printing_warnings(|warnings| adapter.prepare(config, warnings));
        let Some(ready) = prepared.map_err(reported)? else {
            continue;
        };
        let connection = ready.connect().await.map_err(reported)?;
        channels.push(ConnectedChannel {
            channel: connection.channel,
            bot_username: connection.bot_username,
        });
        if let Some(own) = connection.routes {
            routes = routes.merge(own);
        }
    }
    Ok(Connected { channels, routes })
}

/// Builds the settings of every enabled channel as [`connect_all`] does, stopping short of the
/// network: an error for everything `serve` would refuse before connecting (a secret it cannot
/// read, a missing key, a malformed URL). A secret file readable by group or others goes to
/// `warnings`. Building a channel's settings stops at its first error, like its start; settings
/// that could be built are then checked by the adapter's own rules, and every key it refuses is
/// an error of its own.
pub(crate) fn check_all(config: &Config, warnings: &mut Vec<String>) -> Vec<anyhow::Error> {
    ADAPTERS
        .iter()
        .flat_map(|adapter| adapter.check(config, warnings))
        .map(reported)
        .collect()
}

/// An adapter's refusal as the CLI reports it: a failure that names its key itself is passed on
/// as it is, a config error as itself (so `doctor` can tell a secret it already reported), any
/// other under its context.
fn reported(error: SetupError) -> anyhow::Error {
    match error {
        SetupError::Failed(failure) => match failure.downcast::<ConfigError>() {
            Ok(config) => anyhow::Error::new(*config),
            Err(other) => anyhow::Error::from_boxed(other),
        },
        other => anyhow::Error::new(other),
    }
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
