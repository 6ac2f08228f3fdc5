//! `getUpdates` long polling: answers as soon as an update is queued or the timeout passes;
//! a newer poll ends an older one with Telegram's 409, exposing two pollers on one token.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::Telegram;
use super::reply::TgError;
use super::updates::Poll;

/// Serves `getUpdates`.
pub(super) async fn get_updates(tg: &Arc<Telegram>, body: &Value) -> Result<Value, TgError> {
    let poll = Poll::parse(body)?;
    let generation = {
        let mut state = tg.lock();
        if state.webhook.is_some() {
            return Err(TgError::conflict(
                "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
            ));
        }
        if let Some(offset) = poll.offset {
            state.updates.confirm(offset);
        }
        if let Some(allowed) = poll.allowed.clone() {
            state.updates.set_allowed(allowed);
        }
        state.updates.poll_generation += 1;
        state.updates.poll_generation
    };
    // Wake an older poll so it notices it was superseded.
    tg.updates_ready.notify_waiters();
    let deadline = Instant::now() + Duration::from_secs(poll.timeout_secs);
    loop {
        let notified = tg.updates_ready.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        {
            let state = tg.lock();
            if state.updates.poll_generation != generation {
                return Err(TgError::conflict(
                    "terminated by other getUpdates request; make sure that only one bot instance is running",
                ));
            }
            let batch = state.updates.peek(poll.limit);
            if !batch.is_empty() || Instant::now() >= deadline {
                return Ok(Value::Array(batch));
            }
        }
        tokio::select! {
            () = &mut notified => {}
            () = tokio::time::sleep_until(deadline) => {}
        }
    }
}
