//! Long polling with a plain `getUpdates` loop rather than teloxide's dispatcher, so the
//! offset is ours: an update is confirmed only after the core's channel accepted it, a failed
//! poll loses nothing, and shutdown is "the receiver closed".

use std::time::Duration;

use gatehouse_chat::ChatError;
use gatehouse_chat::channel::Inbound;
use gatehouse_chat::delivery::RetryPolicy;
use teloxide::prelude::*;
use teloxide::types::Update;
use tokio::sync::mpsc;

use crate::channel::{ALLOWED_UPDATES, TelegramChannel};
use crate::classify::{CHANNEL, timed_out};
use crate::inbound::translate;

/// Polls until `inbound` is closed. Transient failures and rate limits are waited out with the
/// core's backoff; a permanent failure (bad token, webhook set by someone else) ends the run.
///
/// Updates pushed into `inbound` count as delivered: close the receiver (`Receiver::close`) and
/// drain it, rather than dropping it with events still queued.
pub(crate) async fn run(
    channel: &TelegramChannel,
    inbound: mpsc::Sender<Inbound>,
) -> Result<(), ChatError> {
    let backoff = RetryPolicy::default();
    let mut failures = 0;
    // getUpdates refuses to run while a webhook is set; deleting it keeps pending updates.
    while let Err(error) = channel.checked(channel.bot.delete_webhook()).await {
        failures += 1;
        if !wait_out(&error, backoff.backoff(failures), &inbound).await {
            return finish(error, &inbound);
        }
    }
    let mut offset = 0;
    failures = 0;
    'polling: loop {
        let poll = channel
            .bot
            .get_updates()
            .offset(offset)
            .timeout(u32::try_from(channel.poll_timeout.as_secs()).unwrap_or(50))
            .allowed_updates(ALLOWED_UPDATES);
        let limit = channel.poll_timeout + channel.call_timeout;
        let polled = tokio::select! {
            biased;
            () = inbound.closed() => break 'polling,
            polled = tokio::time::timeout(limit, poll.into_future()) => polled,
        };
        let polled = match polled {
            Ok(result) => result.map_err(|error| channel.classify(&error)),
            Err(_) => Err(timed_out(limit)),
        };
        let updates = match polled {
            Ok(updates) => updates,
            Err(error) => {
                failures += 1;
                if !wait_out(&error, backoff.backoff(failures), &inbound).await {
                    return finish(error, &inbound);
                }
                continue;
            }
        };
        failures = 0;
        for update in updates {
            if !push(&update, channel, &inbound).await {
                // Closed mid-batch: the rest stays unconfirmed and comes again next start.
                break 'polling;
            }
            offset = next_offset(&update);
        }
    }
    confirm(channel, offset).await;
    Ok(())
}

/// Pushes the update's event, if it has one; `false` once the receiver is gone.
async fn push(update: &Update, channel: &TelegramChannel, inbound: &mpsc::Sender<Inbound>) -> bool {
    match translate(update, channel.account_id.as_deref()) {
        Some(event) => inbound.send(event).await.is_ok(),
        None => {
            // Updates the bot has no use for (edits, joins, other bots) are common; one it
            // cannot read leaves a trace for whoever wonders where a press went.
            tracing::debug!(
                channel = CHANNEL,
                update_id = update.id.0,
                "Ignored an update with nothing to act on."
            );
            true
        }
    }
}

fn next_offset(update: &Update) -> i32 {
    i32::try_from(update.id.0.saturating_add(1)).unwrap_or(i32::MAX)
}

/// Tells Telegram that everything below `offset` was handled, so a restart does not replay it.
/// Best effort: if it fails, the next start sees those updates again.
async fn confirm(channel: &TelegramChannel, offset: i32) {
    if offset == 0 {
        return;
    }
    let request = channel.bot.get_updates().offset(offset).timeout(0).limit(1);
    if let Err(error) = channel.checked(request).await {
        tracing::info!(channel = CHANNEL, error = %error, "Could not confirm the last updates; they will be seen again.");
    }
}

/// Sleeps before the next attempt (the platform's `retry_after`, or `delay`), unless the error
/// is permanent or the receiver closes meanwhile. Returns whether to go on.
async fn wait_out(error: &ChatError, delay: Duration, inbound: &mpsc::Sender<Inbound>) -> bool {
    let delay = match error {
        ChatError::RateLimited { retry_after, .. } => *retry_after,
        ChatError::Transient { .. } => delay,
        _ => return false,
    };
    tracing::info!(channel = CHANNEL, error = %error, delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX), "Polling failed; retrying.");
    tokio::select! {
        () = inbound.closed() => false,
        () = tokio::time::sleep(delay) => true,
    }
}

/// A run that stopped: fine when the receiver closed, the error otherwise.
fn finish(error: ChatError, inbound: &mpsc::Sender<Inbound>) -> Result<(), ChatError> {
    if inbound.is_closed() {
        return Ok(());
    }
    tracing::warn!(channel = CHANNEL, error = %error, "Polling stopped for good.");
    Err(error)
}
