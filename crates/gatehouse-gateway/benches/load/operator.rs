//! The operator: one WebSocket client that answers `allow-once` the moment each
//! `exec.approval.requested` event arrives, as an approval surface would. It notes when it saw
//! each event and when its answer was confirmed, so the report can split the latency in stages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::ADMIN;

/// What the operator saw of one approval.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    /// When its `exec.approval.requested` event arrived.
    pub(crate) event: Instant,
    /// When the answer to its `exec.approval.resolve` arrived.
    pub(crate) resolved: Option<Instant>,
}

/// Approval id → what the operator saw of it.
pub(crate) type Log = Arc<Mutex<HashMap<String, Seen>>>;

/// Connects, handshakes and resolves every approval announced until the socket closes.
pub(crate) async fn operate(url: String, log: Log) {
    // A lean client: tungstenite zero-fills its read buffer (128 KiB by default) on every read.
    let config = WebSocketConfig::default().read_buffer_size(8 * 1024);
    let (socket, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .unwrap();
    let (mut sink, mut stream) = socket.split();
    let connect = json!({"type": "req", "id": "c", "method": "connect",
        "params": {"token": ADMIN, "client": {"name": "bench", "version": "0"}}});
    sink.send(Message::text(connect.to_string())).await.unwrap();
    let mut next = 0u64;
    let mut asked: HashMap<String, String> = HashMap::new();
    while let Some(Ok(message)) = stream.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let now = Instant::now();
        let frame: Value = serde_json::from_str(&text).unwrap();
        if frame["event"] == "exec.approval.requested" {
            let Some(id) = frame["payload"]["id"].as_str() else {
                continue;
            };
            next += 1;
            let resolve = json!({"type": "req", "id": next.to_string(),
                "method": "exec.approval.resolve",
                "params": {"id": id, "decision": "allow-once"}});
            sink.send(Message::text(resolve.to_string())).await.unwrap();
            asked.insert(next.to_string(), id.to_owned());
            let seen = Seen {
                event: now,
                resolved: None,
            };
            log.lock().unwrap().insert(id.to_owned(), seen);
        } else if frame["type"] == "res"
            && let Some(id) = frame["id"].as_str().and_then(|req| asked.remove(req))
            && let Some(seen) = log.lock().unwrap().get_mut(&id)
        {
            seen.resolved = Some(now);
        }
    }
}
