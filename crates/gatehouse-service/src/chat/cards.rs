//! Which approval each delivered chat message shows, so a reply to a card names its approval,
//! and whether the message was already turned into its final card, so a copy is edited or
//! deleted once even when the decision and the copy's delivery record race.
//!
//! Entries are kept for a window after delivery and then forgotten, so a gateway that runs for
//! months does not keep every card it ever sent in memory.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gatehouse_chat::route::MessageLocator;

/// A delivered message: (channel, chat, message id).
pub(super) type CardKey = (String, String, String);

/// What is known of a delivered card.
#[derive(Debug)]
struct CardEntry {
    approval_id: String,
    /// When it was delivered (Unix ms).
    delivered_ms: u64,
    /// It was already edited into its final card (or deleted).
    finished: bool,
}

/// Delivered cards, by message.
#[derive(Debug, Default)]
pub(super) struct CardIndex {
    cards: Mutex<HashMap<CardKey, CardEntry>>,
}

impl CardIndex {
    /// Remembers that `message`, delivered at `now_ms`, shows approval `approval_id`.
    pub(super) fn remember(&self, message: &MessageLocator, approval_id: &str, now_ms: u64) {
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        cards.insert(
            key(message),
            CardEntry {
                approval_id: approval_id.to_owned(),
                delivered_ms: now_ms,
                finished: false,
            },
        );
    }

    /// Whether `message` still needs its final card, marking it done: true once per card this
    /// process delivered, and always for a card it does not know (one from before a restart).
    pub(super) fn claim_final(&self, message: &MessageLocator) -> bool {
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        match cards.get_mut(&key(message)) {
            Some(entry) => !std::mem::replace(&mut entry.finished, true),
            None => true,
        }
    }

    /// The approval a delivered message shows, if this process delivered it recently enough.
    pub(super) fn approval(&self, message: &MessageLocator) -> Option<String> {
        let cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        cards
            .get(&key(message))
            .map(|entry| entry.approval_id.clone())
    }

    /// Forgets cards delivered more than `keep_ms` before `now_ms`.
    pub(super) fn purge(&self, now_ms: u64, keep_ms: u64) {
        let cutoff = now_ms.saturating_sub(keep_ms);
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        cards.retain(|_, entry| entry.delivered_ms >= cutoff);
    }
}

/// A delivered message's key: channel, chat and message id name one message.
pub(super) fn key(message: &MessageLocator) -> CardKey {
    (
        message.channel.clone(),
        message.chat_id.clone(),
        message.message_id.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str) -> MessageLocator {
        MessageLocator {
            channel: "telegram".into(),
            account_id: None,
            chat_id: "42".into(),
            message_id: id.into(),
            thread_id: None,
        }
    }

    #[test]
    fn names_the_approval_of_a_card_until_it_is_older_than_the_window() {
        let index = CardIndex::default();
        index.remember(&message("1"), "a1", 1_000);
        index.remember(&message("2"), "a2", 5_000);
        assert_eq!(index.approval(&message("1")).as_deref(), Some("a1"));
        index.purge(6_000, 2_000);
        assert_eq!(index.approval(&message("1")), None);
        assert_eq!(index.approval(&message("2")).as_deref(), Some("a2"));
        assert_eq!(index.approval(&message("3")), None);
    }

    /// Slack review run: a decision that raced a copy's delivery record deleted one copy twice.
    #[test]
    fn hands_out_each_cards_final_edit_once() {
        let index = CardIndex::default();
        index.remember(&message("1"), "a1", 1_000);
        assert!(index.claim_final(&message("1")));
        assert!(!index.claim_final(&message("1")));
        assert_eq!(index.approval(&message("1")).as_deref(), Some("a1"));
        // A card from before a restart is not known, and is finished from the database.
        assert!(index.claim_final(&message("9")));
    }
}
