//! The chat outbox: every chat message the gateway means to send about an approval, recorded
//! before it is sent, with each attempt and its outcome, so that no card is lost, sent twice or
//! left showing live buttons when a gateway crashes or a platform misbehaves.
//!
//! A message is identified by its **key**, chosen by the sender: 1–25 ASCII letters and
//! digits, unique for ever, the same for every attempt to send it. It doubles as the platform's
//! idempotency key where there is one (Discord's `nonce` with `enforce_nonce`).
//!
//! ```text
//!            plan_messages
//!                 │
//!                 ▼        Sending (claim)          Delivered
//!   ┌──────► queued ──────────────────► sending ───────────────► delivered ──► finished
//!   │          │  ▲                       │    SendFailed          │  ▲ FinishFailed
//!   │          │  └───────────────────────┘                        │  └─────┘
//!   │          ├─ Skipped ─► skipped (never sent: the approval      └─ Lost ─► lost
//!   │          │             settled first)
//!   │          └─ Lost ────► lost (an attempt's fate is unknowable)
//!   └── a claim whose lease ran out (its gateway died), or one its own claimant makes again
//!       after a restart, is taken over by the next Sending
//! ```
//!
//! **For a store shared by several gateways** (PostgreSQL): every step is a conditional update
//! of one row, applied only from the state the step starts in, so two gateways never both own
//! an attempt. `Sending` is the claim: it applies to a row whose `attempts` is one less than the
//! attempt and that is `queued`, or `sending` under a lease that has run out (its claimant
//! died) or under the same claimant (a gateway restarted under its stable name takes its own
//! attempts back at once), and records the claimant and the lease. `Delivered` and `SendFailed` apply only to a
//! `sending` row with that very attempt number: a late answer from a gateway whose lease was
//! taken over is refused, so the outcome of the attempt that owns the row wins. A refused step
//! is answered [`StepOutcome::Refused`], never an error; the caller then leaves the message
//! alone. With the key reused as Discord's nonce, a message is delivered once even when its
//! claimant dies after the platform took it; on Telegram and Slack, which offer no
//! idempotency, that case (like a lost answer) can leave a second copy.

use crate::record::DeliveredMessage;
use crate::store::{Reading, Writing};

/// Where a message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRoute {
    /// The channel (`telegram`, `discord`, `slack`).
    pub channel: String,
    /// The bot account, when several are configured.
    pub account_id: Option<String>,
    /// Whether `target` is a user whose direct conversation is meant (else a chat id).
    pub direct: bool,
    /// The user or chat id.
    pub target: String,
    /// A thread or topic inside the chat.
    pub thread_id: Option<String>,
}

/// One message the gateway means to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxMessage {
    /// Its key (see the module docs).
    pub key: String,
    /// The approval it shows; `None` for a digest standing for several.
    pub approval_id: Option<String>,
    /// What it is: `card`, `prompt`, `notice`, `fallback` or `digest` (the chat core's
    /// names; the store keeps them as given).
    pub kind: String,
    /// Where it goes.
    pub route: OutboxRoute,
}

/// Where a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxState {
    /// Waiting to be sent (perhaps after failed attempts).
    Queued,
    /// An attempt is under way (or was, when its gateway stopped).
    Sending,
    /// Delivered; edited into its final card when its approval settles.
    Delivered,
    /// Edited into its final card (or deleted): done.
    Finished,
    /// Never sent: its approval settled first. Done.
    Skipped,
    /// Its fate cannot be known or fixed any more; the last error says why. Done.
    Lost,
}

impl OutboxState {
    /// The name the store keeps.
    pub fn as_str(self) -> &'static str {
        match self {
            OutboxState::Queued => "queued",
            OutboxState::Sending => "sending",
            OutboxState::Delivered => "delivered",
            OutboxState::Finished => "finished",
            OutboxState::Skipped => "skipped",
            OutboxState::Lost => "lost",
        }
    }

    /// The state named `text`.
    pub fn parse(text: &str) -> Option<OutboxState> {
        Some(match text {
            "queued" => OutboxState::Queued,
            "sending" => OutboxState::Sending,
            "delivered" => OutboxState::Delivered,
            "finished" => OutboxState::Finished,
            "skipped" => OutboxState::Skipped,
            "lost" => OutboxState::Lost,
            _ => return None,
        })
    }

    /// Whether nothing more will be done with the message.
    pub fn is_done(self) -> bool {
        matches!(
            self,
            OutboxState::Finished | OutboxState::Skipped | OutboxState::Lost
        )
    }
}

/// A stored message with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// The message.
    pub message: OutboxMessage,
    /// Where it is.
    pub state: OutboxState,
    /// Attempts to send it so far.
    pub attempts: u32,
    /// Where it landed, once delivered.
    pub delivered: Option<DeliveredMessage>,
    /// The last failure (of a send, or of its final edit), until a later step of this very
    /// message succeeds; for a lost message, why it is lost.
    pub last_error: Option<String>,
    /// When the last failure happened (ms since the Unix epoch).
    pub last_error_at_ms: Option<u64>,
    /// When the next try is due, after a failure.
    pub retry_at_ms: Option<u64>,
    /// The gateway holding the current attempt, and until when.
    pub claim: Option<(String, u64)>,
    /// When it was planned.
    pub created_at_ms: u64,
    /// When it last changed.
    pub updated_at_ms: u64,
}

/// A step in a message's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutboxStep {
    /// Attempt `attempt` (from 1) starts: the claim. See the module docs for when it applies.
    Sending {
        /// Which attempt.
        attempt: u32,
        /// Who makes it: a gateway's name, stable across its restarts and unique among the
        /// gateways sharing the store.
        claimant: String,
        /// Until when the claim holds (ms since the Unix epoch); past it, another may take over.
        lease_until_ms: u64,
    },
    /// Attempt `attempt` delivered the message. Also records it with its approval (as
    /// [`ApprovalStore::record_delivery`](crate::ApprovalStore::record_delivery) does).
    Delivered {
        /// Which attempt.
        attempt: u32,
        /// Where it landed.
        message: DeliveredMessage,
    },
    /// Attempt `attempt` failed; back to queued, the next try due at `retry_at_ms`.
    SendFailed {
        /// Which attempt.
        attempt: u32,
        /// What went wrong, as an operator reads it.
        error: String,
        /// When it is tried again.
        retry_at_ms: u64,
    },
    /// Never sent (queued or sending, to skipped).
    Skipped,
    /// Lost (from any state not done), with why.
    Lost {
        /// What an operator should know.
        reason: String,
    },
    /// Edited into its final card (delivered, to finished).
    Finished,
    /// Its final edit failed (stays delivered).
    FinishFailed {
        /// What went wrong.
        error: String,
        /// When it is tried again.
        retry_at_ms: u64,
    },
}

/// Whether a step applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// It did.
    Applied,
    /// The message was not in the state the step starts from (or is unknown).
    Refused,
}

/// Durable storage for the chat outbox; see the module docs. Times are passed in, as for
/// [`ApprovalStore`](crate::ApprovalStore). Calls are futures: the gateway waits for each
/// record anyway, since the platform call it guards must not start before it.
pub trait ChatOutbox: Send + Sync {
    /// Records `messages` as queued. A key already stored is left as it is (a retried plan
    /// does not reset a message). A message's approval must exist; a message of an approval
    /// that is pruned goes with it.
    fn plan_messages(&self, messages: Vec<OutboxMessage>, at_ms: u64) -> Writing<()>;

    /// Applies `step` to the message `key`, if it is in the state the step starts from.
    fn record_step(&self, key: String, step: OutboxStep, at_ms: u64) -> Writing<StepOutcome>;

    /// Every message not done (queued, sending or delivered), oldest first: what a starting
    /// gateway picks up.
    fn open_messages(&self) -> Reading<Vec<OutboxEntry>>;

    /// Messages an operator must hear of, newest change first, at most `limit`: those not done
    /// whose last step failed, and those lost at or after `lost_since_ms`.
    fn troubled_messages(&self, lost_since_ms: u64, limit: usize) -> Reading<Vec<OutboxEntry>>;
}
