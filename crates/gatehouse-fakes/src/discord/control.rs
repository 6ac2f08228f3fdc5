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

use super::interactions::Delivered;
use super::messages::{bot_user, user_json};
use super::sessions::Dispatched;
use super::{APP_ID, BOT_ID, DcState, Discord};
use crate::body::fill_defaults;
use crate::clock::{iso8601, now_ms};
use crate::control::parse_control;
use crate::error::FakeError;
use crate::ws::Outbound;

const INJECT: &str = "/_fake/inject";

/// An injected event in the gateway's dispatch shape.
#[derive(Debug, Deserialize)]
pub(super) struct Inject {
    t: String,
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
    match t.as_str() {
        "MESSAGE_CREATE" => hydrate_message(&mut state, &mut d)?,
        "INTERACTION_CREATE" => hydrate_interaction(&mut state, &mut d)?,
        other => {
            return Err(FakeError::control(
                INJECT,
                format!("cannot inject {other}: use MESSAGE_CREATE or INTERACTION_CREATE"),
            ));
        }
    }
    let outcome = state.sessions.dispatch(&t, d.clone()).ok_or_else(|| {
        FakeError::control(
            INJECT,
            "no gateway session: the bot has not sent IDENTIFY yet",
        )
    })?;
    let mut answer = json!({"ok": true, "t": t, "d": d});
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

fn snowflake(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

fn required_channel(d: &Value) -> Result<u64, FakeError> {
    snowflake(d.get("channel_id"))
        .ok_or_else(|| FakeError::control(INJECT, "d.channel_id (a snowflake) is required"))
}

fn member_json(user: &Value) -> Value {
    json!({"user": user, "roles": [], "joined_at": iso8601(now_ms()), "deaf": false, "mute": false,
           "flags": 0, "pending": false, "permissions": "0", "nick": null, "avatar": null})
}

fn hydrate_message(state: &mut DcState, d: &mut Value) -> Result<(), FakeError> {
    let channel_id = required_channel(d)?;
    let author = d
        .get("author")
        .filter(|a| a.get("id").is_some())
        .map(user_json)
        .ok_or_else(|| FakeError::control(INJECT, "d.author.id is required"))?;
    let id = snowflake(d.get("id")).unwrap_or_else(|| state.ids.next());
    let content = d
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mentions = if content.contains(&format!("<@{BOT_ID}>")) {
        json!([bot_user()])
    } else {
        json!([])
    };
    let defaults = json!({
        "id": id.to_string(), "channel_id": channel_id.to_string(), "author": author,
        "content": content, "timestamp": iso8601(now_ms()), "edited_timestamp": null,
        "tts": false, "mention_everyone": false, "mentions": mentions, "mention_roles": [],
        "attachments": [], "embeds": [], "pinned": false, "type": 0, "components": [],
    });
    fill_defaults(d, defaults);
    d["author"] = author.clone();
    if let Some(guild) = state.channels.guild_of(channel_id) {
        d["guild_id"] = json!(guild.to_string());
        if d.get("member").is_none() {
            let mut member = member_json(&author);
            if let Some(fields) = member.as_object_mut() {
                fields.remove("user");
            }
            d["member"] = member;
        }
    }
    state.channels.store_inbound(channel_id, id, d.clone());
    Ok(())
}

fn hydrate_interaction(state: &mut DcState, d: &mut Value) -> Result<(), FakeError> {
    let kind = d
        .get("type")
        .and_then(Value::as_u64)
        .ok_or_else(|| FakeError::control(INJECT, "d.type (the interaction type) is required"))?;
    let channel_id = required_channel(d)?;
    let user = d
        .get("user")
        .or_else(|| d.pointer("/member/user"))
        .filter(|u| u.get("id").is_some())
        .map(user_json)
        .ok_or_else(|| FakeError::control(INJECT, "d.user.id (or d.member.user.id) is required"))?;
    let id = snowflake(d.get("id")).unwrap_or_else(|| state.ids.next());
    let token = match d.get("token").and_then(Value::as_str) {
        Some(token) => token.to_owned(),
        None => format!("fake-interaction-token-{id}"),
    };
    if state.interactions.has_token(&token) {
        return Err(FakeError::control(
            INJECT,
            format!("interaction token {token} was already used"),
        ));
    }
    let guild = state.channels.guild_of(channel_id);
    let message_id = if kind == 3 {
        let named = snowflake(d.pointer("/message/id")).or_else(|| snowflake(d.get("message_id")));
        let message_id = named.ok_or_else(|| {
            FakeError::control(INJECT, "a component interaction needs d.message.id")
        })?;
        if let Some(stored) = state.channels.get(channel_id, message_id) {
            d["message"] = stored.clone();
        }
        if d.pointer("/data/custom_id")
            .and_then(Value::as_str)
            .is_none()
        {
            return Err(FakeError::control(
                INJECT,
                "a component interaction needs d.data.custom_id",
            ));
        }
        if d.pointer("/data/component_type").is_none() {
            d["data"]["component_type"] = json!(2);
        }
        Some(message_id)
    } else {
        None
    };
    if kind == 2 && d.pointer("/data/id").is_none() {
        d["data"]["id"] = json!(state.ids.next().to_string());
    }
    if let Some(fields) = d.as_object_mut() {
        fields.remove("message_id");
    }
    let defaults = json!({
        "id": id.to_string(), "application_id": APP_ID.to_string(), "type": kind, "token": token,
        "version": 1, "channel_id": channel_id.to_string(),
        "channel": {"id": channel_id.to_string(), "type": if guild.is_some() { 0 } else { 1 }},
        "app_permissions": "0", "locale": "en-US", "entitlements": [],
        "authorizing_integration_owners": {}, "context": if guild.is_some() { 0 } else { 1 },
        "attachment_size_limit": 8_388_608,
    });
    fill_defaults(d, defaults);
    match guild {
        Some(guild) => {
            d["guild_id"] = json!(guild.to_string());
            d["guild_locale"] = json!("en-US");
            d["member"] = member_json(&user);
            if let Some(fields) = d.as_object_mut() {
                fields.remove("user");
            }
        }
        None => d["user"] = user,
    }
    state.interactions.register(Delivered {
        id,
        token,
        kind,
        channel_id,
        message_id,
    });
    Ok(())
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
        "bot_user_id": BOT_ID.to_string(), "application_id": APP_ID.to_string(),
        "guild_id": super::GUILD_ID.to_string(),
    }))
}
