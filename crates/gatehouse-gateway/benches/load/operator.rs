//! The operator: one WebSocket client that answers `allow-once` the moment each
//! `exec.approval.requested` event arrives, as an approval surface would. It notes when it saw
//! each event and when its answer was confirmed, so the report can split the latency in stages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::{FutureExt as _, SinkExt as _, StreamExt as _};
use serde::Deserialize;
use serde_json::json;
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

/// A log with room for `approvals` entries. Growing it mid-run would rehash every entry while
/// the operator holds it, between two events: at 100,000 entries that stalled the operator, and
/// every approval waiting for its answer, for milliseconds.
pub(crate) fn log(approvals: usize) -> Log {
    Arc::new(Mutex::new(HashMap::with_capacity(approvals)))
}

/// The parts of a frame the operator reads; the rest of the payload is skipped, not built.
#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow, default)]
    id: Option<&'a str>,
    #[serde(borrow, default)]
    event: Option<&'a str>,
    #[serde(borrow, default)]
    payload: Option<Payload<'a>>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow, default)]
    id: Option<&'a str>,
}

/// Connects, handshakes and resolves every approval announced until the socket closes. Frames
/// that arrived together are answered together, with one flush, as a busy client would.
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
    let mut asked: HashMap<u64, String> = HashMap::new();
    while let Some(Ok(message)) = stream.next().await {
        let mut ready = Some(message);
        while let Some(message) = ready {
            let now = Instant::now();
            if let Message::Text(text) = &message {
                let frame: Frame<'_> = serde_json::from_str(text).unwrap();
                let id = frame.payload.and_then(|payload| payload.id);
                match (frame.event, id, frame.id) {
                    (Some("exec.approval.requested"), Some(id), _) => {
                        next += 1;
                        let resolve = format!(
                            r#"{{"type":"req","id":"{next}","method":"exec.approval.resolve","params":{{"id":"{id}","decision":"allow-once"}}}}"#
                        );
                        sink.feed(Message::text(resolve)).await.unwrap();
                        asked.insert(next, id.to_owned());
                        let seen = Seen {
                            event: now,
                            resolved: None,
                        };
                        log.lock().unwrap().insert(id.to_owned(), seen);
                    }
                    (None, _, Some(request)) => {
                        let answered = request.parse().ok().and_then(|n| asked.remove(&n));
                        if let Some(id) = answered
                            && let Some(seen) = log.lock().unwrap().get_mut(&id)
                        {
                            seen.resolved = Some(now);
                        }
                    }
                    _ => {}
                }
            }
            ready = stream.next().now_or_never().flatten().and_then(Result::ok);
        }
        sink.flush().await.unwrap();
    }
}
