//! The Discord channel for Gatehouse chat approvals, on serenity.
//!
//! [`DiscordChannel`] implements the chat core's [`Channel`](gatehouse_chat::Channel) trait and
//! only translates: a [`Card`](gatehouse_chat::render::Card) becomes a message with one embed
//! and a row of buttons whose `custom_id`s are the core's opaque tokens; a message, a button
//! press or an `/approve` / `/elevated` application command becomes an
//! [`Inbound`](gatehouse_chat::Inbound) event; a REST failure becomes one of the core's delivery
//! classes (rate limited with Discord's `retry_after`, transient, permanent with the fix).
//!
//! **Invariants.**
//! - Decides nothing: approver checks, token checks, grammars, retries and rate limits belong
//!   to `gatehouse-chat`. A press or a command is reported, never acted on here.
//! - Acknowledges every interaction it reports within Discord's 3 seconds (deferred), and
//!   drops one it could not acknowledge rather than deciding on it.
//! - Never mentions anyone: `allowed_mentions` is empty on every message and reply.
//! - Never logs the bot token or an interaction token ([`Secret`] redacts itself; handles and
//!   transport errors are scrubbed).
//! - Never retries on its own: each call is one attempt. In production serenity's rate limiter
//!   paces calls; against an `apiUrl` (fake, proxy) it is off and 429s go to the core.
//!
//! **Entry points.** [`DiscordAdapter`], which the binary registers: it sets the channel up
//! from `channels.discord`, and its [`Discord`] platform says what Discord ids look like. Or
//! [`DiscordChannel::connect`] by hand, then hand the channel to the chat core's
//! dispatcher and spawn [`Channel::run`](gatehouse_chat::Channel::run).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use gatehouse_chat::Channel;
//! use gatehouse_discord::{DiscordChannel, DiscordConfig, Secret};
//!
//! let config = DiscordConfig::new(Secret::new("MTEw…bot-token"), 1_100_000_000_000_000_001);
//! let discord = DiscordChannel::connect(config).await?;
//! let (tx, mut rx) = tokio::sync::mpsc::channel(64);
//! tokio::spawn(async move { discord.run(tx).await });
//! while let Some(event) = rx.recv().await {
//!     println!("{event:?}"); // the gateway passes these to gatehouse_chat::commands
//! }
//! # Ok(()) }
//! ```

mod channel;
mod classify;
mod commands;
mod config;
mod error;
mod gateway;
mod inbound;
mod interaction;
mod markup;
mod platform;
mod rest;
mod setup;
mod threads;

pub use channel::DiscordChannel;
pub use config::DiscordConfig;
pub use error::DiscordError;
pub use gatehouse_config::Secret;
pub use platform::Discord;
pub use setup::DiscordAdapter;
