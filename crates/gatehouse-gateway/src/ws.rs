//! `GET /ws`: opens the WebSocket and adapts it to the transport-independent connection loop.
//!
//! Until `connect` succeeds a socket belongs to a stranger, so what it can cost is bounded twice:
//! it must find one of the [`Limits::max_unauthenticated`] places before it upgrades, and its
//! first message may carry at most [`FIRST_MESSAGE_BYTES`]. The frame limit of authenticated
//! clients is enforced by tungstenite at each frame's header, before the payload is read.
//!
//! [`Limits::max_unauthenticated`]: crate::Limits::max_unauthenticated

mod first_message;
mod upgrade;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt, future};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::CapacityError;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::connection::{self, Inbound, Outbound};
use crate::error::Error;
use crate::http::error_response;
use crate::methods::CONNECT;
use crate::metrics::Transport;
use crate::state::{GatewayState, Unauthenticated};

use self::first_message::{FirstMessageLimit, FirstMessageTooLarge};
use self::upgrade::Upgrade;

/// The most a client may send before `connect` (or [`Limits::max_frame_bytes`], if smaller).
/// A `connect` request is a few hundred bytes: a token (generated ones are 43 characters), a
/// client name and version, and a replay position. 16 KiB leaves room for tokens and names
/// many times that long, while a thousand strangers waiting out the handshake timeout cost the
/// gateway 16 MiB at most, where the frame limit would let each of them send 1 MiB.
///
/// [`Limits::max_frame_bytes`]: crate::Limits::max_frame_bytes
const FIRST_MESSAGE_BYTES: usize = 16 * 1024;

/// Read buffer per connection. tungstenite zero-fills its read buffer up to this size before
/// every read, so its 128 KiB default cost a 128 KiB `memset` per frame received (3 % of the
/// gateway's CPU under load); protocol frames are a few hundred bytes, and larger ones are still
/// read, over several reads.
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Checks the upgrade and takes a place among the unauthenticated connections, then switches
/// protocols; refusals are plain HTTP answers with the error JSON.
pub(crate) async fn upgrade(State(state): State<GatewayState>, request: Request) -> Response {
    if state.is_shutting_down() {
        return error_response(Error::ShuttingDown);
    }
    let (mut parts, _body) = request.into_parts();
    let upgrade = match Upgrade::from_request(&mut parts) {
        Ok(upgrade) => upgrade,
        Err(refused) => return refused.into_response(),
    };
    let unauthenticated = match state.admit_unauthenticated() {
        Ok(place) => place,
        Err(error) => {
            state
                .metrics()
                .record_request(Transport::Ws, CONNECT, error.code());
            return error_response(error);
        }
    };
    upgrade.accept(move |io| serve(state, unauthenticated, io))
}

async fn serve(state: GatewayState, unauthenticated: Unauthenticated, io: TokioIo<Upgraded>) {
    let max_frame_bytes = state.limits().max_frame_bytes;
    let first = FIRST_MESSAGE_BYTES.min(max_frame_bytes);
    let io = FirstMessageLimit::new(io, first);
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_frame_size(Some(max_frame_bytes))
        .max_message_size(Some(max_frame_bytes));
    let socket = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
    let (sink, stream) = socket.split();
    let sink = sink.with(|frame| future::ready(Ok::<_, WsError>(to_message(frame))));
    let stream = stream.filter_map(|message| future::ready(from_message(message)));
    connection::run(state, unauthenticated, Box::pin(sink), Box::pin(stream)).await;
}

fn to_message(frame: Outbound) -> Message {
    match frame {
        Outbound::Text(text) => Message::text(&*text),
        Outbound::Close { code, reason } => Message::Close(Some(CloseFrame {
            code: code.into(),
            reason: reason.into(),
        })),
    }
}

/// Pings and pongs are the socket's business; a frame over a limit is the protocol's; any other
/// read error ends the connection like a close.
fn from_message(message: Result<Message, WsError>) -> Option<Inbound> {
    let error = match message {
        Ok(Message::Text(text)) => return Some(Inbound::Text(text.as_str().to_owned())),
        Ok(Message::Binary(_)) => return Some(Inbound::Binary),
        Ok(Message::Close(_)) => return Some(Inbound::Close),
        Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => return None,
        Err(error) => error,
    };
    match error {
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            Some(Inbound::TooLarge {
                size,
                limit: max_size,
            })
        }
        WsError::Io(error) => match error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<FirstMessageTooLarge>())
        {
            Some(&FirstMessageTooLarge { size, limit }) => Some(Inbound::TooLarge { size, limit }),
            None => {
                tracing::debug!(error = %error, "WebSocket read failed.");
                Some(Inbound::Close)
            }
        },
        error => {
            tracing::debug!(error = %error, "WebSocket read failed.");
            Some(Inbound::Close)
        }
    }
}
