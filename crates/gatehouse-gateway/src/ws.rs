//! `GET /ws`: adapts axum's WebSocket to the transport-independent connection loop.

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt, future};

use crate::connection::{self, Inbound, Outbound};
use crate::error::Error;
use crate::http::error_response;
use crate::state::GatewayState;

/// Protocol-level cap, a memory backstop well above the frame limit: frames between the two get
/// the protocol's own `frame_too_large` answer instead of a bare socket error.
fn backstop(max_frame_bytes: usize) -> usize {
    max_frame_bytes.saturating_mul(4).saturating_add(64 * 1024)
}

/// Read buffer per connection. tungstenite zero-fills its read buffer up to this size before
/// every read, so its 128 KiB default cost a 128 KiB `memset` per frame received (3 % of the
/// gateway's CPU under load); protocol frames are a few hundred bytes, and larger ones are still
/// read, over several reads.
const READ_BUFFER_BYTES: usize = 8 * 1024;

pub(crate) async fn upgrade(State(state): State<GatewayState>, ws: WebSocketUpgrade) -> Response {
    if state.is_shutting_down() {
        return error_response(Error::ShuttingDown);
    }
    let cap = backstop(state.limits().max_frame_bytes);
    ws.max_message_size(cap)
        .max_frame_size(cap)
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_upgrade(move |socket| serve(state, socket))
        .into_response()
}

async fn serve(state: GatewayState, socket: WebSocket) {
    let (sink, stream) = socket.split();
    let sink = sink.with(|frame| future::ready(Ok::<_, axum::Error>(to_message(frame))));
    let stream = stream.filter_map(|message| future::ready(from_message(message)));
    connection::run(state, Box::pin(sink), Box::pin(stream)).await;
}

fn to_message(frame: Outbound) -> Message {
    match frame {
        Outbound::Text(text) => Message::text(&*text),
        Outbound::Close { code, reason } => Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })),
    }
}

/// Pings and pongs are the socket's business; a read error ends the connection like a close.
fn from_message(message: Result<Message, axum::Error>) -> Option<Inbound> {
    match message {
        Ok(Message::Text(text)) => Some(Inbound::Text(text.as_str().to_owned())),
        Ok(Message::Binary(_)) => Some(Inbound::Binary),
        Ok(Message::Close(_)) => Some(Inbound::Close),
        Ok(Message::Ping(_) | Message::Pong(_)) => None,
        Err(error) => {
            tracing::debug!(error = %error, "WebSocket read failed.");
            Some(Inbound::Close)
        }
    }
}
