//! The adapter's own failures: refusing a configuration and failing to connect. Failures of
//! individual platform calls are the chat core's [`gatehouse_chat::ChatError`] classes, produced
//! in `classify`.

use gatehouse_chat::ChatError;

/// Why the Telegram channel could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TelegramError {
    /// A configuration value Telegram would refuse; `field` names the key to fix.
    #[error("invalid channels.telegram.{field}: {reason}")]
    InvalidConfig {
        /// The config key.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// `getMe` failed, so the token or the API URL does not work. The cause says which; it is
    /// the error's source, so it is not repeated in this message.
    #[error("the bot's identity check (getMe) failed")]
    Connect {
        /// The classified failure, retryable or not.
        source: ChatError,
    },
}
