//! Telegram controls: `POST /_fake/inject` (an `Update` as Telegram sends it) and
//! `GET|POST /_fake/config` (bot username, users who never started the bot).

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use super::inbound::{INJECT, prepare};
use super::{Telegram, webhook};
use crate::control::parse_control;
use crate::error::FakeError;

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
