//! Integration tests of the chat core through its public API.

// Helpers outside `#[test]` functions unwrap too: a panic there is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// `/approve` grammar: every accepted form and every refusal.
mod approve_grammar;
// `/elevated` grammar: levels, aliases, queries and refusals.
mod elevated_grammar;
// Cards: sanitization, fences, truncation, receipts and notices.
mod render;
// Reply texts: one distinct message per outcome.
mod replies;
// Button tokens: size limits, binding to chat and message, expiry, forgery.
mod tokens;
// Config validation and agent/session filters.
mod filters;
// Delivery planning: modes, native clients, dedupe, notices and fallback.
mod plan;
// A scripted stand-in for an external chat platform, shared by the delivery tests.
mod platform;
// Delivery helper: spacing, 429 retry_after, backoff, failure records (paused time).
mod delivery;
// The front door: text commands, reply-to-card decisions, presses and /elevated gates.
mod commands;
// The Control UI's copy of the hidden-character definition.
mod ui_mirror;
// How often people who may decide nothing are answered.
mod strangers;
// Dispatching a plan: cards with bound tokens, notices, fallback, receipts on every copy.
mod dispatch;
