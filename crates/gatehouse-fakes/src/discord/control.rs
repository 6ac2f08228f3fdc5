//! Discord controls: `POST /_fake/inject` (a gateway dispatch `{"t","d"}`),
//! `POST /_fake/disconnect` (drop the gateway connection) and `GET|POST /_fake/config`.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use super::inbound::{INJECT, hydrate_interaction, hydrate_message};
use super::sessions::Dispatched;
use super::{APP_ID, BOT_ID, Discord};
use crate::control::parse_control;
use crate::error::FakeError;
use crate::ws::Outbound;

/// The dispatch events a test can inject.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(super) enum Event {
    /// A user wrote a message.
    MessageCreate,
    /// A user clicked, ran a command or submitted a modal.
    InteractionCreate,
}

impl Event {
    /// The gateway's name for it.
    fn name(self) -> &'static str {
        match self {
            Self::MessageCreate => "MESSAGE_CREATE",
            Self::InteractionCreate => "INTERACTION_CREATE",
        }
    }
}

/// An injected event in the gateway's dispatch shape.
#[derive(Debug, Deserialize)]
pub(super) struct Inject {
    t: Event,
    d: Value,
}

/// Completes the event like Discord would (ids, tokens, members, stored message) and sends it
/// to the bot's gateway session with the next sequence number.
pub(super) async fn inject(
    State(discord): State<Arc<Discord>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let Inject { t, mut d } = parse_control(INJECT, &body)?;
    if !d.is_object() {
        return Err(FakeError::control(INJECT, "d must be an object"));
    }
    let mut state = discord.lock();
    match t {
        Event::MessageCreate => hydrate_message(&mut state, &mut d)?,
        Event::InteractionCreate => hydrate_interaction(&mut state, &mut d)?,
    }
    let outcome = state
        .sessions
        .dispatch(t.name(), d.clone())
        .ok_or_else(|| {
            FakeError::control(
                INJECT,
                "no gateway session: the bot has not sent IDENTIFY yet",
            )
        })?;
    let mut answer = json!({"ok": true, "t": t.name(), "d": d});
    match outcome {
        Dispatched::Live(seq) => {
            answer["s"] = json!(seq);
            answer["delivery"] = json!("live");
        }
        Dispatched::AwaitingResume(seq) => {
            answer["s"] = json!(seq);
            answer["delivery"] = json!("awaiting-resume");
        }
        Dispatched::Filtered(reason) => {
            answer["delivery"] = json!("filtered");
            answer["reason"] = json!(reason);
        }
    }
    Ok(Json(answer))
}

/// Control endpoint that opens a thread.
const THREADS: &str = "/_fake/threads";

/// A thread to open.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OpenThread {
    /// The guild text channel it belongs to (a snowflake, as a string or a number).
    parent_id: Value,
}

/// Opens a public thread in a guild channel, so a test can type in it: messages and
/// interactions injected with its id as `channel_id` come from the thread, and
/// `GET /channels/{id}` says so (type 11, `parent_id`). Answers `{"ok":true,"id":"…"}`.
pub(super) async fn open_thread(
    State(discord): State<Arc<Discord>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let OpenThread { parent_id } = parse_control(THREADS, &body)?;
    let parent = match &parent_id {
        Value::String(text) => text.parse::<u64>().ok(),
        Value::Number(number) => number.as_u64(),
        _ => None,
    }
    .filter(|&id| id != 0)
    .ok_or_else(|| FakeError::control(THREADS, "parent_id must be a snowflake"))?;
    let mut state = discord.lock();
    if state.channels.guild_of(parent).is_none() {
        return Err(FakeError::control(
            THREADS,
            "parent_id names a DM, not a guild channel",
        ));
    }
    let state = &mut *state;
    let id = state.channels.open_thread(&mut state.ids, parent);
    Ok(Json(json!({"ok": true, "id": id.to_string()})))
}

/// How to drop the gateway connection.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Disconnect {
    /// Close code sent to the client (default 4000, which clients resume after).
    #[serde(default = "resumable_code")]
    code: u16,
    /// Drop the TCP connection without a close frame instead.
    #[serde(default)]
    abrupt: bool,
    /// Forget the session too, so RESUME gets INVALID_SESSION.
    #[serde(default)]
    invalidate_session: bool,
    /// Hold new gateway connections back this long, so events can be missed deterministically.
    #[serde(default)]
    reconnect_delay_ms: u64,
}

fn resumable_code() -> u16 {
    4000
}

/// Closes every live gateway connection.
pub(super) async fn disconnect(
    State(discord): State<Arc<Discord>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let how: Disconnect = if body.is_empty() {
        Disconnect {
            code: resumable_code(),
            abrupt: false,
            invalidate_session: false,
            reconnect_delay_ms: 0,
        }
    } else {
        parse_control("/_fake/disconnect", &body)?
    };
    let mut state = discord.lock();
    state.reconnect_not_before =
        Some(Instant::now() + Duration::from_millis(how.reconnect_delay_ms));
    let closed = state.sessions.disconnect(
        || {
            if how.abrupt {
                Outbound::Drop
            } else {
                Outbound::Close {
                    notice: None,
                    code: how.code,
                    reason: "fake disconnect",
                }
            }
        },
        how.invalidate_session,
    );
    Ok(Json(json!({"ok": true, "closed": closed})))
}

/// Partial update of the fake's configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConfigPatch {
    dm_closed: Option<Vec<u64>>,
    heartbeat_interval_ms: Option<u64>,
    interaction_window_ms: Option<u64>,
    nonce_window_ms: Option<u64>,
}

/// Changes the configuration; fields left out keep their value.
pub(super) async fn configure(
    State(discord): State<Arc<Discord>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let patch: ConfigPatch = parse_control("/_fake/config", &body)?;
    {
        let mut state = discord.lock();
        if let Some(users) = patch.dm_closed {
            state.channels.dm_closed = users.into_iter().collect();
        }
        if let Some(window) = patch.interaction_window_ms {
            state.interactions.response_window = Duration::from_millis(window);
        }
        if let Some(window) = patch.nonce_window_ms {
            state.channels.nonces.window = Duration::from_millis(window);
        }
        if let Some(interval) = patch.heartbeat_interval_ms {
            state.sessions.heartbeat_interval_ms = interval;
        }
    }
    Ok(config(State(discord)).await)
}

/// The current configuration and the fixed ids the fake uses.
pub(super) async fn config(State(discord): State<Arc<Discord>>) -> Json<Value> {
    let state = discord.lock();
    let mut dm_closed: Vec<u64> = state.channels.dm_closed.iter().copied().collect();
    dm_closed.sort_unstable();
    Json(json!({
        "ok": true, "dm_closed": dm_closed,
        "heartbeat_interval_ms": state.sessions.heartbeat_interval_ms,
        "interaction_window_ms": millis(state.interactions.response_window),
        "nonce_window_ms": millis(state.channels.nonces.window),
        "bot_user_id": BOT_ID.to_string(), "application_id": APP_ID.to_string(),
        "guild_id": super::GUILD_ID.to_string(),
    }))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
