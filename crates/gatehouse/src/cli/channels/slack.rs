//! `channels.slack` → a [`SlackChannel`], plus its signed Request URL router in HTTP mode. The
//! token is checked with `auth.test` before the gateway serves, so a wrong one stops the start.

use std::sync::Arc;

use anyhow::{Context as _, bail};
use axum::Router;
use gatehouse_config::Secret;
use gatehouse_config::model::{SlackConfig as SlackSection, SlackMode as ModeKey};
use gatehouse_service::ConnectedChannel;
use gatehouse_slack::{SlackChannel, SlackConfig, SlackMode};

use super::{config_url, resolve};

/// A Slack channel and, in HTTP mode, the routes the gateway must serve for it.
pub(crate) struct ConnectedSlack {
    /// The adapter, for the chat runtime.
    pub(crate) connected: ConnectedChannel,
    /// `POST /slack/events` in HTTP mode; `None` in Socket Mode (no public URL needed).
    pub(crate) routes: Option<Router>,
}

/// Connects the app `section` describes.
pub(crate) async fn connect(section: &SlackSection) -> anyhow::Result<ConnectedSlack> {
    let config = super::printing_warnings(|warnings| adapter_config(section, warnings))?;
    let mode = config.mode;
    let channel = SlackChannel::connect(config)
        .await
        .context("cannot connect to Slack (`channels.slack`)")?;
    let routes = match mode {
        SlackMode::Http => Some(channel.http_router().context(UNUSABLE)?),
        SlackMode::Socket => None,
    };
    Ok(ConnectedSlack {
        connected: ConnectedChannel {
            channel: Arc::new(channel),
            // Slack addresses a bot by mention (`<@U…>`), not by an `@name` suffix.
            bot_username: None,
        },
        routes,
    })
}

/// What a Slack settings refusal is reported under.
pub(super) const UNUSABLE: &str = "`channels.slack` is not usable";

/// The adapter's settings from the config section, checked as Slack would check them; every
/// missing or unusable key is named (all the keys Slack refuses, not only the first). Secret
/// files readable by group or others go to `warnings`.
fn adapter_config(
    section: &SlackSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<SlackConfig> {
    super::usable(
        settings(section, warnings)?,
        SlackConfig::problems,
        UNUSABLE,
    )
}

/// The adapter's settings from the config section, before Slack's own rules are checked.
pub(super) fn settings(
    section: &SlackSection,
    warnings: &mut Vec<String>,
) -> anyhow::Result<SlackConfig> {
    let Some(bot) = section.token_source() else {
        bail!("`channels.slack`: set one of botToken, tokenFile, tokenEnv (or enabled: false)");
    };
    let bot = resolve(&bot, "channels.slack.botToken", warnings)?;
    let app = section
        .app_token_source()
        .map(|source| resolve(&source, "channels.slack.appToken", warnings))
        .transpose()?;
    let signing = section
        .signing_secret_source()
        .map(|source| resolve(&source, "channels.slack.signingSecret", warnings))
        .transpose()?;
    let mode = match section.mode {
        None | Some(ModeKey::Socket) => SlackMode::Socket,
        Some(ModeKey::Http) => SlackMode::Http,
    };
    if mode == SlackMode::Socket && app.is_none() {
        bail!(
            "`channels.slack`: Socket Mode (the default) needs an app-level token: set one of \
             appToken, appTokenFile, appTokenEnv, or `mode: \"http\"` with a signing secret"
        );
    }
    // `new` fills Slack's published defaults; the tokens are then set to exactly what the
    // operator configured (HTTP mode may have no app token).
    let mut config =
        SlackConfig::new(bot, app.clone().unwrap_or_else(|| Secret::new(""))).context(UNUSABLE)?;
    config.app_token = app;
    config.signing_secret = signing;
    config.mode = mode;
    if let Some(connections) = section.socket_connections {
        config.socket_connections = connections;
    }
    if let Some(api_url) = &section.api_url {
        config.api_url = config_url("channels.slack.apiUrl", api_url)?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `section`, whose tokens are inline, so there are no warnings to keep.
    fn adapter_config_of(section: &SlackSection) -> anyhow::Result<SlackConfig> {
        adapter_config(section, &mut Vec::new())
    }

    fn section(extra: &str) -> SlackSection {
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
        assert!(
            format!("{error:#}").contains("socketConnections"),
            "{error:#}"
        );
    }

    #[test]
    fn denies_socket_mode_without_an_app_token() {
        let error = adapter_config_of(&section("")).unwrap_err();
        assert!(error.to_string().contains("app-level token"), "{error}");
    }

    #[test]
    fn denies_http_mode_without_a_signing_secret() {
        let error = adapter_config_of(&section("mode: 'http'")).unwrap_err();
        assert!(format!("{error:#}").contains("signingSecret"), "{error:#}");
    }

    /// Operator review: a user token as bot token and a bot token as app token took two starts
    /// to fix, one refusal showing per start.
    #[test]
    fn names_every_key_slack_refuses() {
        let text = "{ channels: { slack: { botToken: 'xoxp-1', appToken: 'xoxb-2' } } }";
        let loaded = gatehouse_config::load_str(text, std::path::Path::new("t.json5")).unwrap();
        let section = loaded.config.channels.slack.unwrap();
        let error = adapter_config_of(&section).unwrap_err();
        let shown = format!("{error:#}");
        assert!(
            shown.starts_with("`channels.slack` is not usable: 2 keys are refused:\n  "),
            "{shown}"
        );
        let bot = shown.find("\n  invalid channels.slack.botToken: expected a bot token");
        let app = shown.find("\n  invalid channels.slack.appToken: expected an app-level token");
        assert!(matches!((bot, app), (Some(b), Some(a)) if b < a), "{shown}");
    }
}
