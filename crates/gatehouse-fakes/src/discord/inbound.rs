//! Completes injected gateway events as Discord would send them: ids, timestamps, users and
//! members, interaction tokens, and the stored message a component interaction refers to.

use serde_json::{Value, json};

use super::interactions::Delivered;
use super::messages::{bot_user, user_json};
use super::{APP_ID, BOT_ID, DcState};
use crate::body::fill_defaults;
use crate::clock::{iso8601, now_ms};
use crate::error::FakeError;

/// Control endpoint whose requests this module reads.
pub(super) const INJECT: &str = "/_fake/inject";

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

/// Completes an injected MESSAGE_CREATE and stores the message in its channel.
pub(super) fn hydrate_message(state: &mut DcState, d: &mut Value) -> Result<(), FakeError> {
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

/// Completes an injected INTERACTION_CREATE and makes it answerable (3-second window).
pub(super) fn hydrate_interaction(state: &mut DcState, d: &mut Value) -> Result<(), FakeError> {
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
    let channel = match (guild, state.channels.parent_of(channel_id)) {
        (Some(_), Some(parent)) => json!({"id": channel_id.to_string(), "type": 11,
            "parent_id": parent.to_string()}),
        (Some(_), None) => json!({"id": channel_id.to_string(), "type": 0}),
        (None, _) => json!({"id": channel_id.to_string(), "type": 1}),
    };
    let defaults = json!({
        "id": id.to_string(), "application_id": APP_ID.to_string(), "type": kind, "token": token,
        "version": 1, "channel_id": channel_id.to_string(), "channel": channel,
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
