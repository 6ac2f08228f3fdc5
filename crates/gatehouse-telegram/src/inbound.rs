//! Telegram updates as the chat core's [`Inbound`] events, and the [`MessageLocator`] of a
//! Telegram message.
//!
//! The locator of a card is computed by [`locator_of`] both when it is sent and when its button
//! is pressed, from the same `Message` fields, so the core's token binding (which compares whole
//! locators) sees equal values for the same message.

use gatehouse_chat::channel::{ButtonPress, Inbound, InboundText, InteractionRef};
use gatehouse_chat::route::MessageLocator;
use gatehouse_policy::elevated::SenderIdentity;
use teloxide::types::{CallbackQuery, Message, Update, UpdateKind, User};

use crate::classify::CHANNEL;
use crate::platform::{place_of, shared_sender_id};

/// Where `message` lives. The thread is kept only for forum topics: elsewhere Telegram's
/// `message_thread_id` names a reply chain, and posting into it is not what a route means.
pub(crate) fn locator_of(message: &Message, account_id: Option<&str>) -> MessageLocator {
    let thread_id = message
        .thread_id
        .filter(|_| message.is_topic_message)
        .map(|thread| thread.0.0.to_string());
    MessageLocator {
        channel: CHANNEL.to_owned(),
        account_id: account_id.map(str::to_owned),
        chat_id: message.chat.id.0.to_string(),
        message_id: message.id.0.to_string(),
        thread_id,
    }
}

/// The event an update stands for, or `None` for updates the core has no use for (edits,
/// channel posts, messages without text, callbacks without data or message).
pub(crate) fn translate(update: &Update, account_id: Option<&str>) -> Option<Inbound> {
    match &update.kind {
        UpdateKind::Message(message) => text(message, account_id).map(Inbound::Text),
        UpdateKind::CallbackQuery(query) => press(query, account_id).map(Inbound::Press),
        _ => None,
    }
}

fn text(message: &Message, account_id: Option<&str>) -> Option<InboundText> {
    let from = message.from.as_ref()?;
    let text = message.text()?;
    if let Some(reason) = not_the_senders_own(message, from) {
        tracing::info!(
            target: "security",
            channel = CHANNEL,
            chat = message.chat.id.0,
            sender = from.id.0,
            reason,
            "telegram message not read as a command"
        );
        return None;
    }
    let locator = locator_of(message, account_id);
    Some(InboundText {
        sender: sender(from),
        place: place_of(&locator.chat_id, locator.thread_id.as_deref()),
        message: locator,
        text: text.to_owned(),
        reply_to: message
            .reply_to_message()
            .map(|original| locator_of(original, account_id)),
        is_direct: message.chat.is_private(),
        interaction: None,
        // Telegram has no message only one member of a group sees.
        private_reply: None,
    })
}

/// Why `message` does not speak for `from`, when it does not: its text is someone else's
/// (forwarded, automatically forwarded from a linked channel, composed by an inline bot), it
/// was sent on behalf of a chat (an anonymous admin, a channel), or `from` is a bot or one of
/// Telegram's shared sender ids. Such a message is never a command, whoever `from` is.
fn not_the_senders_own(message: &Message, from: &User) -> Option<&'static str> {
    if message.forward_origin().is_some() || message.is_automatic_forward() {
        Some("forwarded: the text is not the forwarder's")
    } else if message.sender_chat.is_some() {
        Some("sent on behalf of a chat (anonymous admin or channel)")
    } else if message.via_bot.is_some() {
        Some("composed by an inline bot")
    } else if from.is_bot || shared_sender_id(&from.id.0.to_string()).is_some() {
        Some("sent by a bot or a shared sender id")
    } else {
        None
    }
}

fn press(query: &CallbackQuery, account_id: Option<&str>) -> Option<ButtonPress> {
    if query.from.is_bot || shared_sender_id(&query.from.id.0.to_string()).is_some() {
        return None;
    }
    let token = query.data.clone()?;
    let on = query.message.as_ref()?;
    let message = match on.regular_message() {
        Some(message) => locator_of(message, account_id),
        // Older than 48 hours: Telegram keeps only the chat and id.
        None => MessageLocator {
            channel: CHANNEL.to_owned(),
            account_id: account_id.map(str::to_owned),
            chat_id: on.chat().id.0.to_string(),
            message_id: on.id().0.to_string(),
            thread_id: None,
        },
    };
    Some(ButtonPress {
        sender: sender(&query.from),
        token,
        message,
        interaction: InteractionRef {
            channel: CHANNEL.to_owned(),
            handle: query.id.0.clone(),
        },
    })
}

/// Every identity field Telegram supplies; the core decides which ones an entry may match.
fn sender(user: &User) -> SenderIdentity {
    SenderIdentity {
        channel: CHANNEL.to_owned(),
        id: user.id.0.to_string(),
        from: None,
        e164: None,
        name: Some(user.full_name()),
        username: user.username.clone(),
        tag: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// An update as the adapter receives it: from JSON text (teloxide reads ids and dates as
    /// they arrive over HTTP, which a `serde_json::Value` does not reproduce).
    fn update(value: Value) -> Update {
        let update: Update = serde_json::from_str(&value.to_string()).unwrap();
        assert!(!matches!(update.kind, UpdateKind::Error(_)), "{value}");
        update
    }

    /// One mark on a message, named.
    type Mark = (&'static str, fn(&mut Value));

    /// Every way a message can carry words that are not its sender's, alone and combined.
    const NOT_THEIR_OWN: [Mark; 6] = [
        (
            "forwarded",
            |m| {
                m["forward_origin"] =
                    json!({"type": "hidden_user", "date": 1, "sender_user_name": "M"})
            },
        ),
        ("automatic forward", |m| {
            m["is_automatic_forward"] = json!(true)
        }),
        ("on behalf of a chat", |m| {
            m["sender_chat"] = json!({"id": -100, "type": "supergroup", "title": "ops"})
        }),
        (
            "inline bot",
            |m| m["via_bot"] = json!({"id": 6060, "is_bot": true, "first_name": "Inline"}),
        ),
        ("bot sender", |m| m["from"]["is_bot"] = json!(true)),
        ("anonymous admin id", |m| {
            m["from"]["id"] = json!(1_087_968_824_u64)
        }),
    ];

    /// Issue 36, exhaustively: a message is read as its sender's command exactly when none of
    /// the marks of someone else's words is on it, in every combination.
    #[test]
    fn reads_a_message_as_its_senders_exactly_when_nothing_says_otherwise() {
        for mask in 0..(1_u32 << NOT_THEIR_OWN.len()) {
            let mut message = json!({"message_id": 7, "date": 1,
                "chat": {"id": -100, "type": "supergroup", "title": "ops"},
                "from": {"id": 4242, "is_bot": false, "first_name": "Alice"},
                "text": "/approve 0f3c9a1e deny"});
            let mut marks = Vec::new();
            for (bit, (what, mark)) in NOT_THEIR_OWN.iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    mark(&mut message);
                    marks.push(*what);
                }
            }
            let read = translate(&update(json!({"update_id": 1, "message": message})), None);
            let read = read.is_some();
            assert_eq!(read, marks.is_empty(), "{marks:?}");
        }
    }

    #[test]
    fn ignores_presses_by_a_shared_sender_id() {
        let query = |from: u64| {
            update(json!({"update_id": 2, "callback_query": {"id": "q1",
                "from": {"id": from, "is_bot": false, "first_name": "X"},
                "chat_instance": "c", "data": "g1.tok",
                "message": {"message_id": 9, "date": 1,
                    "chat": {"id": 4242, "type": "private", "first_name": "A"}}}}))
        };
        assert!(translate(&query(4242), None).is_some());
        assert!(translate(&query(777_000), None).is_none());
    }
}
