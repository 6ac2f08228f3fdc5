//! Integration tests: the real serenity client against the real Discord fake.

// Helpers outside `#[test]` functions unwrap too: a panic there is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Starting a fake and a connected channel, waiting for calls and events.
mod support;
// Cards to DMs, channels and threads; edits, deletes and refused deliveries.
mod cards;
// Button presses and application commands through the chat core, with their answers.
mod interactions;
// 429s from Discord honoured by the chat core's Deliverer.
mod rate_limits;
// The gateway connection: RESUME after a drop without losing or repeating a press; shutdown.
mod resume;
