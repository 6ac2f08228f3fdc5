//! What the dispatcher writes down so that no card is lost, duplicated or left stale by a
//! crash: the [`Journal`] it records every message's intent and outcome in. The service backs
//! it with the store's outbox; this crate only says what is recorded and when.
//!
//! **Order.** A message's intent ([`Journal::plan`]) is recorded before anything is sent; each
//! attempt to send it is recorded ([`Transition::Sending`]) after its turn came and before the
//! call, and its outcome after. An edit's intent is the approval's settled state, which the
//! store already holds; its outcome is recorded after the call. So after a crash every message
//! is in one of four places: never attempted (safe to drop or send), attempted with the outcome
//! unknown (found again by its [`SendKey`] where the platform keeps one, else reported),
//! delivered (edited when the approval settles), or finished.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use crate::error::ChatError;
use crate::plan::MessageKind;
use crate::route::{MessageLocator, Route, SendKey};

/// What a journalled message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// An approval card with buttons.
    Card,
    /// A forwarded text prompt.
    TextPrompt,
    /// The origin notice that the card went to the approvers' DMs.
    OriginNotice,
    /// The `/approve` commands left in the origin when no prompt arrived anywhere.
    Fallback,
    /// One message standing for every approval waiting in a chat whose queue ran too deep.
    Digest,
}

impl EntryKind {
    /// The name stored for it.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Card => "card",
            EntryKind::TextPrompt => "prompt",
            EntryKind::OriginNotice => "notice",
            EntryKind::Fallback => "fallback",
            EntryKind::Digest => "digest",
        }
    }

    /// The kind named `text`, as [`EntryKind::as_str`] wrote it.
    pub fn parse(text: &str) -> Option<EntryKind> {
        Some(match text {
            "card" => EntryKind::Card,
            "prompt" => EntryKind::TextPrompt,
            "notice" => EntryKind::OriginNotice,
            "fallback" => EntryKind::Fallback,
            "digest" => EntryKind::Digest,
            _ => return None,
        })
    }

    /// Whether it lets someone decide (a card or a forwarded prompt).
    pub fn is_prompt(self) -> bool {
        matches!(self, EntryKind::Card | EntryKind::TextPrompt)
    }
}

impl From<MessageKind> for EntryKind {
    fn from(kind: MessageKind) -> EntryKind {
        match kind {
            MessageKind::Card => EntryKind::Card,
            MessageKind::TextPrompt => EntryKind::TextPrompt,
            MessageKind::OriginNotice => EntryKind::OriginNotice,
            MessageKind::Fallback => EntryKind::Fallback,
        }
    }
}

/// One message the dispatcher means to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// Its key: the entry's id, and the idempotency key of every attempt to send it.
    pub key: SendKey,
    /// The approval it shows; `None` for a digest.
    pub approval_id: Option<String>,
    /// What it is.
    pub kind: EntryKind,
    /// Where it goes.
    pub route: Route,
}

/// A step in a message's life, recorded when it happens.
#[derive(Debug, Clone, Copy)]
pub enum Transition<'a> {
    /// Attempt `attempt` (from 1) to send it starts now. Refused ([`Recorded::Refused`]) when
    /// the message is no longer waiting to be sent, or another gateway holds it.
    Sending {
        /// Which attempt.
        attempt: u32,
    },
    /// Attempt `attempt` delivered it at `locator`.
    Delivered {
        /// Which attempt.
        attempt: u32,
        /// Where it landed.
        locator: &'a MessageLocator,
    },
    /// Attempt `attempt` failed; the next one is due at `retry_at_ms` (Unix ms).
    SendFailed {
        /// Which attempt.
        attempt: u32,
        /// Why.
        error: &'a ChatError,
        /// When it is tried again.
        retry_at_ms: u64,
    },
    /// It will never be sent: its approval settled first.
    Skipped,
    /// Its fate cannot be known or fixed any more (an attempt in flight at a crash on a
    /// platform without idempotency; an edit refused for a day).
    Lost {
        /// What an operator should know.
        reason: &'a str,
    },
    /// Edited into its final form (or deleted): nothing more to do.
    Finished,
    /// The edit into its final form failed; tried again at `retry_at_ms`.
    FinishFailed {
        /// Why.
        error: &'a ChatError,
        /// When it is tried again.
        retry_at_ms: u64,
    },
}

/// Whether a transition was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// It was.
    Applied,
    /// The message was not where the transition starts from (another gateway sending it, or
    /// it moved on): the caller must not make the call.
    Refused,
}

/// A journal write that failed; the dispatcher retries the step later rather than call a
/// platform without its record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot record chat delivery: {0}")]
pub struct JournalError(pub String);

/// Where the dispatcher records messages; see the module docs.
#[async_trait]
pub trait Journal: Send + Sync {
    /// Records the intent to send `entries` (all of one approval, or one digest or fallback).
    /// A key already recorded is left as it is.
    async fn plan(&self, entries: &[JournalEntry]) -> Result<(), JournalError>;

    /// Records `transition` of the message `key`, at `at_ms` (Unix ms).
    async fn record(
        &self,
        key: &SendKey,
        transition: Transition<'_>,
        at_ms: u64,
    ) -> Result<Recorded, JournalError>;
}

/// A journal kept in memory: for tests and tools that need no crash safety, and to see what
/// a dispatcher did.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    planned: Mutex<Vec<JournalEntry>>,
    steps: Mutex<Vec<Step>>,
}

/// One recorded step: the message's key, the step's name, and what it carried.
type Step = (
    SendKey,
    &'static str,
    Option<MessageLocator>,
    Option<String>,
);

impl MemoryJournal {
    /// Every message planned so far, in order.
    pub fn planned(&self) -> Vec<JournalEntry> {
        self.planned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Every step recorded so far, in order: the message's key and the step's name
    /// (`sending`, `delivered`, `send-failed`, `skipped`, `lost`, `finished`, `finish-failed`).
    pub fn steps(&self) -> Vec<(SendKey, &'static str)> {
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(key, step, _, _)| (key.clone(), *step))
            .collect()
    }

    /// Every failure recorded so far (of a send or of a final edit), with its message's key.
    pub fn failures(&self) -> Vec<(SendKey, String)> {
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(|(key, _, _, error)| Some((key.clone(), error.clone()?)))
            .collect()
    }

    /// Every delivered message with where it landed, in order.
    pub fn delivered(&self) -> Vec<(JournalEntry, MessageLocator)> {
        let planned = self.planned();
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(|(key, _, locator, _)| {
                let entry = planned.iter().find(|entry| entry.key == *key)?;
                Some((entry.clone(), locator.clone()?))
            })
            .collect()
    }

    /// How many steps named `step` were recorded.
    pub fn count(&self, step: &str) -> usize {
        self.steps()
            .iter()
            .filter(|(_, name)| *name == step)
            .count()
    }
}

#[async_trait]
impl Journal for MemoryJournal {
    async fn plan(&self, entries: &[JournalEntry]) -> Result<(), JournalError> {
        self.planned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(entries.iter().cloned());
        Ok(())
    }

    async fn record(
        &self,
        key: &SendKey,
        transition: Transition<'_>,
        _at_ms: u64,
    ) -> Result<Recorded, JournalError> {
        let (name, locator, error) = match transition {
            Transition::Sending { .. } => ("sending", None, None),
            Transition::Delivered { locator, .. } => ("delivered", Some(locator.clone()), None),
            Transition::SendFailed { error, .. } => ("send-failed", None, Some(error.to_string())),
            Transition::Skipped => ("skipped", None, None),
            Transition::Lost { reason } => ("lost", None, Some(reason.to_owned())),
            Transition::Finished => ("finished", None, None),
            Transition::FinishFailed { error, .. } => {
                ("finish-failed", None, Some(error.to_string()))
            }
        };
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((key.clone(), name, locator, error));
        Ok(Recorded::Applied)
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
