//! Discord as the rest of Gatehouse knows it: its channel name and the form of its ids.

use gatehouse_chat::conversation::plain_chat;
use gatehouse_chat::platform::{Platform, is_numeric_id};
use gatehouse_chat::{ConversationKey, Place};

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

    /// A DM as `user:<id>` however it is written (`user:`, a mention); a thread as its own
    /// channel id, since threads are channels with ids of their own (a thread `T` in channel
    /// `P` and the channel `T` are one conversation); anything else as written.
    fn conversation(&self, to: &str, thread_id: Option<&str>) -> ConversationKey {
        if let Some(thread) = thread_id.map(str::trim).filter(|t| !t.is_empty()) {
            return ConversationKey::new(plain_chat(thread), None);
        }
        match self.direct_chat_user(to.trim()) {
            Some(user) => ConversationKey::new(&format!("user:{user}"), None),
            None => ConversationKey::new(plain_chat(to), None),
        }
    }
}

/// Where a message was typed, each key as [`Discord::conversation`] reads a binding of it: in
/// a DM, the user (a request's `turnSource` names DMs so) or the DM channel; in a thread, the
/// thread, then its parent channel; elsewhere the channel.
pub(crate) fn place_of(channel: &str, dm_with: Option<&str>, parent: Option<&str>) -> Place {
    let key = |to: &str| Discord.conversation(to, None);
    match (dm_with, parent) {
        (Some(user), _) => Place::chat([key(&format!("user:{user}")), key(channel)]),
        (None, Some(parent)) => Place {
            thread: vec![key(channel)],
            chat: vec![key(parent)],
        },
        (None, None) => Place::chat([key(channel)]),
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
    fn a_binding_and_a_message_from_the_same_place_meet() {
        let dm = place_of("7000", Some("5000"), None);
        for to in ["user:5000", "<@5000>", "<@!5000>", "7000"] {
            assert!(dm.chat.contains(&Discord.conversation(to, None)), "{to}");
        }
        let thread = place_of("4100", None, Some("4000"));
        assert_eq!(thread.thread, [Discord.conversation("4000", Some("4100"))]);
        assert_eq!(thread.thread, [Discord.conversation("channel:4100", None)]);
        assert_eq!(thread.chat, [Discord.conversation("4000", None)]);
    }

    #[test]
    fn takes_only_numeric_user_ids_as_approvers() {
        assert_eq!(Discord.user_id_problem("4242"), None);
        for name in ["bob#1234", "alice", ""] {
            assert!(Discord.user_id_problem(name).is_some(), "{name}");
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
        /// Issue 36: a session bound to a DM or a thread, however the binding spells it, is
        /// found from a message typed there; a binding of another user or channel is not.
        #[test]
        fn every_spelling_of_a_binding_meets_its_place_and_no_other(
            user in 1_u64..u64::MAX, other in 1_u64..u64::MAX,
            dm in 1_u64..u64::MAX, thread in 1_u64..u64::MAX, parent in 1_u64..u64::MAX,
        ) {
            prop_assume!(user != other && thread != parent && other != dm);
            let (user, other) = (user.to_string(), other.to_string());
            let (dm, thread, parent) = (dm.to_string(), thread.to_string(), parent.to_string());
            let in_dm = place_of(&dm, Some(&user), None);
            for to in [format!("user:{user}"), format!("<@{user}>"), format!("<@!{user}>"),
                       dm.clone(), format!("channel:{dm}")] {
                prop_assert!(meets(&in_dm, &Discord.conversation(&to, None)), "{}", to);
            }
            let someone_else = format!("user:{other}");
            prop_assert!(!meets(&in_dm, &Discord.conversation(&someone_else, None)));
            let in_thread = place_of(&thread, None, Some(&parent));
            for key in [Discord.conversation(&parent, Some(&thread)),
                        Discord.conversation(&thread, None),
                        Discord.conversation(&format!("channel:{thread}"), None)] {
                prop_assert_eq!(&in_thread.thread, &vec![key]);
            }
            prop_assert!(meets(&in_thread, &Discord.conversation(&parent, None)));
        }
    }
}
