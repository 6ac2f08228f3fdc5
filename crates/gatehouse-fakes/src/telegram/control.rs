//! Telegram controls: `POST /_fake/inject` (an `Update` as Telegram sends it) and
//! `GET|POST /_fake/config` (bot username, users who never started the bot).

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use super::messages::chat_json;
use super::updates::update_kind;
use super::{Telegram, TgState, webhook};
use crate::control::parse_control;
use crate::error::FakeError;

const INJECT: &str = "/_fake/inject";
const CONFIG: &str = "/_fake/config";

/// Queues an update (filling ids, dates and stored messages) and delivers it: to the next
/// `getUpdates`, or at once to the webhook when one is set.
pub(super) async fn inject(
    State(tg): State<Arc<Telegram>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let update: Value = parse_control(INJECT, &body)?;
    let (update_id, accepted, webhook) = {
        let mut state = tg.lock();
        let (update_id, accepted) = prepare(&mut state, update)?;
        (update_id, accepted, state.webhook.is_some())
    };
    if !accepted {
        return Ok(Json(
            json!({"ok": true, "update_id": update_id, "delivery": "dropped",
            "reason": "update kind not in allowed_updates"}),
        ));
    }
    tg.updates_ready.notify_waiters();
    if webhook {
        let outcomes = webhook::deliver(&tg).await;
        return Ok(Json(
            json!({"ok": true, "update_id": update_id, "delivery": "webhook",
            "attempts": outcomes}),
        ));
    }
    Ok(Json(
        json!({"ok": true, "update_id": update_id, "delivery": "getUpdates"}),
    ))
}

fn prepare(state: &mut TgState, mut update: Value) -> Result<(i64, bool), FakeError> {
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
    if query.pointer("/from/first_name").is_none() {
        query["from"] = user_json(from);
    }
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

fn user_json(id: i64) -> Value {
    json!({"id": id, "is_bot": false, "first_name": format!("User {id}")})
}

/// Partial update of the fake's configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConfigPatch {
    bot_username: Option<String>,
    never_started: Option<Vec<i64>>,
}

/// Changes the configuration; fields left out keep their value.
pub(super) async fn configure(
    State(tg): State<Arc<Telegram>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let patch: ConfigPatch = parse_control(CONFIG, &body)?;
    {
        let mut state = tg.lock();
        if let Some(username) = patch.bot_username {
            state.bot_username = username;
        }
        if let Some(users) = patch.never_started {
            state.chats.never_started = users.into_iter().collect();
        }
    }
    Ok(config(State(tg)).await)
}

/// The current configuration.
pub(super) async fn config(State(tg): State<Arc<Telegram>>) -> Json<Value> {
    let state = tg.lock();
    let mut never_started: Vec<i64> = state.chats.never_started.iter().copied().collect();
    never_started.sort_unstable();
    Json(json!({"ok": true, "bot_username": state.bot_username, "never_started": never_started}))
}
