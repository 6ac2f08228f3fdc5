//! Integration tests: each fake driven by the real client crate of its platform.

// Helpers outside #[test] fns are test code too: a panic there is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The gatehouse-fakes binary: flags, printed base URLs, refusal to start empty.
mod binary;
// Discord fake against serenity: gateway, interactions, RESUME, 429, validation.
mod discord;
// The loopback DNS server through hickory-resolver: records, CNAMEs, failures, rebinding, TCP.
mod dns;
// Faults through the real clients: rate-limit and 5xx windows, resets, lost answers, stalls,
// recorded answers, Discord nonces.
mod faults;
// Fake Anthropic Messages and OpenAI Responses APIs spoken to over HTTP: scripts, SSE, errors.
mod models;
// Temporary PostgreSQL clusters through tokio-postgres: restarts, crashes, LISTEN/NOTIFY,
// advisory locks, TLS, and cleanup however a test ends.
mod postgres;
// Slack fake against slack-morphism: Socket Mode, reconnects, 429, signed HTTP delivery.
mod slack;
// Helpers shared by the platform tests: control-endpoint calls and waiting on the call log.
mod support;
// Telegram fake against teloxide: buttons, callbacks, edits, 429, webhook, 403 DMs.
mod telegram;
