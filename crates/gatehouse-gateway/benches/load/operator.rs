//! The operator: one WebSocket client that answers `allow-once` the moment each
//! `exec.approval.requested` event arrives, as an approval surface would.

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::ADMIN;

/// Connects, handshakes and resolves every approval announced until the socket closes.
pub(crate) async fn operate(url: String) {
    let (socket, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
        .await
        .unwrap();
    let (mut sink, mut stream) = socket.split();
    let connect = json!({"type": "req", "id": "c", "method": "connect",
        "params": {"token": ADMIN, "client": {"name": "bench", "version": "0"}}});
    sink.send(Message::text(connect.to_string())).await.unwrap();
    let mut next = 0u64;
    while let Some(Ok(message)) = stream.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let frame: Value = serde_json::from_str(&text).unwrap();
        if frame["event"] == "exec.approval.requested" {
            next += 1;
            let resolve = json!({"type": "req", "id": next.to_string(),
                "method": "exec.approval.resolve",
                "params": {"id": frame["payload"]["id"], "decision": "allow-once"}});
            sink.send(Message::text(resolve.to_string())).await.unwrap();
        }
    }
}
