//! The gateway WebSocket: HELLO, IDENTIFY→READY, heartbeats, RESUME, and Discord's close codes
//! for protocol errors.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::Discord;
use crate::ws::{self, Outbound};

/// Upgrades `/gateway` to a gateway connection.
pub(super) async fn connect(
    State(discord): State<Arc<Discord>>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let hold = discord.lock().reconnect_not_before;
    if let Some(until) = hold {
        tokio::time::sleep_until(until).await;
    }
    upgrade.on_upgrade(move |socket| run(socket, discord))
}

async fn run(socket: WebSocket, discord: Arc<Discord>) {
    let (tx, rx) = unbounded_channel();
    let (conn, interval) = {
        let mut state = discord.lock();
        (
            state.sessions.connection(),
            state.sessions.heartbeat_interval_ms,
        )
    };
    let hello = json!({"op": 10, "s": null, "t": null, "d": {"heartbeat_interval": interval}});
    let _ = tx.send(Outbound::Frame(hello));
    let shutdown = discord.shutdown.clone();
    ws::pump(socket, rx, shutdown, |text| {
        receive(&discord, conn, &tx, text)
    })
    .await;
    discord.lock().sessions.detach(conn);
}

/// A close with one of Discord's gateway close codes.
fn close(code: u16, reason: &'static str) -> Outbound {
    Outbound::Close {
        notice: None,
        code,
        reason,
    }
}

fn op_name(op: u64) -> &'static str {
    match op {
        1 => "HEARTBEAT",
        2 => "IDENTIFY",
        3 => "PRESENCE_UPDATE",
        4 => "VOICE_STATE_UPDATE",
        6 => "RESUME",
        8 => "REQUEST_GUILD_MEMBERS",
        _ => "UNKNOWN",
    }
}

/// Handles one client frame; answers go through `tx` so they keep their order.
fn receive(discord: &Discord, conn: u64, tx: &UnboundedSender<Outbound>, text: &str) {
    let Ok(mut frame) = serde_json::from_str::<Value>(text) else {
        let _ = tx.send(close(4002, "Decode error"));
        return;
    };
    let op = frame.get("op").and_then(Value::as_u64).unwrap_or(u64::MAX);
    let data = frame.get("d").cloned().unwrap_or(Value::Null);
    let has_token = data
        .get("token")
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());
    if let Some(token) = frame.pointer_mut("/d/token") {
        *token = json!("<redacted>");
    }
    discord.calls.record(
        format!("gateway.{}", op_name(op)),
        "/gateway",
        frame.clone(),
    );
    let mut state = discord.lock();
    let attached = state.sessions.is_attached(conn);
    let answer = match op {
        1 => Some(Outbound::Frame(json!({"op": 11}))),
        2 if attached => Some(close(4005, "Already authenticated")),
        2 | 6 if !has_token => Some(close(4004, "Authentication failed")),
        2 => match data.get("intents").and_then(Value::as_u64) {
            Some(intents) => {
                state
                    .sessions
                    .identify((conn, tx.clone()), intents, &discord.gateway_url);
                None
            }
            None => Some(close(4013, "Invalid intent(s)")),
        },
        6 => {
            let session = data.get("session_id").and_then(Value::as_str).unwrap_or("");
            let seq = data.get("seq").and_then(Value::as_u64).unwrap_or(0);
            let resumed = state.sessions.resume((conn, tx.clone()), session, seq);
            (!resumed).then(|| Outbound::Frame(json!({"op": 9, "d": false, "s": null, "t": null})))
        }
        _ if !attached => Some(close(4003, "Not authenticated")),
        3 | 4 | 8 => None,
        _ => Some(close(4001, "Unknown opcode")),
    };
    if let Some(answer) = answer {
        let _ = tx.send(answer);
    }
}
