//! The chat core's [`Journal`] on the store's [`ChatOutbox`]: the dispatcher's records become
//! outbox rows, so what it meant to send, and how far each message got, survives a crash.
//! Only conversions live here; the rules are the dispatcher's and the store's.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use gatehouse_approvals::{
    ChatOutbox, Clock, OutboxEntry, OutboxMessage, OutboxRoute, OutboxState, OutboxStep,
    StepOutcome,
};
use gatehouse_chat::dispatch::ResumedPhase;
use gatehouse_chat::journal::{
    EntryKind, Journal, JournalEntry, JournalError, Recorded, Transition,
};
use gatehouse_chat::route::{Destination, Route, SendKey};

use super::view::{locator, stored};

/// How long an attempt's claim holds: longer than any call may take (a turn is granted before
/// the claim, and every adapter cuts a call at its timeout), so only a dead gateway's claim
/// ever runs out.
const LEASE: Duration = Duration::from_secs(120);

/// The dispatcher's journal, kept in the store's outbox.
pub(super) struct OutboxJournal {
    pub(super) outbox: Arc<dyn ChatOutbox>,
    pub(super) clock: Arc<dyn Clock>,
    /// This gateway's name in claims.
    pub(super) claimant: String,
}

#[async_trait]
impl Journal for OutboxJournal {
    async fn plan(&self, entries: &[JournalEntry]) -> Result<(), JournalError> {
        let messages = entries.iter().map(message).collect();
        self.outbox
            .plan_messages(messages, self.clock.now_ms())
            .await
            .map_err(|error| JournalError(error.to_string()))
    }

    async fn record(
        &self,
        key: &SendKey,
        transition: Transition<'_>,
        at_ms: u64,
    ) -> Result<Recorded, JournalError> {
        let step = match transition {
            Transition::Sending { attempt } => OutboxStep::Sending {
                attempt,
                claimant: self.claimant.clone(),
                lease_until_ms: at_ms.saturating_add(duration_ms(LEASE)),
            },
            Transition::Delivered { attempt, locator } => OutboxStep::Delivered {
                attempt,
                message: stored(locator),
            },
            Transition::SendFailed {
                attempt,
                error,
                retry_at_ms,
            } => OutboxStep::SendFailed {
                attempt,
                error: error.to_string(),
                retry_at_ms,
            },
            Transition::Skipped => OutboxStep::Skipped,
            Transition::Lost { reason } => OutboxStep::Lost {
                reason: reason.to_owned(),
            },
            Transition::Finished => OutboxStep::Finished,
            Transition::FinishFailed { error, retry_at_ms } => OutboxStep::FinishFailed {
                error: error.to_string(),
                retry_at_ms,
            },
        };
        let outcome = self
            .outbox
            .record_step(key.as_str().to_owned(), step, at_ms)
            .await
            .map_err(|error| JournalError(error.to_string()))?;
        Ok(match outcome {
            StepOutcome::Applied => Recorded::Applied,
            StepOutcome::Refused => Recorded::Refused,
        })
    }
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A journal entry as the outbox stores it.
fn message(entry: &JournalEntry) -> OutboxMessage {
    let (direct, target) = match &entry.route.destination {
        Destination::Dm(user) => (true, user.clone()),
        Destination::Chat(chat) => (false, chat.clone()),
    };
    OutboxMessage {
        key: entry.key.as_str().to_owned(),
        approval_id: entry.approval_id.clone(),
        kind: entry.kind.as_str().to_owned(),
        route: OutboxRoute {
            channel: entry.route.channel.clone(),
            account_id: entry.route.account_id.clone(),
            direct,
            target,
            thread_id: entry.route.thread_id.clone(),
        },
    }
}

/// The route an outbox message goes to.
pub(super) fn route(route: &OutboxRoute) -> Route {
    Route {
        channel: route.channel.clone(),
        account_id: route.account_id.clone(),
        destination: if route.direct {
            Destination::Dm(route.target.clone())
        } else {
            Destination::Chat(route.target.clone())
        },
        thread_id: route.thread_id.clone(),
    }
}

/// An open outbox message as the dispatcher resumes it; `None` for a row this build cannot
/// read (a kind or key it does not know), which is left alone.
pub(super) fn resumed(entry: &OutboxEntry) -> Option<(JournalEntry, u32, ResumedPhase)> {
    let key = SendKey::parse(&entry.message.key)?;
    let kind = EntryKind::parse(&entry.message.kind)?;
    let phase = match (entry.state, &entry.delivered) {
        (OutboxState::Queued, _) => ResumedPhase::Queued,
        (OutboxState::Sending, _) => ResumedPhase::InFlight,
        (OutboxState::Delivered, Some(message)) => ResumedPhase::Delivered(locator(message)),
        _ => return None,
    };
    let journal = JournalEntry {
        key,
        approval_id: entry.message.approval_id.clone(),
        kind,
        route: route(&entry.message.route),
    };
    Some((journal, entry.attempts, phase))
}
