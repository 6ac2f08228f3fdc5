//! Local fake servers, so Gatehouse can be tested end to end with real clients and no
//! network: Telegram, Discord and Slack for the chat adapters; a DNS server for URL checks;
//! the Anthropic and OpenAI model APIs for real agent hosts (Claude Code, Codex); and a real
//! PostgreSQL server started in a temporary directory for replicas.
//!
//! **Invariants.** A fake binds where it is told (tests use `127.0.0.1:0`) and talks to
//! nothing else except the bot's own webhook or Request URL when a test configures one; the
//! DNS server answers only the names a test set and forwards nothing. A fake never answers
//! 5xx, stalls or cuts a connection unless a fault asks for it. Every API call is recorded in
//! order, with its parsed body, the chat it addressed and the answer it got (even an answer a
//! fault kept from the client). Requests are validated like the platform does (Telegram
//! `callback_data` over 64 bytes is a `BUTTON_DATA_INVALID` 400), so a wrong client call fails
//! visibly.
//!
//! **Entry points.** [`telegram::spawn`], [`discord::spawn`], [`slack::spawn`],
//! [`model::anthropic::spawn`] and [`model::openai::spawn`] each return a [`FakeHandle`];
//! [`dns::spawn`] returns a [`dns::DnsHandle`]; [`postgres::database`] and
//! [`postgres::TempCluster::start`] start PostgreSQL. The `gatehouse-fakes` binary starts
//! any subset of the servers on given addresses. Each HTTP fake serves control endpoints on its own port
//! (`GET /_fake/calls`, `POST /_fake/inject`, `POST /_fake/faults`, …), documented with
//! examples in `docs/fakes.md`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), gatehouse_fakes::FakeError> {
//! let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap()).await?;
//! // teloxide: Bot::new("123:ABC").set_api_url(fake.base_url.parse()?)
//! let calls = fake.calls();
//! # drop(calls); Ok(()) }
//! ```

mod answer;
mod body;
mod calls;
mod clock;
mod conn;
mod control;
mod error;
mod faults;
mod server;
mod ws;

pub mod discord;
pub mod dns;
pub mod model;
pub mod postgres;
pub mod slack;
pub mod telegram;

pub use calls::{Call, FaultEffect, max_calls_within};
pub use error::FakeError;
pub use server::FakeHandle;
