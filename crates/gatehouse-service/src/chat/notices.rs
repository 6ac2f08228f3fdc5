//! The origin notices this process delivered ("the prompt was sent to the approvers' DMs"): a
//! notice does not show the command, so a channel that only received one has not been shown
//! the approval, and its approvers do not decide it by id.
//!
//! Kept in memory: pending approvals never outlive the process (a start cancels them), so every
//! approval that can still be decided had its notices delivered by this process. A notice is
//! kept until its approval expires, however long the requester made that: forgetting it earlier
//! would count it as shown. Expired entries are forgotten as new ones arrive, so memory stays
//! bounded by the approvals pending at once.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gatehouse_chat::route::MessageLocator;

use super::cards::{CardKey as Key, key};

/// Delivered origin notices, with when each one's approval expires (Unix ms).
#[derive(Debug, Default)]
pub(super) struct Notices {
    delivered: Mutex<HashMap<Key, u64>>,
}

impl Notices {
    /// Remembers that `message` is a notice of an approval that expires at `expires_at_ms`,
    /// forgetting notices whose approvals expired before `now_ms`.
    pub(super) fn remember(&self, message: &MessageLocator, expires_at_ms: u64, now_ms: u64) {
        let mut delivered = self.lock();
        delivered.retain(|_, expires| *expires >= now_ms);
        delivered.insert(key(message), expires_at_ms);
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

    /// Issue 36: a notice forgotten while its approval was pending (an agent can ask for any
    /// timeout) would have counted as shown; it is kept until the approval expires.
    #[test]
    fn keeps_a_notice_while_its_approval_can_be_decided() {
        const DAY: u64 = 24 * 60 * 60 * 1000;
        let notices = Notices::default();
        notices.remember(&message("1"), 3 * DAY, 0);
        assert!(notices.contains(&message("1")));
        assert!(!notices.contains(&message("2")));
        notices.remember(&message("2"), 2 * DAY + 1_000, 2 * DAY);
        assert!(
            notices.contains(&message("1")),
            "its approval is still pending"
        );
        notices.remember(&message("3"), 4 * DAY, 3 * DAY + 1);
        assert!(!notices.contains(&message("1")), "its approval expired");
        assert!(!notices.contains(&message("2")), "its approval expired");
        assert!(notices.contains(&message("3")));
    }
}
