//! The adapter's own error type: refusals of its configuration and of the TLS setup.
//! Failures of Web API calls become the chat core's [`gatehouse_chat::ChatError`] instead (see
//! `classify.rs`), because the core's retry policy acts on them.

/// What can go wrong setting up the Slack channel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlackError {
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
