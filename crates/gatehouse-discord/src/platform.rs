//! Discord as the rest of Gatehouse knows it: its channel name and the form of its ids.

use gatehouse_chat::platform::{Platform, is_numeric_id};

use crate::classify::CHANNEL;

/// Discord's identity and id rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discord;

impl Platform for Discord {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn user_id_problem(&self, id: &str) -> Option<&'static str> {
        (!is_numeric_id(id))
            .then_some("Discord approvers are numeric user ids (a name or tag matches nobody)")
    }

    /// `user:<id>` or a mention (`<@id>`, `<@!id>`) of a numeric user id.
    fn direct_chat_user(&self, to: &str) -> Option<String> {
        let id = to
            .strip_prefix("user:")
            .or_else(|| {
                to.strip_prefix("<@!")
                    .and_then(|rest| rest.strip_suffix('>'))
            })
            .or_else(|| {
                to.strip_prefix("<@")
                    .and_then(|rest| rest.strip_suffix('>'))
            })?;
        is_numeric_id(id).then(|| id.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_only_spellings_that_name_a_direct_conversation() {
        for (to, expected) in [
            ("user:5000", Some("5000")),
            ("<@5000>", Some("5000")),
            ("<@!5000>", Some("5000")),
            ("4000", None),
            ("user:abc", None),
        ] {
            assert_eq!(Discord.direct_chat_user(to).as_deref(), expected, "{to}");
        }
    }

    #[test]
    fn takes_only_numeric_user_ids_as_approvers() {
        assert_eq!(Discord.user_id_problem("4242"), None);
        for name in ["bob#1234", "alice", ""] {
            assert!(Discord.user_id_problem(name).is_some(), "{name}");
        }
    }
}
