//! The origin notices this process delivered ("the prompt was sent to the approvers' DMs"): a
//! notice does not show the command, so a channel that only received one has not been shown
//! the approval, and its approvers do not decide it by id.
//!
//! Kept in memory: pending approvals never outlive the process (a start cancels them), so every
//! approval that can still be decided had its notices delivered by this process. Entries older
//! than the window are forgotten as new ones arrive, so memory stays bounded.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gatehouse_chat::route::MessageLocator;

use super::cards::{CardKey as Key, key};

/// Delivered origin notices, with when each was delivered (Unix ms).
#[derive(Debug, Default)]
pub(super) struct Notices {
    delivered: Mutex<HashMap<Key, u64>>,
}

impl Notices {
    /// Remembers that `message`, delivered at `now_ms`, is a notice, forgetting notices
    /// delivered more than `keep_ms` earlier.
    pub(super) fn remember(&self, message: &MessageLocator, now_ms: u64, keep_ms: u64) {
        let cutoff = now_ms.saturating_sub(keep_ms);
        let mut delivered = self.lock();
        delivered.retain(|_, at| *at >= cutoff);
        delivered.insert(key(message), now_ms);
    }

    /// Whether `message` is a notice this process delivered.
    pub(super) fn contains(&self, message: &MessageLocator) -> bool {
        self.lock().contains_key(&key(message))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, u64>> {
        self.delivered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str) -> MessageLocator {
        MessageLocator {
            channel: "discord".into(),
            account_id: None,
            chat_id: "4000".into(),
            message_id: id.into(),
            thread_id: None,
        }
    }

    #[test]
    fn knows_recent_notices_and_forgets_old_ones() {
        let notices = Notices::default();
        notices.remember(&message("1"), 1_000, 500);
        assert!(notices.contains(&message("1")));
        assert!(!notices.contains(&message("2")));
        notices.remember(&message("2"), 2_000, 500);
        assert!(!notices.contains(&message("1")), "older than the window");
        assert!(notices.contains(&message("2")));
    }
}
