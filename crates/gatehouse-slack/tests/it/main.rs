//! Integration tests: the real slack-morphism client against the Slack fake from
//! `gatehouse-fakes`, in Socket Mode and HTTP mode.

// Helpers outside #[test] fns are test code too: a panic there is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared setup: a fake, a channel pointed at it, control calls.
mod support;

// With the real chat core: planned delivery, press checks, receipts, typed and slash commands.
mod chat_core;
// Cards to DMs, channels and threads; updates, deletes, 429 and tier spacing.
mod delivery;
// Socket Mode: presses, text commands, slash commands, ephemeral answers, reconnects.
mod socket;
// HTTP mode: signed requests accepted, bad, stale and replayed ones refused with 401.
mod http;
// The app manifest lists exactly the scopes, events and commands the adapter uses.
mod manifest;
