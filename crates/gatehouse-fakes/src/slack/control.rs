//! Slack controls: `POST /_fake/inject` (a Socket Mode envelope `{"type","payload"}`, sent over
//! the socket or signed to the Request URL; or `{"replay": id}`, a delivery sent again byte for
//! byte, to `replay_to` if given), `POST /_fake/disconnect`, `GET|POST /_fake/config`,
//! `GET /_fake/envelopes`, and the `response_url` endpoint payloads point at.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::delivery::{self, Signature};
use super::envelopes::EnvelopeType;
use super::inbound::{INJECT, hydrate_command, hydrate_event, hydrate_interactive};
use super::{APP_ID, Slack, TEAM_ID};
use crate::answer::CallSlot;
use crate::control::parse_control;
use crate::error::FakeError;

/// How an injected envelope reaches the app.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(super) enum Mode {
    /// Over the Socket Mode WebSocket.
    Socket,
    /// Signed POST to the configured Request URL.
    Http,
}

/// An inbound event to deliver.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Inject {
    #[serde(rename = "type")]
    kind: Option<EnvelopeType>,
    payload: Option<Value>,
    mode: Option<Mode>,
    accepts_response_payload: Option<bool>,
    #[serde(default)]
    signature: Signature,
    #[serde(default)]
    timestamp_offset_secs: i64,
    replay: Option<String>,
    /// Where a replay goes instead of the delivery's own Request URL: a captured request
    /// sent to another replica of the app.
    replay_to: Option<String>,
}

/// Delivers an envelope (see the module doc); HTTP deliveries answer with the app's response.
pub(super) async fn inject(
    State(slack): State<Arc<Slack>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let inject: Inject = parse_control(INJECT, &body)?;
    if let Some(id) = inject.replay {
        let previous = slack.lock().http.find(&id);
        let mut previous = previous
            .ok_or_else(|| FakeError::control(INJECT, format!("no delivery {id} to replay")))?;
        if let Some(url) = inject.replay_to {
            previous.url = url;
        }
        let answer = delivery::send(&slack.http_client, &previous).await;
        return Ok(Json(
            json!({"ok": true, "mode": "http", "replayed": true, "result": answer}),
        ));
    }
    let kind = inject.kind.ok_or_else(|| {
        FakeError::control(
            INJECT,
            "type is required: events_api, interactive or slash_commands",
        )
    })?;
    let mut payload = inject
        .payload
        .ok_or_else(|| FakeError::control(INJECT, "payload is required"))?;
    if !payload.is_object() {
        return Err(FakeError::control(INJECT, "payload must be an object"));
    }
    let prepared = {
        let mut state = slack.lock();
        match kind {
            EnvelopeType::Interactive => {
                hydrate_interactive(&mut state, &slack.base(), &mut payload)?;
            }
            EnvelopeType::SlashCommands => {
                hydrate_command(&mut state, &slack.base(), &mut payload)?
            }
            EnvelopeType::EventsApi => hydrate_event(&mut state, &mut payload)?,
        }
        let default_mode = if state.http.request_url.is_some() {
            Mode::Http
        } else {
            Mode::Socket
        };
        if inject.mode.unwrap_or(default_mode) == Mode::Socket {
            let accepts = inject
                .accepts_response_payload
                .unwrap_or(kind == EnvelopeType::SlashCommands);
            let (envelope_id, delivered) = state.socket.enqueue(kind, payload.clone(), accepts);
            return Ok(Json(
                json!({"ok": true, "mode": "socket", "envelope_id": envelope_id,
                "delivered": delivered, "payload": payload}),
            ));
        }
        state
            .http
            .prepare(
                kind,
                &payload,
                inject.signature,
                inject.timestamp_offset_secs,
            )
            .map_err(|reason| FakeError::control(INJECT, reason))?
    };
    let answer = delivery::send(&slack.http_client, &prepared).await;
    Ok(Json(
        json!({"ok": true, "mode": "http", "result": answer, "payload": payload}),
    ))
}

/// How to end the Socket Mode connections.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Disconnect {
    /// `reason` of Slack's disconnect message (default `refresh_requested`).
    reason: Option<String>,
    /// Drop the connection without the disconnect message.
    #[serde(default)]
    abrupt: bool,
    /// Hold new connections back this long.
    #[serde(default)]
    reconnect_delay_ms: u64,
}

/// Disconnects every Socket Mode connection; unacked envelopes are redelivered on reconnect.
pub(super) async fn disconnect(
    State(slack): State<Arc<Slack>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let how: Disconnect = if body.is_empty() {
        Disconnect::default()
    } else {
        parse_control("/_fake/disconnect", &body)?
    };
    let mut state = slack.lock();
    state.reconnect_not_before =
        Some(Instant::now() + Duration::from_millis(how.reconnect_delay_ms));
    let reason = how.reason.as_deref().unwrap_or("refresh_requested");
    let closed = state.socket.disconnect(reason, how.abrupt);
    Ok(Json(json!({"ok": true, "closed": closed})))
}

/// Every envelope, with whether and how it was acked.
pub(super) async fn envelopes(State(slack): State<Arc<Slack>>) -> Json<Value> {
    Json(json!({"ok": true, "envelopes": slack.lock().socket.list()}))
}

/// A `response_url` POST from the app: recorded, answered like Slack does.
pub(super) async fn response_url(
    State(slack): State<Arc<Slack>>,
    Path(id): Path<String>,
    slot: CallSlot,
    body: Bytes,
) -> Json<Value> {
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    slot.record(
        &slack.calls,
        "response_url",
        format!("/response/{id}"),
        None,
        parsed,
    );
    Json(json!({"ok": true}))
}

/// Partial update of the HTTP-mode configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConfigPatch {
    request_url: Option<String>,
    signing_secret: Option<String>,
}

/// Changes the configuration; fields left out keep their value, `""` clears one.
pub(super) async fn configure(
    State(slack): State<Arc<Slack>>,
    body: Bytes,
) -> Result<Json<Value>, FakeError> {
    let patch: ConfigPatch = parse_control("/_fake/config", &body)?;
    {
        let mut state = slack.lock();
        if let Some(url) = patch.request_url {
            state.http.request_url = Some(url).filter(|u| !u.is_empty());
        }
        if let Some(secret) = patch.signing_secret {
            state.http.signing_secret = Some(secret).filter(|s| !s.is_empty());
        }
    }
    Ok(config(State(slack)).await)
}

/// The current configuration (the secret itself is not echoed).
pub(super) async fn config(State(slack): State<Arc<Slack>>) -> Json<Value> {
    let state = slack.lock();
    Json(json!({"ok": true, "request_url": state.http.request_url,
        "signing_secret_set": state.http.signing_secret.is_some(),
        "team_id": TEAM_ID, "app_id": APP_ID, "bot_user_id": super::BOT_USER_ID}))
}

/// `GET /_fake/messages`: every message the fake stores, by conversation, with the DM of each user.
pub(super) async fn messages(State(slack): State<Arc<Slack>>) -> Json<Value> {
    let mut answer = slack.lock().conversations.history();
    answer["ok"] = json!(true);
    Json(answer)
}
