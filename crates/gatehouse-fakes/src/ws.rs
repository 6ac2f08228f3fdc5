//! The WebSocket loop both socket fakes share: frames out in order, text in, and a clean stop
//! when the fake shuts down.

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::server::Shutdown;

/// What a connection task is told to do; the platform state holds the sending side.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// Send this JSON frame.
    Frame(Value),
    /// Send `notice` (if any), then a close frame with this code, then end.
    Close {
        /// A last frame, such as Slack's `{"type":"disconnect"}`.
        notice: Option<Value>,
        /// WebSocket close code (Discord's 4000-range codes, or 1000).
        code: u16,
        /// Close reason text.
        reason: &'static str,
    },
    /// End without a close frame, like a dropped TCP connection.
    Drop,
}

/// Runs one connection until either side ends it. Client text (binary is passed on as lossy
/// text, which the platforms then reject as undecodable) goes to `inbound`.
pub(crate) async fn pump(
    socket: WebSocket,
    mut outbound: UnboundedReceiver<Outbound>,
    mut shutdown: Shutdown,
    mut inbound: impl FnMut(&str),
) {
    let (mut sink, mut stream) = socket.split();
    loop {
        tokio::select! {
            () = shutdown.wait() => {
                let _ = sink.send(close(1001, "fake stopping")).await;
                break;
            }
            next = outbound.recv() => match next {
                Some(Outbound::Frame(frame)) => {
                    if sink.send(Message::Text(frame.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Some(Outbound::Close { notice, code, reason }) => {
                    if let Some(notice) = notice {
                        let _ = sink.send(Message::Text(notice.to_string().into())).await;
                    }
                    let _ = sink.send(close(code, reason)).await;
                    break;
                }
                Some(Outbound::Drop) | None => break,
            },
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Text(text))) => inbound(text.as_str()),
                Some(Ok(Message::Binary(bytes))) => inbound(&String::from_utf8_lossy(&bytes)),
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
        }
    }
}

fn close(code: u16, reason: &'static str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}
