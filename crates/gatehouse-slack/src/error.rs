//! The adapter's own error type: refusals of its configuration and of the TLS setup, and a
//! bot token `auth.test` refuses at start.
//! Failures of Web API calls become the chat core's [`gatehouse_chat::ChatError`] instead (see
//! `classify.rs`), because the core's retry policy acts on them.

/// What can go wrong setting up the Slack channel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlackError {
    /// `auth.test` failed, so the bot token or the API URL does not work. The cause says which;
    /// it is the error's source, so it is not repeated in this message.
    #[error("the bot's identity check (auth.test) failed")]
    Connect {
        /// The classified failure, retryable or not.
        source: gatehouse_chat::ChatError,
    },
    /// `apps.connections.open` refused the app-level token, so Socket Mode cannot connect.
    #[error(
        "Socket Mode's check of the app-level token (apps.connections.open) failed: {reason}; \
         check the app token channels.slack sets (appToken, appTokenFile or appTokenEnv: an \
         xapp- token with connections:write)"
    )]
    AppToken {
        /// What Slack or the connection said.
        reason: String,
    },
    /// A config value Slack would refuse.
    #[error("invalid channels.slack.{field}: {reason}")]
    InvalidConfig {
        /// The key, as written in config.
        field: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// The HTTPS connector could not load the system's trust roots.
    #[error("cannot build the slack https client: {reason}")]
    Tls {
        /// What rustls said.
        reason: String,
    },
}
