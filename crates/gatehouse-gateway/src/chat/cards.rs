//! Which approval each delivered chat message shows, so a reply to a card names its approval.
//!
//! Entries are kept for a window after delivery and then forgotten, so a gateway that runs for
//! months does not keep every card it ever sent in memory.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gatehouse_chat::route::MessageLocator;

/// A delivered message: (channel, chat, message id).
type CardKey = (String, String, String);

/// The approval a card shows and when it was delivered (Unix ms).
type CardEntry = (String, u64);

/// Delivered cards, by message.
#[derive(Debug, Default)]
pub(super) struct CardIndex {
    cards: Mutex<HashMap<CardKey, CardEntry>>,
}

impl CardIndex {
    /// Remembers that `message`, delivered at `now_ms`, shows approval `approval_id`.
    pub(super) fn remember(&self, message: &MessageLocator, approval_id: &str, now_ms: u64) {
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        cards.insert(key(message), (approval_id.to_owned(), now_ms));
    }

    /// The approval a delivered message shows, if this process delivered it recently enough.
    pub(super) fn approval(&self, message: &MessageLocator) -> Option<String> {
        let cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        cards.get(&key(message)).map(|(id, _)| id.clone())
    }

    /// Forgets cards delivered more than `keep_ms` before `now_ms`.
    pub(super) fn purge(&self, now_ms: u64, keep_ms: u64) {
        let cutoff = now_ms.saturating_sub(keep_ms);
        let mut cards = self.cards.lock().unwrap_or_else(PoisonError::into_inner);
        cards.retain(|_, (_, delivered_ms)| *delivered_ms >= cutoff);
    }
}

fn key(message: &MessageLocator) -> CardKey {
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
}
