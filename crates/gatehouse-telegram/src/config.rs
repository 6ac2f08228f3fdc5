//! What the adapter needs to connect: the bot token, the API base, how updates arrive and the
//! timeouts. A plain struct: the `gatehouse` binary maps `gatehouse-config`'s `channels.telegram`
//! into it.

use std::net::SocketAddr;
use std::time::Duration;

use gatehouse_config::Secret;
use reqwest::Url;

use crate::error::TelegramError;

/// The public Bot API, used when no `apiUrl` is configured.
pub const DEFAULT_API_URL: &str = "https://api.telegram.org";

/// How Telegram hands us updates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateMode {
    /// `getUpdates` long polling: needs no public address, so it is the default.
    LongPolling,
    /// Telegram POSTs updates to a public HTTPS URL that reaches `listen`.
    Webhook(WebhookConfig),
    /// Like [`UpdateMode::Webhook`], but the route is served by the host's own HTTP server
    /// ([`TelegramChannel::hosted_webhook_router`](crate::TelegramChannel::hosted_webhook_router)),
    /// so one listener serves both the gateway and Telegram.
    HostedWebhook(HostedWebhook),
}

/// Webhook mode on the host's HTTP server: no listener of the adapter's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedWebhook {
    /// The public URL registered with `setWebhook`.
    pub url: Url,
    /// The path the host serves updates on (may differ from `url`'s path behind a proxy).
    pub path: String,
    /// Sent by Telegram in `X-Telegram-Bot-Api-Secret-Token`; a request without it is refused.
    pub secret_token: Secret,
}

impl HostedWebhook {
    /// Serves updates on `url`'s own path, the usual case when the proxy forwards paths as is.
    pub fn new(url: Url, secret_token: Secret) -> Self {
        let path = url.path().to_owned();
        Self {
            url,
            path,
            secret_token,
        }
    }
}

/// Webhook mode settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// Where the adapter's HTTP server binds (behind the operator's TLS proxy).
    pub listen: SocketAddr,
    /// The public URL registered with `setWebhook`.
    pub url: Url,
    /// The local path updates arrive on (may differ from `url`'s path behind a proxy).
    pub path: String,
    /// Sent by Telegram in `X-Telegram-Bot-Api-Secret-Token`; a request without it is refused.
    pub secret_token: Secret,
}

impl WebhookConfig {
    /// Serves updates on `url`'s own path, the usual case when the proxy forwards paths as is.
    pub fn new(listen: SocketAddr, url: Url, secret_token: Secret) -> Self {
        let path = url.path().to_owned();
        Self {
            listen,
            url,
            path,
            secret_token,
        }
    }
}

/// Everything the Telegram channel is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The token BotFather issued (`123456:ABC…`).
    pub bot_token: Secret,
    /// The Bot API base URL; a local Bot API server or a test fake replaces the default.
    pub api_url: Url,
    /// The account name when several bots are configured; copied into every locator.
    pub account_id: Option<String>,
    /// Long polling or webhook.
    pub mode: UpdateMode,
    /// How long one `getUpdates` waits for updates.
    pub poll_timeout: Duration,
    /// The longest a single outbound call may take. teloxide sleeps 10 s after any 5xx before
    /// reading the body; cutting the call here reports it as transient sooner, so the chat
    /// core's retry policy, not that sleep, decides the pace.
    pub call_timeout: Duration,
    /// Calls to the Bot API at once, and so connections (`delivery.maxConnections`); the
    /// long poll holds one more.
    pub max_connections: usize,
}

impl TelegramConfig {
    /// Long polling against the public Bot API with the default timeouts.
    pub fn new(bot_token: Secret) -> Result<Self, TelegramError> {
        let api_url =
            Url::parse(DEFAULT_API_URL).map_err(|error| TelegramError::InvalidConfig {
                field: "apiUrl",
                reason: error.to_string(),
            })?;
        Ok(Self {
            bot_token,
            api_url,
            account_id: None,
            mode: UpdateMode::LongPolling,
            poll_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(5),
            max_connections: gatehouse_chat::throttle::DEFAULT_MAX_IN_FLIGHT,
        })
    }

    /// Refuses a configuration Telegram would refuse later, with the key to fix: the first of
    /// [`TelegramConfig::problems`].
    pub fn validate(&self) -> Result<(), TelegramError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }

    /// Every key Telegram would refuse, not only the first, so one `doctor` run lists them all.
    pub fn problems(&self) -> Vec<TelegramError> {
        let mut problems = Vec::new();
        let mut refuse = |field, reason: &str| {
            problems.push(TelegramError::InvalidConfig {
                field,
                reason: reason.to_owned(),
            });
        };
        if !is_bot_token(self.bot_token.expose()) {
            refuse(
                "botToken",
                "expected the form <digits>:<secret> as BotFather prints it",
            );
        }
        if !matches!(self.api_url.scheme(), "https" | "http") {
            refuse("apiUrl", "must be an http or https URL");
        }
        if self.max_connections == 0 {
            refuse("delivery.maxConnections", "must be at least 1");
        }
        if self.call_timeout.is_zero() {
            refuse("callTimeout", "must be positive");
        }
        // Under a second would be short polling: a busy loop against the Bot API.
        if !(Duration::from_secs(1)..=Duration::from_secs(50)).contains(&self.poll_timeout) {
            refuse("pollTimeout", "must be between 1 s and 50 s");
        }
        let hook = match &self.mode {
            UpdateMode::LongPolling => None,
            UpdateMode::Webhook(hook) => Some((&hook.url, &hook.path, &hook.secret_token)),
            UpdateMode::HostedWebhook(hook) => Some((&hook.url, &hook.path, &hook.secret_token)),
        };
        if let Some((url, path, secret_token)) = hook {
            if !is_secret_token(secret_token.expose()) {
                refuse(
                    "webhookSecret",
                    "must be 32 to 256 characters of A-Z, a-z, 0-9, _ and - \
                     (for example the output of `openssl rand -hex 32`)",
                );
            }
            if !path.starts_with('/') {
                refuse("webhookUrl", "its path must start with /");
            }
            if !matches!(url.scheme(), "https" | "http") {
                refuse(
                    "webhookUrl",
                    "must be an https (or, behind a proxy, http) URL",
                );
            }
        }
        problems
    }
}

fn is_bot_token(token: &str) -> bool {
    let Some((id, secret)) = token.split_once(':') else {
        return false;
    };
    !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
        && !secret.is_empty()
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The shortest webhook secret accepted. Telegram takes one character, but the secret is all
/// that stands between anyone who can reach the webhook and a forged approver's `/approve`, and
/// the endpoint answers every guess at once: 32 characters put guessing out of reach.
const MIN_SECRET_LEN: usize = 32;

/// Telegram's own rule for `secret_token`, with our lower bound on its length.
fn is_secret_token(secret: &str) -> bool {
    (MIN_SECRET_LEN..=256).contains(&secret.len())
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_the_bot_token_in_debug() {
        let config = TelegramConfig::new(Secret::new("123:very-secret")).unwrap();
        assert!(!format!("{config:?}").contains("very-secret"));
    }

    /// Security review: a one-character webhook secret was accepted, and 26 guesses forged an
    /// approver's `/approve`.
    #[test]
    fn denies_a_webhook_secret_short_enough_to_guess() {
        let webhook = |secret: &str| {
            let mut config = TelegramConfig::new(Secret::new("123:ABC_def-9")).unwrap();
            config.mode = UpdateMode::HostedWebhook(HostedWebhook::new(
                Url::parse("https://gatehouse.example/telegram").unwrap(),
                Secret::new(secret),
            ));
            config.validate()
        };
        for secret in [
            "x",
            &"a".repeat(31),
            &"a".repeat(257),
            &format!("{}!", "a".repeat(40)),
        ] {
            let refused = webhook(secret).unwrap_err().to_string();
            assert!(
                refused.starts_with("invalid channels.telegram.webhookSecret: must be 32"),
                "{secret:?}: {refused}"
            );
        }
        assert_eq!(webhook(&"a-Z_9".repeat(7)), Ok(()));
    }

    /// Operator review: a config with a bad token and a bad webhook URL took two runs to fix.
    #[test]
    fn lists_every_refused_key() {
        let mut config = TelegramConfig::new(Secret::new("notatoken")).unwrap();
        config.mode = UpdateMode::HostedWebhook(HostedWebhook::new(
            Url::parse("ftp://gatehouse.example/telegram").unwrap(),
            Secret::new("short"),
        ));
        let fields: Vec<_> = config
            .problems()
            .into_iter()
            .map(|problem| match problem {
                TelegramError::InvalidConfig { field, .. } => field,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(fields, ["botToken", "webhookSecret", "webhookUrl"]);
    }

    #[test]
    fn denies_malformed_bot_tokens() {
        for token in ["", "abc", "123:", ":abc", "12a:abc", "123:a b"] {
            let config = TelegramConfig::new(Secret::new(token)).unwrap();
            assert!(config.validate().is_err(), "{token:?} was accepted");
        }
        let config = TelegramConfig::new(Secret::new("123:ABC_def-9")).unwrap();
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn denies_poll_timeouts_that_would_busy_loop() {
        let mut config = TelegramConfig::new(Secret::new("123:ABC")).unwrap();
        config.poll_timeout = Duration::from_millis(500);
        assert!(config.validate().is_err());
        config.poll_timeout = Duration::from_secs(51);
        assert!(config.validate().is_err());
    }

    #[test]
    fn denies_webhook_secrets_telegram_would_refuse() {
        let mut config = TelegramConfig::new(Secret::new("123:ABC")).unwrap();
        let hook = |secret: &str| {
            UpdateMode::Webhook(WebhookConfig {
                listen: "127.0.0.1:8443".parse().unwrap(),
                url: Url::parse("https://bot.example/tg").unwrap(),
                path: "/tg".into(),
                secret_token: Secret::new(secret),
            })
        };
        for bad in ["", "has space", &"x".repeat(257)] {
            config.mode = hook(bad);
            assert!(config.validate().is_err(), "{bad:?} was accepted");
        }
        config.mode = hook("s3cret_-X0123456789abcdefghijklmn");
        assert_eq!(config.validate(), Ok(()));
        let hosted = |secret: &str| {
            UpdateMode::HostedWebhook(HostedWebhook::new(
                Url::parse("https://bot.example/tg").unwrap(),
                Secret::new(secret),
            ))
        };
        config.mode = hosted("has space");
        assert!(config.validate().is_err());
        config.mode = hosted("s3cret_-X0123456789abcdefghijklmn");
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn serves_webhooks_on_the_public_urls_path_by_default() {
        let hook = WebhookConfig::new(
            "127.0.0.1:8443".parse().unwrap(),
            Url::parse("https://bot.example/hooks/telegram").unwrap(),
            Secret::new("s"),
        );
        assert_eq!(hook.path, "/hooks/telegram");
    }
}
