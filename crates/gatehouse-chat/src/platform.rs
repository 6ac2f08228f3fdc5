//! What the rest of Gatehouse knows of a chat platform beyond the [`Channel`] trait: its name
//! and the rules its ids follow.
//!
//! Each adapter crate provides one [`Platform`]; the binary lists them in one place (its adapter
//! registration) and hands them on as [`Platforms`], so a rule about Slack ids is written once,
//! in the Slack adapter, and no crate but an adapter names a platform.
//!
//! [`Channel`]: crate::Channel

use std::fmt;

use crate::conversation::{ConversationKey, plain_chat};

/// One chat platform's identity and id rules.
pub trait Platform: Send + Sync + 'static {
    /// The channel name: the `channels.<name>` config key, [`Route::channel`], a sender's
    /// channel and [`Channel::name`](crate::Channel::name).
    ///
    /// [`Route::channel`]: crate::Route
    fn name(&self) -> &'static str;

    /// Why `id` cannot be one of this platform's user ids, for an approver in the config;
    /// `None` when it can. Presses and messages carry user ids, never names, so a name written
    /// as an approver would silently match nobody.
    fn user_id_problem(&self, _id: &str) -> Option<&'static str> {
        None
    }

    /// The user on the other side when `to` (a route's conversation) names a direct
    /// conversation for certain, so the planner can see that an origin *is* an approver's DM
    /// and deliver only once; `None` for anything else, which stays a chat.
    fn direct_chat_user(&self, _to: &str) -> Option<String> {
        None
    }

    /// The one key of the conversation a session binding names with `to` and `thread_id`,
    /// spelled as this platform's inbound messages spell their [`Place`]: the same function of
    /// the same conversation, so a binding and a message from there meet. By default `to` is
    /// taken as written (less a `chat:`/`channel:` prefix) and the thread kept.
    ///
    /// [`Place`]: crate::conversation::Place
    fn conversation(&self, to: &str, thread_id: Option<&str>) -> ConversationKey {
        ConversationKey::new(plain_chat(to), thread_id)
    }
}

/// The platforms this build knows, in the order they were registered. A channel name that is
/// none of theirs has no id rules: its ids are taken as written.
#[derive(Clone, Default)]
pub struct Platforms {
    known: Vec<&'static dyn Platform>,
}

impl fmt::Debug for Platforms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Platforms {
    /// The registry of `platforms`.
    pub fn new(platforms: impl IntoIterator<Item = &'static dyn Platform>) -> Self {
        Self {
            known: platforms.into_iter().collect(),
        }
    }

    /// The platform named `name`.
    pub fn get(&self, name: &str) -> Option<&'static dyn Platform> {
        self.known
            .iter()
            .copied()
            .find(|platform| platform.name() == name)
    }

    /// Every platform's name, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.known.iter().map(|platform| platform.name())
    }

    /// [`Platform::user_id_problem`] on `channel`; `None` for a channel no platform serves.
    pub fn user_id_problem(&self, channel: &str, id: &str) -> Option<&'static str> {
        self.get(channel)?.user_id_problem(id)
    }

    /// [`Platform::conversation`] on `channel`; a channel no platform serves gets the default
    /// reading.
    pub fn conversation(
        &self,
        channel: &str,
        to: &str,
        thread_id: Option<&str>,
    ) -> ConversationKey {
        match self.get(channel) {
            Some(platform) => platform.conversation(to, thread_id),
            None => ConversationKey::new(plain_chat(to), thread_id),
        }
    }

    /// [`Platform::direct_chat_user`] on `channel`; `None` for a channel no platform serves.
    pub fn direct_chat_user(&self, channel: &str, to: &str) -> Option<String> {
        self.get(channel)?.direct_chat_user(to)
    }
}

/// Whether `id` is a non-empty run of ASCII digits: the form several platforms give user ids.
pub fn is_numeric_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Numeric;

    impl Platform for Numeric {
        fn name(&self) -> &'static str {
            "numeric"
        }

        fn user_id_problem(&self, id: &str) -> Option<&'static str> {
            (!is_numeric_id(id)).then_some("numeric ids only")
        }
    }

    #[test]
    fn applies_a_platforms_rules_to_its_channel_only() {
        let platforms = Platforms::new([&Numeric as &dyn Platform]);
        assert_eq!(
            platforms.user_id_problem("numeric", "@alice"),
            Some("numeric ids only")
        );
        assert_eq!(platforms.user_id_problem("numeric", "42"), None);
        assert_eq!(platforms.user_id_problem("whatsapp", "@alice"), None);
        assert_eq!(platforms.direct_chat_user("whatsapp", "12345"), None);
        assert_eq!(platforms.names().collect::<Vec<_>>(), ["numeric"]);
    }
}
