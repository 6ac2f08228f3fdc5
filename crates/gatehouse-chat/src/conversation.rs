//! Chat conversations as session bindings name them, normalized once per platform, so that a
//! binding (`session.bind`, a request's `turnSource`) and a later message typed in the same
//! place always meet.
//!
//! A platform may spell one conversation several ways: a DM as `user:<id>`, as a mention or as
//! its DM channel id; a Discord thread as the thread's own channel id or as a thread inside its
//! parent. Each adapter's [`Platform::conversation`](crate::Platform::conversation) reduces a
//! binding to one [`ConversationKey`], and each inbound message carries the [`Place`] it was
//! typed in: every key a binding of that place may have, thread before whole chat.

/// One conversation, normalized by its platform.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversationKey {
    /// The chat, as the platform normalizes it (`user:<id>` for a DM where the platform names
    /// DMs by user).
    pub chat: String,
    /// A thread or topic inside the chat, where the platform keeps one apart from its chat.
    pub thread: Option<String>,
}

impl ConversationKey {
    /// A key for `chat` and `thread`, blank parts dropped.
    pub fn new(chat: &str, thread: Option<&str>) -> Self {
        Self {
            chat: chat.trim().to_owned(),
            thread: thread
                .map(str::trim)
                .filter(|thread| !thread.is_empty())
                .map(str::to_owned),
        }
    }
}

/// Where a message was typed, as the keys a session binding of that place may have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// Keys naming the thread or topic itself, most specific first; empty outside a thread.
    pub thread: Vec<ConversationKey>,
    /// Keys naming the whole chat the message was typed in.
    pub chat: Vec<ConversationKey>,
}

impl Place {
    /// A place in a chat (no thread) that bindings may name by any of `keys`.
    pub fn chat(keys: impl IntoIterator<Item = ConversationKey>) -> Self {
        Self {
            thread: Vec::new(),
            chat: keys.into_iter().collect(),
        }
    }

    /// Whether the message was typed inside a thread or topic.
    pub fn in_thread(&self) -> bool {
        !self.thread.is_empty()
    }
}

/// The platform-neutral reading of a binding's `to`: the `chat:` and `channel:` prefixes
/// routes accept are dropped, anything else is taken as written.
pub fn plain_chat(to: &str) -> &str {
    let to = to.trim();
    to.strip_prefix("chat:")
        .or_else(|| to.strip_prefix("channel:"))
        .map(str::trim)
        .unwrap_or(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_blank_threads_and_route_prefixes() {
        assert_eq!(
            ConversationKey::new(" 42 ", Some(" ")),
            ConversationKey::new("42", None)
        );
        assert_eq!(plain_chat("channel:C1"), "C1");
        assert_eq!(plain_chat("chat: -100"), "-100");
        assert_eq!(plain_chat("user:5"), "user:5");
    }
}
