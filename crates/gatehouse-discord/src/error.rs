//! The adapter's own failures: refusing a configuration and failing to connect. Failures of
//! individual platform calls are the chat core's [`gatehouse_chat::ChatError`] classes, produced
//! in `classify`.

use gatehouse_chat::ChatError;

/// Why the Discord channel could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscordError {
    /// A configuration value Discord would refuse; `field` names the key to fix.
    #[error("invalid channels.discord.{field}: {reason}")]
    InvalidConfig {
        /// The config key.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built (TLS roots, system configuration).
    #[error("discord http client could not be built: {reason}")]
    Client {
        /// The transport's explanation.
        reason: String,
    },
    /// `GET /users/@me` failed, so the token or the API URL does not work. The cause says which;
    /// it is the error's source, so it is not repeated in this message.
    #[error("the bot's identity check (GET /users/@me) failed")]
    Connect {
        /// The classified failure, retryable or not.
        source: ChatError,
    },
}
