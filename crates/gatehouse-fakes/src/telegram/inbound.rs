//! Completes injected updates as Telegram would send them: ids, dates, full chats and users,
//! and the stored message a callback query refers to.

use serde_json::{Value, json};

use super::TgState;
use super::messages::chat_json;
use super::updates::update_kind;
use crate::error::FakeError;

/// Control endpoint whose requests this module reads.
pub(super) const INJECT: &str = "/_fake/inject";

/// Completes an injected update and queues it; returns its id and whether `allowed_updates`
/// let it through.
pub(super) fn prepare(state: &mut TgState, mut update: Value) -> Result<(i64, bool), FakeError> {
    let kind = update_kind(&update).ok_or_else(|| {
        FakeError::control(
            INJECT,
            "an update holds exactly one kind, such as message or callback_query",
        )
    })?;
    let Some(inner) = update.get_mut(&kind).filter(|v| v.is_object()) else {
        return Err(FakeError::control(
            INJECT,
            format!("{kind} must be an object"),
        ));
    };
    match kind.as_str() {
        "message" | "edited_message" | "channel_post" | "edited_channel_post" => {
            hydrate_message(state, inner, kind == "message")?;
        }
        "callback_query" => hydrate_callback(state, inner)?,
        _ => {}
    }
    let update_id = state
        .updates
        .assign_id(&mut update)
        .map_err(|reason| FakeError::control(INJECT, reason))?;
    let accepted = state.updates.allows(&kind);
    if accepted {
        state.updates.push(update);
    }
    Ok((update_id, accepted))
}

/// Completes an inbound message and stores it, so the bot can reply to or edit around it.
fn hydrate_message(
    state: &mut TgState,
    message: &mut Value,
    is_new: bool,
) -> Result<(), FakeError> {
    let chat_id = message
        .pointer("/chat/id")
        .and_then(Value::as_i64)
        .ok_or_else(|| FakeError::control(INJECT, "message.chat.id (an integer) is required"))?;
    if message.pointer("/chat/type").is_none() {
        message["chat"] = chat_json(chat_id, false);
    }
    if message.get("from").is_none() {
        if chat_id <= 0 {
            return Err(FakeError::control(
                INJECT,
                "message.from is required outside private chats",
            ));
        }
        message["from"] = user_json(chat_id);
    }
    complete_user(&mut message["from"]);
    let sender = message.pointer("/from/id").and_then(Value::as_i64);
    // Writing to the bot in private is what "starting" it means.
    if is_new && chat_id > 0 && sender == Some(chat_id) {
        state.chats.never_started.remove(&chat_id);
    }
    state.chats.store_inbound(chat_id, message);
    Ok(())
}

/// Completes a callback query: id, `chat_instance`, and the full message when it names one
/// the bot sent. Its id becomes answerable once.
fn hydrate_callback(state: &mut TgState, query: &mut Value) -> Result<(), FakeError> {
    let from = query
        .pointer("/from/id")
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            FakeError::control(INJECT, "callback_query.from.id (an integer) is required")
        })?;
    complete_user(&mut query["from"]);
    let id = match query.get("id").and_then(Value::as_str) {
        Some(id) => id.to_owned(),
        None => {
            let id = format!("cbq-{}", state.next_callback);
            state.next_callback += 1;
            query["id"] = json!(id);
            id
        }
    };
    if state.callbacks.contains_key(&id) {
        return Err(FakeError::control(
            INJECT,
            format!("callback query id {id} was already used"),
        ));
    }
    let chat_id = query.pointer("/message/chat/id").and_then(Value::as_i64);
    let message_id = query.pointer("/message/message_id").and_then(Value::as_i64);
    if let (Some(chat_id), Some(message_id)) = (chat_id, message_id)
        && let Some(stored) = state.chats.get(chat_id, message_id)
    {
        query["message"] = stored.clone();
    }
    if query.get("chat_instance").is_none() {
        query["chat_instance"] = json!(format!("ci{}", chat_id.unwrap_or(from)));
    }
    state.callbacks.insert(id, false);
    Ok(())
}

/// Fills what a test left out of a `User` (`is_bot`, `first_name`), keeping what it gave: a real
/// update always carries them, and the adapter drops an update whose user it cannot read.
fn complete_user(user: &mut Value) {
    let Some(id) = user.get("id").and_then(Value::as_i64) else {
        return;
    };
    if let (Some(user), Value::Object(defaults)) = (user.as_object_mut(), user_json(id)) {
        for (key, value) in defaults {
            user.entry(key).or_insert(value);
        }
    }
}

fn user_json(id: i64) -> Value {
    json!({"id": id, "is_bot": false, "first_name": format!("User {id}")})
}
