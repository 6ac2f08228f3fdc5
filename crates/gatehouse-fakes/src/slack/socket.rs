//! The Socket Mode WebSocket at `/link`: hello, envelopes out, acks in (recorded under calls).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;

use super::Slack;
use super::envelopes::BadAck;
use crate::ws;

/// Upgrades `/link?ticket=…`; a ticket works once, like Slack's.
pub(super) async fn connect(
    State(slack): State<Arc<Slack>>,
    Query(query): Query<HashMap<String, String>>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let ticket = query.get("ticket").map_or("", String::as_str);
    let (valid, hold) = {
        let mut state = slack.lock();
        (state.socket.redeem(ticket), state.reconnect_not_before)
    };
    if !valid {
        slack
            .calls
            .record("socket.connect_refused", "/link", json!({"ticket": ticket}));
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"ok": false, "error": "invalid_ticket"})),
        )
            .into_response();
    }
    if let Some(until) = hold {
        tokio::time::sleep_until(until).await;
    }
    upgrade.on_upgrade(move |socket| run(socket, slack))
}

async fn run(socket: WebSocket, slack: Arc<Slack>) {
    let (tx, rx) = unbounded_channel();
    let conn = slack.lock().socket.attach(tx);
    let shutdown = slack.shutdown.clone();
    ws::pump(socket, rx, shutdown, |text| receive(&slack, text)).await;
    slack.lock().socket.detach(conn);
}

/// Records an ack (or why it was refused) under `/_fake/calls`.
fn receive(slack: &Slack, text: &str) {
    let frame: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let verdict = slack.lock().socket.ack(&frame);
    let (method, body) = match verdict {
        Ok(()) => ("socket.ack", frame),
        Err(reason) => {
            let reason = match reason {
                BadAck::Malformed => "not an ack: no envelope_id",
                BadAck::Unknown => "unknown envelope_id",
                BadAck::Duplicate => "envelope already acked",
            };
            (
                "socket.invalid_ack",
                json!({"frame": text, "reason": reason}),
            )
        }
    };
    slack.calls.record(method, "/link", body);
}
