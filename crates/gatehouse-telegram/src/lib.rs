//! The Telegram channel for Gatehouse chat approvals, on teloxide.
//!
//! [`TelegramChannel`] implements the chat core's [`Channel`](gatehouse_chat::Channel) trait and
//! only translates: a [`Card`](gatehouse_chat::render::Card) becomes an HTML message with an
//! inline keyboard whose `callback_data` is the core's opaque token; a message or a callback
//! query becomes an [`Inbound`](gatehouse_chat::Inbound) event; a Bot API failure becomes one of
//! the core's delivery classes (rate limited with `retry_after`, transient, permanent with the
//! fix spelled out).
//!
//! **Invariants.**
//! - Decides nothing: approver checks, token checks, grammars, retries and rate limits belong
//!   to `gatehouse-chat`. A press or a reply is reported, never acted on here.
//! - Never logs the bot token or the webhook secret ([`Secret`] redacts itself; transport errors
//!   are scrubbed). The webhook secret is compared in constant time.
//! - Never confirms an update before the core's channel accepted it, so a failed poll or a
//!   shutdown loses nothing.
//! - Never retries a delivery on its own: each send, edit, delete or answer is one attempt,
//!   bounded by `call_timeout`, so the core's `Deliverer` alone decides retries. Only receiving
//!   (polling, webhook registration) retries, with the core's backoff.
//!
//! **Entry points.** [`TelegramAdapter`], which the binary registers: it sets the channel up
//! from `channels.telegram`, and its [`Telegram`] platform says what Telegram ids look like. Or
//! [`TelegramChannel::connect`] by hand, then hand the channel to the chat core's dispatcher and
//! spawn [`Channel::run`](gatehouse_chat::Channel::run).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use gatehouse_chat::Channel;
//! use gatehouse_telegram::{Secret, TelegramChannel, TelegramConfig};
//!
//! let config = TelegramConfig::new(Secret::new("123456:ABC-token"))?;
//! let telegram = TelegramChannel::connect(config).await?;
//! let (tx, mut rx) = tokio::sync::mpsc::channel(64);
//! tokio::spawn(async move { telegram.run(tx).await });
//! while let Some(event) = rx.recv().await {
//!     println!("{event:?}"); // the gateway passes these to gatehouse_chat::commands
//! }
//! # Ok(()) }
//! ```

mod channel;
mod classify;
mod config;
mod error;
mod inbound;
mod markup;
mod platform;
mod polling;
mod setup;
mod webhook;

pub use channel::TelegramChannel;
pub use config::{DEFAULT_API_URL, HostedWebhook, TelegramConfig, UpdateMode, WebhookConfig};
pub use error::TelegramError;
/// The config crate's redacting credential type, re-exported so callers need no second import.
pub use gatehouse_config::Secret;
pub use platform::Telegram;
pub use setup::TelegramAdapter;
pub use webhook::{SECRET_HEADER, webhook_router};
