//! Where messages go (`Route`) and where a delivered one lives (`MessageLocator`).
//!
//! A route names a DM by the *user* it reaches, not by a DM channel id, so the same person reached
//! from two config entries (an approver and an origin DM) compares equal and is delivered to once.

use std::fmt;

use crate::error::ChatError;

/// The other end of a route.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Destination {
    /// A direct message to this user id; the adapter opens the DM if needed.
    Dm(String),
    /// A chat, channel or group by the platform's id.
    Chat(String),
}

/// A place a message can be delivered to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Route {
    /// The channel name (`telegram`, `discord`, `slack`, …).
    pub channel: String,
    /// The bot account on that channel, when more than one is configured.
    pub account_id: Option<String>,
    /// Who or what receives it.
    pub destination: Destination,
    /// A thread or forum topic inside the chat, kept so replies land where the request started.
    pub thread_id: Option<String>,
}

impl Route {
    /// Parses a config `to` value: `user:<id>` or `dm:<id>` is a DM, `chat:<id>` or `channel:<id>`
    /// or a bare id is a chat. Empty values are refused rather than sent nowhere.
    pub fn from_target(
        field: &str,
        channel: &str,
        to: &str,
        account_id: Option<&str>,
        thread_id: Option<&str>,
    ) -> Result<Route, ChatError> {
        let refuse = |reason| ChatError::InvalidTarget {
            field: field.to_owned(),
            value: to.to_owned(),
            reason,
        };
        if channel.trim().is_empty() {
            return Err(refuse("the target has no channel"));
        }
        let to = to.trim();
        let destination = match to.split_once(':') {
            Some(("user" | "dm", id)) => Destination::Dm(id.trim().to_owned()),
            Some(("chat" | "channel", id)) => Destination::Chat(id.trim().to_owned()),
            _ => Destination::Chat(to.to_owned()),
        };
        let (Destination::Dm(id) | Destination::Chat(id)) = &destination;
        if id.is_empty() {
            return Err(refuse("the target names no user or chat"));
        }
        Ok(Route {
            channel: channel.trim().to_owned(),
            account_id: non_empty(account_id),
            destination,
            thread_id: non_empty(thread_id),
        })
    }

    /// A DM route to `user_id` on `channel`.
    pub fn dm(channel: &str, account_id: Option<&str>, user_id: &str) -> Route {
        Route {
            channel: channel.to_owned(),
            account_id: non_empty(account_id),
            destination: Destination::Dm(user_id.to_owned()),
            thread_id: None,
        }
    }
}

fn non_empty(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.channel)?;
        if let Some(account) = &self.account_id {
            write!(f, "[{account}]")?;
        }
        match &self.destination {
            Destination::Dm(user) => write!(f, ":user:{user}")?,
            Destination::Chat(chat) => write!(f, ":chat:{chat}")?,
        }
        if let Some(thread) = &self.thread_id {
            write!(f, "#{thread}")?;
        }
        Ok(())
    }
}

/// Where a request came from (its `turnSource`), as the gateway received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSource {
    /// The channel the conversation is on.
    pub channel: String,
    /// The bot account, when several are configured.
    pub account_id: Option<String>,
    /// The chat id the conversation happens in.
    pub to: String,
    /// The thread or topic inside it.
    pub thread_id: Option<String>,
    /// For a direct conversation, the user on the other side: lets the planner see that the
    /// origin *is* an approver's DM and not deliver twice.
    pub dm_user_id: Option<String>,
}

impl TurnSource {
    /// The route back to the origin, a DM route when the origin is a direct conversation.
    pub fn route(&self) -> Route {
        let destination = match &self.dm_user_id {
            Some(user) => Destination::Dm(user.clone()),
            None => Destination::Chat(self.to.clone()),
        };
        Route {
            channel: self.channel.clone(),
            account_id: non_empty(self.account_id.as_deref()),
            destination,
            thread_id: non_empty(self.thread_id.as_deref()),
        }
    }
}

/// Where a delivered message lives, stored with the approval so every copy can be edited or deleted
/// on resolve, expiry and cancellation, also after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageLocator {
    /// The channel name.
    pub channel: String,
    /// The bot account that sent it.
    pub account_id: Option<String>,
    /// The concrete chat id the platform put it in (a DM's channel id, not the user id).
    pub chat_id: String,
    /// The platform's message id (Slack's `ts`).
    pub message_id: String,
    /// The thread or topic it was posted in.
    pub thread_id: Option<String>,
}

/// The conversation a route or a delivered message belongs to, as a platform counts its
/// limits: a DM is the same conversation whatever thread a request started in, and the copies
/// of a card are edited in the conversation they were sent to. The pacer keeps one lane per
/// conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Conversation {
    /// The bot account, when several are configured.
    pub account_id: Option<String>,
    /// Who or what it is with.
    pub destination: Destination,
}

impl Route {
    /// The conversation this route delivers into.
    pub fn conversation(&self) -> Conversation {
        Conversation {
            account_id: self.account_id.clone(),
            destination: self.destination.clone(),
        }
    }
}

impl fmt::Display for Conversation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(account) = &self.account_id {
            write!(f, "[{account}]")?;
        }
        match &self.destination {
            Destination::Dm(user) => write!(f, "user:{user}"),
            Destination::Chat(chat) => write!(f, "chat:{chat}"),
        }
    }
}

/// Characters of a [`SendKey`]: Discord takes a nonce of at most 25 characters.
pub const SEND_KEY_LEN: usize = 24;

/// The idempotency key of one message to be sent: the same for every attempt to send it, and
/// for nothing else. A platform that offers idempotency (Discord's `nonce` with
/// `enforce_nonce`) returns the message an earlier attempt created instead of a second one;
/// the others ignore it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SendKey(String);

impl SendKey {
    /// A fresh key: [`SEND_KEY_LEN`] random letters and digits (143 bits).
    pub fn random() -> SendKey {
        use rand::Rng;
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut rng = rand::rng();
        let key = (0..SEND_KEY_LEN)
            .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
            .collect();
        SendKey(key)
    }

    /// A key kept from before (the outbox's), refused unless it is 1–25 letters and digits, so
    /// it is a valid nonce everywhere.
    pub fn parse(text: &str) -> Option<SendKey> {
        let valid =
            (1..=25).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_alphanumeric());
        valid.then(|| SendKey(text.to_owned()))
    }

    /// The key as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SendKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
