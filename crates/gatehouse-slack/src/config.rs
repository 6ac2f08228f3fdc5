//! What the adapter needs to connect: tokens, the API base, how events arrive and how many
//! calls may run at once. A plain struct: the config crate maps `channels.slack` into it.

use std::time::Duration;

use gatehouse_config::Secret;
use url::Url;

use crate::error::SlackError;

/// The public Web API, used when no `apiUrl` is configured.
pub const DEFAULT_API_URL: &str = "https://slack.com/api";

/// How Slack hands us events, interactions and slash commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlackMode {
    /// A WebSocket opened with the app-level token: needs no public URL, so it is the default.
    Socket,
    /// Slack POSTs signed requests to the Request URL served by [`crate::SlackChannel::http_router`].
    Http,
}

/// Everything the Slack channel is built from.
#[derive(Debug, Clone)]
pub struct SlackConfig {
    /// The bot token (`xoxb-…`) every Web API call uses.
    pub bot_token: Secret,
    /// The app-level token (`xapp-…`) Socket Mode connects with.
    pub app_token: Option<Secret>,
    /// The signing secret that authenticates HTTP-mode requests.
    pub signing_secret: Option<Secret>,
    /// The Web API base; a test fake replaces the default.
    pub api_url: Url,
    /// Socket Mode or HTTP.
    pub mode: SlackMode,
    /// The account name when several workspaces are configured; copied into every locator.
    pub account_id: Option<String>,
    /// Web API calls at once, and so connections (`delivery.maxConnections`).
    pub max_connections: usize,
    /// How long a slash command waits for the core's answer so it can go into the command's own
    /// response; later answers go to the command's `response_url`. Slack wants a reply within
    /// 3 s, so this stays well under it.
    pub command_reply_wait: Duration,
    /// Socket Mode connections kept open at once (slack-morphism's default is 2; the second
    /// starts after a 5 s backoff, so tests use 1).
    pub socket_connections: u32,
}

impl SlackConfig {
    /// Socket Mode against the public Web API.
    pub fn new(bot_token: Secret, app_token: Secret) -> Result<Self, SlackError> {
        let api_url = Url::parse(DEFAULT_API_URL).map_err(|error| SlackError::InvalidConfig {
            field: "apiUrl",
            reason: error.to_string(),
        })?;
        Ok(Self {
            bot_token,
            app_token: Some(app_token),
            signing_secret: None,
            api_url,
            mode: SlackMode::Socket,
            account_id: None,
            max_connections: gatehouse_chat::throttle::DEFAULT_MAX_IN_FLIGHT,
            command_reply_wait: Duration::from_millis(2000),
            socket_connections: 2,
        })
    }

    /// Refuses a configuration Slack would refuse later, with the key to fix: the first of
    /// [`SlackConfig::problems`].
    pub fn validate(&self) -> Result<(), SlackError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }

    /// Every key Slack would refuse, not only the first, so one `doctor` run lists them all.
    pub fn problems(&self) -> Vec<SlackError> {
        let mut problems = Vec::new();
        let mut refuse = |field, reason: &str| {
            problems.push(SlackError::InvalidConfig {
                field,
                reason: reason.to_owned(),
            });
        };
        if !self.bot_token.expose().starts_with("xoxb-") {
            refuse("botToken", "expected a bot token starting with xoxb-");
        }
        if !matches!(self.api_url.scheme(), "https" | "http") {
            refuse("apiUrl", "must be an http or https URL");
        }
        if self.command_reply_wait >= Duration::from_millis(2500) {
            refuse(
                "commandReplyWait",
                "must stay under 2.5 s: Slack drops slash command replies after 3 s",
            );
        }
        match self.mode {
            SlackMode::Socket => match &self.app_token {
                Some(token) if token.expose().starts_with("xapp-") => {}
                Some(_) => refuse("appToken", "expected an app-level token (xapp-…)"),
                None => refuse("appToken", "Socket Mode needs an app-level token"),
            },
            SlackMode::Http => match &self.signing_secret {
                Some(secret) if !secret.expose().trim().is_empty() => {}
                _ => refuse("signingSecret", "HTTP mode needs the app's signing secret"),
            },
        }
        if self.socket_connections == 0 {
            refuse("socketConnections", "must be at least 1");
        }
        if self.max_connections == 0 {
            refuse("delivery.maxConnections", "must be at least 1");
        }
        problems
    }

    /// The Web API base as slack-morphism wants it (no trailing slash).
    pub(crate) fn api_base(&self) -> String {
        self.api_url.as_str().trim_end_matches('/').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn socket() -> SlackConfig {
        SlackConfig::new(Secret::new("xoxb-1"), Secret::new("xapp-1")).unwrap()
    }

    #[test]
    fn accepts_socket_mode_with_an_app_token() {
        assert_eq!(socket().validate(), Ok(()));
    }

    #[test]
    fn denies_a_user_token_as_bot_token() {
        let config = SlackConfig {
            bot_token: Secret::new("xoxp-1"),
            ..socket()
        };
        assert!(matches!(
            config.validate(),
            Err(SlackError::InvalidConfig {
                field: "botToken",
                ..
            })
        ));
    }

    #[test]
    fn denies_http_mode_without_signing_secret() {
        let config = SlackConfig {
            mode: SlackMode::Http,
            ..socket()
        };
        assert!(matches!(
            config.validate(),
            Err(SlackError::InvalidConfig {
                field: "signingSecret",
                ..
            })
        ));
    }

    #[test]
    fn denies_socket_mode_with_a_bot_token_as_app_token() {
        let config = SlackConfig {
            app_token: Some(Secret::new("xoxb-2")),
            ..socket()
        };
        assert!(matches!(
            config.validate(),
            Err(SlackError::InvalidConfig {
                field: "appToken",
                ..
            })
        ));
    }

    /// Operator review: a config with a user token and a bot token as app token took two runs
    /// to fix.
    #[test]
    fn lists_every_refused_key() {
        let config = SlackConfig {
            bot_token: Secret::new("xoxp-1"),
            app_token: Some(Secret::new("xoxb-2")),
            ..socket()
        };
        let fields: Vec<_> = config
            .problems()
            .into_iter()
            .map(|problem| match problem {
                SlackError::InvalidConfig { field, .. } => field,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(fields, ["botToken", "appToken"]);
        assert_eq!(config.validate(), Err(config.problems().remove(0)));
        assert!(socket().problems().is_empty());
    }

    #[test]
    fn never_prints_tokens() {
        let printed = format!("{:?}", socket());
        assert!(!printed.contains("xoxb-1") && !printed.contains("xapp-1"));
    }
}
