//! Telegram as the rest of Gatehouse knows it: its channel name and the form of its ids.

use gatehouse_chat::platform::{Platform, is_numeric_id};

use crate::classify::CHANNEL;

/// Telegram's identity and id rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Telegram;

impl Platform for Telegram {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn user_id_problem(&self, id: &str) -> Option<&'static str> {
        (!is_numeric_id(id)).then_some(
            "Telegram approvers are numeric user ids (a name or @username matches nobody)",
        )
    }

    /// A positive chat id: a private chat's id is its user's.
    fn direct_chat_user(&self, to: &str) -> Option<String> {
        let id = to.strip_prefix("user:").unwrap_or(to);
        (is_numeric_id(id) && id != "0").then(|| id.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_only_spellings_that_name_a_direct_conversation() {
        for (to, expected) in [
            ("12345", Some("12345")),
            ("user:12345", Some("12345")),
            ("-100123", None),
            ("0", None),
        ] {
            assert_eq!(Telegram.direct_chat_user(to).as_deref(), expected, "{to}");
        }
    }

    #[test]
    fn takes_only_numeric_user_ids_as_approvers() {
        assert_eq!(Telegram.user_id_problem("4242"), None);
        for name in ["@alice", "bob", ""] {
            assert!(Telegram.user_id_problem(name).is_some(), "{name}");
        }
    }
}
