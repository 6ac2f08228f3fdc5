//! Slack as the rest of Gatehouse knows it: its channel name and the form of its ids.

use gatehouse_chat::conversation::plain_chat;
use gatehouse_chat::platform::Platform;
use gatehouse_chat::{ConversationKey, Place};

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

    /// A DM named by its member (`U…`, `user:U…`) as `user:<member>`; a conversation id
    /// (`C…`, `G…`, `D…`) as written; the thread's `ts` kept.
    fn conversation(&self, to: &str, thread_id: Option<&str>) -> ConversationKey {
        let to = plain_chat(to);
        match self.direct_chat_user(to) {
            Some(member) => ConversationKey::new(&format!("user:{member}"), thread_id),
            None => ConversationKey::new(to, thread_id),
        }
    }
}

/// Where a message in `conversation` (in thread `thread_ts`, if any) was typed. In a DM, a
/// binding may name it by its member (as a request's `turnSource` does) or by the DM's own id.
pub(crate) fn place_of(
    conversation: &str,
    thread_ts: Option<&str>,
    dm_with: Option<&str>,
) -> Place {
    let mut chats = Vec::new();
    if let Some(member) = dm_with {
        chats.push(format!("user:{member}"));
    }
    chats.push(conversation.to_owned());
    let keys = |thread: Option<&str>| -> Vec<ConversationKey> {
        chats
            .iter()
            .map(|chat| Slack.conversation(chat, thread))
            .collect()
    };
    Place {
        thread: thread_ts.map(|ts| keys(Some(ts))).unwrap_or_default(),
        chat: keys(None),
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
    fn a_binding_and_a_message_from_the_same_place_meet() {
        let dm = place_of("D0DM", None, Some("U0ALICE"));
        for to in ["U0ALICE", "user:U0ALICE", "D0DM", "channel:D0DM"] {
            assert!(dm.chat.contains(&Slack.conversation(to, None)), "{to}");
        }
        assert!(!dm.chat.contains(&Slack.conversation("U0BOB", None)));
        let thread = place_of("C0OPS", Some("1.2"), None);
        assert_eq!(thread.thread, [Slack.conversation("C0OPS", Some("1.2"))]);
        assert_eq!(thread.chat, [Slack.conversation("C0OPS", None)]);
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

#[cfg(test)]
mod meeting_properties {
    use proptest::prelude::*;

    use super::*;

    fn meets(place: &Place, key: &ConversationKey) -> bool {
        place.thread.contains(key) || place.chat.contains(key)
    }

    proptest! {
        /// Issue 36: a session bound to a DM (by member or by the DM's id) or to a thread is
        /// found from a message typed there; a binding of another member is not.
        #[test]
        fn every_spelling_of_a_binding_meets_its_place_and_no_other(
            member in "U[A-Z0-9]{8,10}", other in "U[A-Z0-9]{8,10}",
            dm in "D[A-Z0-9]{8,10}", channel in "C[A-Z0-9]{8,10}",
            thread in "1[0-9]{9}\\.[0-9]{6}",
        ) {
            prop_assume!(member != other);
            let in_dm = place_of(&dm, None, Some(&member));
            for to in [member.clone(), format!("user:{member}"), dm.clone(),
                       format!("channel:{dm}")] {
                prop_assert!(meets(&in_dm, &Slack.conversation(&to, None)), "{}", to);
            }
            prop_assert!(!meets(&in_dm, &Slack.conversation(&other, None)));
            let in_thread = place_of(&channel, Some(&thread), None);
            prop_assert!(meets(&in_thread, &Slack.conversation(&channel, Some(&thread))));
            prop_assert!(meets(&in_thread, &Slack.conversation(&channel, None)));
        }
    }
}
