//! What the adapter needs to connect: the bot token, where the API is, the application and the
//! guilds to register commands in. A plain struct: the `gatehouse` binary maps `gatehouse-config`'s
//! `channels.discord` into it.

use std::time::Duration;

use gatehouse_config::Secret;
use serenity::all::GatewayIntents;

use crate::error::DiscordError;

/// Everything the Discord channel is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscordConfig {
    /// The bot token from the Developer Portal (with or without the `Bot ` prefix).
    pub bot_token: Secret,
    /// The origin serving `/api/v10/…` instead of `https://discord.com` (a test fake, a
    /// proxy). `None` in production: requests then go to Discord through serenity's rate
    /// limiter; with a URL the limiter is off (serenity ignores the proxy otherwise) and the
    /// chat core's `Deliverer` honours 429s instead.
    pub api_url: Option<String>,
    /// The application id: names the bot's commands and interaction webhooks.
    pub application_id: u64,
    /// Guilds to register `/approve` and `/elevated` in; empty registers nothing.
    pub guild_ids: Vec<u64>,
    /// The account name when several bots are configured; copied into every locator.
    pub account_id: Option<String>,
    /// Ask for the privileged MESSAGE_CONTENT intent, so text `/approve` typed in guild
    /// channels without mentioning the bot is read. DMs and mentions work without it.
    pub message_content_intent: bool,
    /// The longest a single REST call may take before it counts as a transient failure.
    pub call_timeout: Duration,
    /// Calls to the REST API at once, and so connections (`delivery.maxConnections`).
    pub max_connections: usize,
}

impl DiscordConfig {
    /// Production settings: the real API, no command registration, no privileged intent.
    pub fn new(bot_token: Secret, application_id: u64) -> Self {
        Self {
            bot_token,
            api_url: None,
            application_id,
            guild_ids: Vec::new(),
            account_id: None,
            message_content_intent: false,
            call_timeout: Duration::from_secs(10),
            max_connections: gatehouse_chat::throttle::DEFAULT_MAX_IN_FLIGHT,
        }
    }

    /// Refuses a configuration Discord would refuse later, with the key to fix: the first of
    /// [`DiscordConfig::problems`].
    pub fn validate(&self) -> Result<(), DiscordError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }

    /// Every key Discord would refuse, not only the first, so one `doctor` run lists them all.
    pub fn problems(&self) -> Vec<DiscordError> {
        let mut problems = Vec::new();
        let mut refuse = |field, reason: &str| {
            problems.push(DiscordError::InvalidConfig {
                field,
                reason: reason.to_owned(),
            });
        };
        let token = self.bot_token.expose().trim();
        let token = token.strip_prefix("Bot ").unwrap_or(token);
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            refuse(
                "botToken",
                "expected the bot token from the Developer Portal (Bot > Reset Token)",
            );
        }
        if self.application_id == 0 {
            refuse("applicationId", "must be the application's snowflake id");
        }
        if self.guild_ids.contains(&0) {
            refuse("guildIds", "every entry must be a guild's snowflake id");
        }
        if let Some(url) = &self.api_url {
            let origin = url
                .strip_prefix("http://")
                .or_else(|| url.strip_prefix("https://"));
            if origin.is_none_or(|rest| rest.is_empty() || rest.trim_end_matches('/').contains('/'))
            {
                refuse(
                    "apiUrl",
                    "must be an http(s) origin such as http://127.0.0.1:8082, without a path",
                );
            }
        }
        if self.call_timeout.is_zero() {
            refuse("callTimeout", "must be positive");
        }
        if self.max_connections == 0 {
            refuse("delivery.maxConnections", "must be at least 1");
        }
        problems
    }

    /// The gateway intents: messages in guilds and DMs (for text `/approve`), plus message
    /// content only when the operator turned it on (it is privileged and must also be enabled in
    /// the Developer Portal). Interactions need no intent.
    pub fn intents(&self) -> GatewayIntents {
        let base = GatewayIntents::GUILD_MESSAGES | GatewayIntents::DIRECT_MESSAGES;
        if self.message_content_intent {
            base | GatewayIntents::MESSAGE_CONTENT
        } else {
            base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DiscordConfig {
        DiscordConfig::new(Secret::new("MTEw.very-secret"), 42)
    }

    #[test]
    fn redacts_the_token_in_debug() {
        assert!(!format!("{:?}", config()).contains("very-secret"));
    }

    #[test]
    fn accepts_production_and_fake_settings() {
        assert_eq!(config().validate(), Ok(()));
        let mut fake = config();
        fake.api_url = Some("http://127.0.0.1:8082/".into());
        fake.guild_ids = vec![7];
        assert_eq!(fake.validate(), Ok(()));
    }

    type Breakage = fn(&mut DiscordConfig);

    #[test]
    fn denies_what_discord_would_refuse() {
        let cases: [(&str, Breakage); 6] = [
            ("botToken", |c| c.bot_token = Secret::new("  ")),
            ("botToken", |c| c.bot_token = Secret::new("Bot a b")),
            ("applicationId", |c| c.application_id = 0),
            ("guildIds", |c| c.guild_ids = vec![0]),
            ("apiUrl", |c| c.api_url = Some("ftp://x".into())),
            ("apiUrl", |c| {
                c.api_url = Some("http://127.0.0.1:1/api/v10".into());
            }),
        ];
        for (field, break_it) in cases {
            let mut broken = config();
            break_it(&mut broken);
            match broken.validate() {
                Err(DiscordError::InvalidConfig { field: got, .. }) => assert_eq!(got, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    /// Operator review: a config with a bad token and a bad API URL took two runs to fix.
    #[test]
    fn lists_every_refused_key() {
        let mut broken = config();
        broken.bot_token = Secret::new("Bot a b");
        broken.api_url = Some("http://127.0.0.1:1/api/v10".into());
        let fields: Vec<_> = broken
            .problems()
            .into_iter()
            .map(|problem| match problem {
                DiscordError::InvalidConfig { field, .. } => field,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(fields, ["botToken", "apiUrl"]);
        assert_eq!(broken.validate(), Err(broken.problems().remove(0)));
        assert!(config().problems().is_empty());
    }

    #[test]
    fn asks_for_message_content_only_when_configured() {
        let mut config = config();
        assert!(!config.intents().contains(GatewayIntents::MESSAGE_CONTENT));
        config.message_content_intent = true;
        let intents = config.intents();
        assert!(intents.contains(GatewayIntents::MESSAGE_CONTENT));
        assert!(intents.contains(GatewayIntents::DIRECT_MESSAGES | GatewayIntents::GUILD_MESSAGES));
    }
}
