//! Telegram as the rest of Gatehouse knows it: its channel name and the form of its ids.

use gatehouse_chat::conversation::plain_chat;
use gatehouse_chat::platform::{Platform, is_numeric_id};
use gatehouse_chat::{ConversationKey, Place};

use crate::classify::CHANNEL;

/// Telegram's identity and id rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Telegram;

impl Platform for Telegram {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn user_id_problem(&self, id: &str) -> Option<&'static str> {
        if !is_numeric_id(id) {
            return Some(
                "Telegram approvers are numeric user ids (a name or @username matches nobody)",
            );
        }
        shared_sender_id(id).map(|_| {
            "this is one of Telegram's shared sender ids (1087968824 for every anonymous group \
             admin, 136817688 for posts on behalf of a channel, 777000 for Telegram itself): it \
             names no person, and messages sent as it are never read as commands; list the \
             admin's own user id"
        })
    }

    /// A positive chat id: a private chat's id is its user's.
    fn direct_chat_user(&self, to: &str) -> Option<String> {
        let id = to.strip_prefix("user:").unwrap_or(to);
        (is_numeric_id(id) && id != "0").then(|| id.to_owned())
    }

    /// The chat id, `user:<id>` read as the private chat whose id is the user's; a topic kept
    /// as the thread.
    fn conversation(&self, to: &str, thread_id: Option<&str>) -> ConversationKey {
        let to = plain_chat(to);
        ConversationKey::new(to.strip_prefix("user:").unwrap_or(to), thread_id)
    }
}

/// The ids Telegram puts in `from` for messages no single person signs: an anonymous group
/// admin (`GroupAnonymousBot`), a post on behalf of a channel (`Channel_Bot`) and Telegram's
/// own service account (automatic forwards from a linked channel). Named, so a refusal can say
/// which one it is.
pub(crate) fn shared_sender_id(id: &str) -> Option<&'static str> {
    match id {
        "1087968824" => Some("GroupAnonymousBot"),
        "136817688" => Some("Channel_Bot"),
        "777000" => Some("Telegram"),
        _ => None,
    }
}

/// Where a message in `chat_id` (in forum topic `topic`, if any) was typed: the topic, then the
/// whole chat, each as [`Telegram::conversation`] reads a binding of it.
pub(crate) fn place_of(chat_id: &str, topic: Option<&str>) -> Place {
    Place {
        thread: topic
            .map(|topic| Telegram.conversation(chat_id, Some(topic)))
            .into_iter()
            .collect(),
        chat: vec![Telegram.conversation(chat_id, None)],
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
    fn a_binding_and_a_message_from_the_same_place_meet() {
        let private = place_of("4242", None);
        for to in ["4242", "user:4242", "chat:4242"] {
            assert!(
                private.chat.contains(&Telegram.conversation(to, None)),
                "{to}"
            );
        }
        let topic = place_of("-1001", Some("42"));
        assert_eq!(topic.thread, [Telegram.conversation("-1001", Some("42"))]);
        assert_eq!(topic.chat, [Telegram.conversation("channel:-1001", None)]);
    }

    #[test]
    fn takes_only_numeric_user_ids_as_approvers() {
        assert_eq!(Telegram.user_id_problem("4242"), None);
        for name in ["@alice", "bob", ""] {
            assert!(Telegram.user_id_problem(name).is_some(), "{name}");
        }
    }

    /// Issue 36: every anonymous admin of every group sends as 1087968824, so listing it would
    /// make each of them an approver.
    #[test]
    fn refuses_the_shared_sender_ids_as_approvers() {
        for id in ["1087968824", "136817688", "777000"] {
            let problem = Telegram.user_id_problem(id).unwrap_or_default();
            assert!(problem.contains("shared sender ids"), "{id}: {problem}");
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
        /// Issue 36: a session bound to a private chat (by chat or by `user:`) or to a forum
        /// topic is found from a message typed there; a binding of another chat is not.
        #[test]
        fn every_spelling_of_a_binding_meets_its_place_and_no_other(
            user in 1_i64..i64::MAX, other in 1_i64..i64::MAX,
            group in i64::MIN..-1_i64, topic in 1_i64..i64::from(i32::MAX),
        ) {
            prop_assume!(user != other);
            let (user, other, group, topic) =
                (user.to_string(), other.to_string(), group.to_string(), topic.to_string());
            let private = place_of(&user, None);
            for to in [user.clone(), format!("user:{user}"), format!("chat:{user}")] {
                prop_assert!(meets(&private, &Telegram.conversation(&to, None)), "{}", to);
            }
            prop_assert!(!meets(&private, &Telegram.conversation(&other, None)));
            let in_topic = place_of(&group, Some(&topic));
            prop_assert!(meets(&in_topic, &Telegram.conversation(&group, Some(&topic))));
            prop_assert!(meets(&in_topic, &Telegram.conversation(&group, None)));
        }
    }
}
