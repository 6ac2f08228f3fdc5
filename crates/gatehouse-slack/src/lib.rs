//! The Slack channel for chat approvals, on slack-morphism: Block Kit cards with decision
//! buttons, text and slash commands, in Socket Mode (default) or HTTP mode.
//!
//! This crate only translates between Slack and `gatehouse-chat`: a [`gatehouse_chat::render::Card`]
//! becomes Block Kit ([`encode`]), Slack events become [`gatehouse_chat::Inbound`] values. Grammar,
//! approver checks, button tokens, retries, pacing and `Retry-After` handling live in the chat
//! core; the adapter only states Slack's tiers ([`gatehouse_chat::Channel::pacing`]).
//!
//! **Invariants.**
//! - Never decides anything: every press and command goes to the core, which verifies it.
//! - HTTP mode accepts a request only with a valid `X-Slack-Signature` v0 made within five
//!   minutes, compared in constant time, and only once; everything else is a 401 and a log line.
//! - Socket Mode callbacks never wait on the core (slash commands wait at most
//!   `command_reply_wait`), so envelopes are acked within Slack's 3 seconds.
//! - Untrusted text reaches Slack as `plain_text` or escaped `mrkdwn`; tokens are never logged.
//!
//! **Entry points.** [`SlackAdapter`], which the binary registers: it sets the channel up from
//! `channels.slack`, and its [`Slack`] platform says what Slack ids look like (one rule, used
//! for approvers and for direct conversations). Or [`SlackChannel::new`] with a [`SlackConfig`]
//! by hand; the core calls
//! [`gatehouse_chat::Channel::run`]; in HTTP mode the gateway mounts
//! [`SlackChannel::http_router`] (path [`http::EVENTS_PATH`]).
//!
//! ```no_run
//! use gatehouse_config::Secret;
//! use gatehouse_slack::{SlackChannel, SlackConfig};
//!
//! # fn main() -> Result<(), gatehouse_slack::SlackError> {
//! let config = SlackConfig::new(Secret::new("xoxb-…"), Secret::new("xapp-…"))?;
//! let channel = SlackChannel::new(config)?;
//! # let _ = channel;
//! # Ok(())
//! # }
//! ```

pub mod channel;
mod classify;
pub mod config;
pub mod encode;
pub mod error;
mod handle;
pub mod http;
mod inbound;
mod intake;
mod platform;
mod replies;
mod setup;
mod signature;
mod socket;

pub use channel::SlackChannel;
pub use config::{SlackConfig, SlackMode};
pub use error::SlackError;
pub use platform::Slack;
pub use setup::SlackAdapter;
