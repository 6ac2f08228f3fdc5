//! Completes injected payloads as Slack would send them: team, app, trigger and response URL,
//! the stored message a button press refers to, and the `event_callback` wrapper for events.

use serde_json::{Value, json};

use super::{APP_ID, SlState, TEAM_ID};
use crate::body::fill_defaults;
use crate::clock::now_secs;
use crate::error::FakeError;

/// Control endpoint whose requests this module reads.
pub(super) const INJECT: &str = "/_fake/inject";

/// Completes an `interactive` payload (block actions and the like).
pub(super) fn hydrate_interactive(
    state: &mut SlState,
    base: &str,
    payload: &mut Value,
) -> Result<(), FakeError> {
    let user = payload
        .pointer("/user/id")
        .and_then(Value::as_str)
        .ok_or_else(|| FakeError::control(INJECT, "payload.user.id is required"))?
        .to_owned();
    state.next_trigger += 1;
    let n = state.next_trigger;
    fill_defaults(
        payload,
        json!({
            "team": {"id": TEAM_ID, "domain": "gatehouse-fake"}, "api_app_id": APP_ID,
            "token": "fake-verification-token", "trigger_id": format!("trigger-{n}"),
            "response_url": format!("{base}/response/{n}"), "is_enterprise_install": false,
        }),
    );
    if let Some(fields) = payload.get_mut("user").and_then(Value::as_object_mut) {
        fields
            .entry("username")
            .or_insert_with(|| json!(user.to_lowercase()));
        fields.entry("team_id").or_insert_with(|| json!(TEAM_ID));
    }
    let channel = payload
        .pointer("/container/channel_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let ts = payload
        .pointer("/container/message_ts")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let (Some(channel), Some(ts)) = (channel, ts) {
        if payload.get("channel").is_none() {
            payload["channel"] = json!({"id": channel, "name": channel.to_lowercase()});
        }
        if payload.get("message").is_none()
            && let Some(stored) = state.conversations.get(&channel, &ts)
        {
            payload["message"] = stored.clone();
        }
    }
    Ok(())
}

/// Completes a `slash_commands` payload.
pub(super) fn hydrate_command(
    state: &mut SlState,
    base: &str,
    payload: &mut Value,
) -> Result<(), FakeError> {
    for field in ["command", "user_id", "channel_id"] {
        if payload.get(field).and_then(Value::as_str).is_none() {
            return Err(FakeError::control(
                INJECT,
                format!("payload.{field} is required"),
            ));
        }
    }
    state.next_trigger += 1;
    let n = state.next_trigger;
    fill_defaults(
        payload,
        json!({
            "token": "fake-verification-token", "team_id": TEAM_ID, "team_domain": "gatehouse-fake",
            "api_app_id": APP_ID, "text": "", "trigger_id": format!("trigger-{n}"),
            "response_url": format!("{base}/response/{n}"), "is_enterprise_install": "false",
        }),
    );
    Ok(())
}

/// Wraps a bare event into an `event_callback` and stores message events.
pub(super) fn hydrate_event(state: &mut SlState, payload: &mut Value) -> Result<(), FakeError> {
    if payload.get("type").is_none() {
        let event = payload
            .get("event")
            .cloned()
            .filter(Value::is_object)
            .ok_or_else(|| FakeError::control(INJECT, "payload.event (an object) is required"))?;
        state.next_trigger += 1;
        *payload = json!({"token": "fake-verification-token", "team_id": TEAM_ID,
            "api_app_id": APP_ID, "event": event, "type": "event_callback",
            "event_id": format!("Ev{:08}", state.next_trigger), "event_time": now_secs(),
            "authorizations": [{"team_id": TEAM_ID, "user_id": super::BOT_USER_ID, "is_bot": true}]});
    }
    let is_message = payload.pointer("/event/type").and_then(Value::as_str) == Some("message");
    let channel = payload
        .pointer("/event/channel")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let (true, Some(channel), Some(event)) = (is_message, channel, payload.get_mut("event")) {
        state.conversations.store_inbound(&channel, event);
        let ts = event.get("ts").cloned().unwrap_or(Value::Null);
        if let Some(fields) = event.as_object_mut() {
            fields.entry("event_ts").or_insert(ts);
            fields.entry("channel_type").or_insert_with(|| {
                json!(if channel.starts_with('D') {
                    "im"
                } else {
                    "channel"
                })
            });
        }
    }
    Ok(())
}
