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
use crate::platform::place_of;

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

fn press(query: &CallbackQuery, account_id: Option<&str>) -> Option<ButtonPress> {
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
