//! Slack as the rest of Gatehouse knows it: its channel name and the form of its ids.

use gatehouse_chat::platform::Platform;

use crate::classify::CHANNEL;

/// Slack's identity and id rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Slack;

/// Whether `id` is a Slack member id (`U0123ABCD`, or `W…` on Enterprise Grid): the only ids
/// presses and messages carry, and so the only approvers that can match anybody.
fn is_member_id(id: &str) -> bool {
    id.starts_with(['U', 'W'])
        && id.len() > 1
        && id
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

impl Platform for Slack {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn user_id_problem(&self, id: &str) -> Option<&'static str> {
        (!is_member_id(id)).then_some(
            "Slack approvers are member ids like U0123ABCD (a name or @handle matches nobody)",
        )
    }

    /// A member id: posting to one opens the DM with that member.
    fn direct_chat_user(&self, to: &str) -> Option<String> {
        let id = to.strip_prefix("user:").unwrap_or(to);
        is_member_id(id).then(|| id.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_only_spellings_that_name_a_direct_conversation() {
        for (to, expected) in [
            ("U0ALICE", Some("U0ALICE")),
            ("user:W123", Some("W123")),
            ("C0OPS", None),
            ("D0DM", None),
        ] {
            assert_eq!(Slack.direct_chat_user(to).as_deref(), expected, "{to}");
        }
    }

    #[test]
    fn takes_only_member_ids_as_approvers() {
        for id in ["U0123ABCD", "W42"] {
            assert_eq!(Slack.user_id_problem(id), None, "{id}");
        }
        for name in ["@alice", "alice", "U", "u0123", "C0OPS", ""] {
            assert!(Slack.user_id_problem(name).is_some(), "{name}");
        }
    }
}
