//! Integration tests: the real teloxide client inside `TelegramChannel`, against the Telegram
//! Bot API fake from `gatehouse-fakes`, driven through the real chat core.

// Helpers outside `#[test]` functions unwrap too: a panic there is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared setup: a fake, a connected channel, control calls and the real chat core.
mod support;
// Sending cards: exact bodies, forum topics, refused DMs, rate limits, a flapping API.
mod send;
// Presses, replies, receipts and deletes, through the core's dispatcher and front door.
mod interactions;
// Receiving: long polling through faults, clean shutdown, webhook secrets.
mod receive;
