//! One WebSocket connection's life: handshake, requests, events, close.
//!
//! The loop is generic over a `Sink` of [`Outbound`] and a `Stream` of [`Inbound`] so unit tests
//! drive it with channels; `ws.rs` adapts axum's socket to these two types. Requests run
//! concurrently (a slow `exec.approval.waitDecision` must not hold up others) and their answers go
//! out as they finish. Every refusal that ends the connection is first answered as an error
//! response, then sent as the close reason, so a client sees why whichever it reads.

use std::sync::Arc;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, Sink, SinkExt, Stream, StreamExt, future::BoxFuture};
use gatehouse_service::Service;
use tokio::sync::oneshot;

use crate::auth::Principal;
use crate::error::Error;
use crate::hub::{REPLAY_EVENTS, Recent, Start, Subscription};
use crate::methods::{CONNECT, Call, decode_params};
use crate::metrics::Transport;
use crate::publish::logged_frames;
use crate::scope::Scope;
use crate::state::{GatewayState, Unauthenticated};
use crate::wire::{
    ConnectParams, ConnectResult, EventsInfo, RawJson, RequestFrame, ResponseFrame, ServerInfo,
};

/// A frame from the client, reduced to what the protocol distinguishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inbound {
    Text(String),
    Binary,
    /// A frame or message over the limit, refused by the socket before it was read whole.
    TooLarge {
        size: usize,
        limit: usize,
    },
    Close,
}

/// A frame to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outbound {
    Text(Arc<str>),
    Close { code: u16, reason: String },
}

/// Most frames written between two flushes: enough to gather a burst into one write, few enough
/// that the socket is read again soon.
const MAX_FRAMES_PER_FLUSH: usize = 32;

/// Longest close reason RFC 6455 allows (125-byte control payload minus the 2-byte code).
const MAX_CLOSE_REASON: usize = 123;

type Answer = (Option<String>, &'static str, Result<RawJson, Error>);

/// Whether the peer may still take a frame when the connection ends: once a write has timed
/// out, the closing flush would only wait out the write timeout again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    /// Writes went through (or the peer left cleanly): flush what is owed, such as a close echo.
    Reading,
    /// A write timed out or failed: nothing more is written.
    Stalled,
}

impl Peer {
    fn after(sent: bool) -> Self {
        if sent { Peer::Reading } else { Peer::Stalled }
    }
}

/// Runs a connection to its end; never returns an error, because there is nobody left to tell.
/// `unauthenticated` is its place among the connections still to send `connect`, given back as
/// soon as `connect` succeeds.
pub(crate) async fn run<Si, St>(
    state: GatewayState,
    unauthenticated: Unauthenticated,
    mut sink: Si,
    mut stream: St,
) where
    Si: Sink<Outbound> + Unpin,
    St: Stream<Item = Inbound> + Unpin,
{
    let _open = state.track_connection();
    let peer = match handshake(&state, unauthenticated, &mut sink, &mut stream).await {
        Ok((principal, subscription)) => {
            serve(&state, principal, subscription, &mut sink, &mut stream).await
        }
        Err(peer) => peer,
    };
    // However the connection ended, the socket may still owe the peer a frame: above all the
    // echo of a close the peer sent, which RFC 6455 §5.5.1 requires (without it the peer sees
    // the TCP connection drop and records 1006). Closing the sink flushes it; bounded, because
    // a peer that stopped reading would otherwise hold this task forever, and skipped when a
    // write has already timed out, so a stalled peer costs one write timeout, not two or three.
    if peer == Peer::Reading {
        let _ = tokio::time::timeout(state.limits().write_timeout, sink.close()).await;
    }
}

/// The most characters of a client's own name `gateway.status` repeats.
const CLIENT_NAME_CHARS: usize = 64;

/// Reads the first frame, which must be a valid `connect`; anything else is refused and closed.
/// The client is subscribed to events before it hears `connect` succeed, so an approval
/// requested right after the handshake already counts it as a surface and reaches it. The
/// connection's unauthenticated place is given back once its first message is in, before the
/// client hears whether it is connected.
async fn handshake<Si, St>(
    state: &GatewayState,
    unauthenticated: Unauthenticated,
    sink: &mut Si,
    stream: &mut St,
) -> Result<(Arc<Principal>, Subscription), Peer>
where
    Si: Sink<Outbound> + Unpin,
    St: Stream<Item = Inbound> + Unpin,
{
    let timeout = state.limits().handshake_timeout;
    let first = tokio::select! {
        biased;
        () = state.shutdown_signal() => {
            return Err(close(state, sink, &Error::ShuttingDown).await);
        }
        next = tokio::time::timeout(timeout, stream.next()) => next,
    };
    // Nothing more is read before `connect` succeeds, and a refusal below ends the connection:
    // the place is given back now, so a peer that does not read its refusal cannot hold it
    // past the handshake timeout.
    drop(unauthenticated);
    let text = match first {
        Err(_) => {
            let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
            let error = Error::HandshakeTimeout { timeout_ms };
            return Err(refuse(state, sink, (None, CONNECT), error).await);
        }
        Ok(None | Some(Inbound::Close)) => return Err(Peer::Reading),
        Ok(Some(Inbound::Binary)) => {
            return Err(refuse(state, sink, (None, CONNECT), binary_refused()).await);
        }
        Ok(Some(Inbound::TooLarge { size, limit })) => {
            let error = Error::FrameTooLarge { size, limit };
            return Err(refuse(state, sink, (None, CONNECT), error).await);
        }
        Ok(Some(Inbound::Text(text))) => text,
    };
    let frame = match RequestFrame::parse(&text) {
        Ok(frame) => frame,
        Err((id, error)) => return Err(refuse(state, sink, (id, CONNECT), error).await),
    };
    if frame.method != CONNECT {
        let error = Error::HandshakeRequired {
            method: frame.method,
        };
        return Err(refuse(state, sink, (Some(frame.id), CONNECT), error).await);
    }
    match connect(state, frame.params).await {
        Ok((principal, subscription, result)) => {
            if answer(state, sink, (Some(frame.id), CONNECT, Ok(result))).await {
                Ok((principal, subscription))
            } else {
                Err(Peer::Stalled)
            }
        }
        Err(error) => Err(refuse(state, sink, (Some(frame.id), CONNECT), error).await),
    }
}

/// Authenticates `connect` params, subscribes to events (with the replay asked for) and builds
/// the answer.
async fn connect(
    state: &GatewayState,
    params: Option<RawJson>,
) -> Result<(Arc<Principal>, Subscription, RawJson), Error> {
    let params: ConnectParams =
        decode_params(params.as_deref()).map_err(|reason| Error::InvalidParams {
            method: CONNECT.to_owned(),
            reason,
        })?;
    let principal = state.authenticate(&params.token)?;
    state.charge(&principal)?;
    // Quoted (`?`): the client names itself, and a newline or escape in its name must not
    // forge a log line.
    tracing::info!(
        token = principal.name(),
        client = ?params.client.name,
        client_version = ?params.client.version,
        "Client connected."
    );
    let hub = state.events();
    let start = match (params.since, params.instance) {
        (None, _) => Start::Live,
        (Some(_), Some(instance)) if instance != hub.instance() => Start::After(0),
        (Some(since), _) => Start::After(since),
    };
    let client: String = params.client.name.chars().take(CLIENT_NAME_CHARS).collect();
    let logged = match (hub.missing_after(start), state.service()) {
        (Some(since), Some(service)) => logged_after(service, since).await,
        _ => Vec::new(),
    };
    let (subscription, replay) =
        hub.subscribe_client(Arc::clone(&principal), client, start, logged);
    let result = ConnectResult {
        scopes: principal
            .scopes()
            .iter()
            .copied()
            .map(Scope::as_str)
            .collect(),
        server: ServerInfo::current(hub.instance(), hub.started_at_ms()),
        events: EventsInfo {
            last_seq: replay.last_seq,
            replayed: replay.replayed,
            complete: replay.complete,
        },
    };
    let result = serde_json::value::to_raw_value(&result).map_err(|error| Error::Internal {
        reason: format!("cannot encode connect result: {error}"),
    })?;
    Ok((principal, subscription, result))
}

/// The shared log's events after `since` that the hub no longer holds. Unreadable, they are
/// left out, and the replay answers `complete: false`, as when they were pruned.
async fn logged_after(service: &Service, since: u64) -> Vec<Recent> {
    match service.logged_approval_events(since, REPLAY_EVENTS).await {
        Ok(events) => logged_frames(&events),
        Err(error) => {
            tracing::warn!(%error, "Could not read the event log for a replay.");
            Vec::new()
        }
    }
}

/// The authenticated phase: requests in, answers and events out, until someone ends it.
async fn serve<Si, St>(
    state: &GatewayState,
    principal: Arc<Principal>,
    mut subscription: Subscription,
    sink: &mut Si,
    stream: &mut St,
) -> Peer
where
    Si: Sink<Outbound> + Unpin,
    St: Stream<Item = Inbound> + Unpin,
{
    let mut in_flight: FuturesUnordered<BoxFuture<'static, Answer>> = FuturesUnordered::new();
    let shutdown = state.shutdown_signal();
    tokio::pin!(shutdown);
    let reason = loop {
        tokio::select! {
            biased;
            dropped = &mut subscription.dropped => {
                break dropped.unwrap_or_else(|_| Error::Internal { reason: "event hub closed".into() });
            }
            () = &mut shutdown => {
                // Finish what the client already asked for, then say goodbye.
                while let Some(done) = in_flight.next().await {
                    if !answer(state, sink, done).await {
                        return Peer::Stalled;
                    }
                }
                break Error::ShuttingDown;
            }
            Some(frame) = subscription.events.recv() => {
                let more = || subscription.events.try_recv().ok().map(Outbound::Text);
                let sending = send_coalesced(sink, Outbound::Text(frame), more);
                match write_unless_dropped(state, &mut subscription.dropped, sending).await {
                    Write::Sent => {}
                    Write::Failed => return Peer::Stalled,
                    Write::Dropped(reason) => break reason,
                }
            }
            Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                let more = || in_flight.next().now_or_never().flatten().map(|done| response(state, done));
                let sending = send_coalesced(sink, response(state, done), more);
                match write_unless_dropped(state, &mut subscription.dropped, sending).await {
                    Write::Sent => {}
                    Write::Failed => return Peer::Stalled,
                    Write::Dropped(reason) => break reason,
                }
            }
            // At the in-flight cap the socket is simply not read: TCP backpressure slows the client.
            inbound = stream.next(), if in_flight.len() < state.limits().max_in_flight => match inbound {
                None | Some(Inbound::Close) => return Peer::Reading,
                Some(Inbound::Binary) => {
                    if !answer(state, sink, (None, "unknown", Err(binary_refused()))).await {
                        return Peer::Stalled;
                    }
                }
                Some(Inbound::TooLarge { size, limit }) => {
                    return refuse(state, sink, (None, "unknown"), Error::FrameTooLarge { size, limit }).await;
                }
                Some(Inbound::Text(text)) => {
                    match start(state, &principal, &text) {
                        Ok(request) => in_flight.push(request),
                        Err(refused) => {
                            if !answer(state, sink, refused).await {
                                return Peer::Stalled;
                            }
                        }
                    }
                }
            },
        }
    };
    close(state, sink, &reason).await
}

/// How a write in the authenticated phase ended.
enum Write {
    Sent,
    /// The peer is gone, or stopped reading for longer than the write timeout.
    Failed,
    /// The hub dropped this subscriber while the write waited: close with the reason.
    Dropped(Error),
}

/// Runs `sending`, giving up after the write timeout or when the hub drops this subscriber: a
/// peer that stopped reading blocks the write, and neither must then hold the connection open.
async fn write_unless_dropped(
    state: &GatewayState,
    dropped: &mut oneshot::Receiver<Error>,
    sending: impl Future<Output = bool>,
) -> Write {
    tokio::select! {
        biased;
        reason = dropped => Write::Dropped(
            reason.unwrap_or_else(|_| Error::Internal { reason: "event hub closed".into() }),
        ),
        sent = tokio::time::timeout(state.limits().write_timeout, sending) => match sent {
            Ok(true) => Write::Sent,
            Ok(false) | Err(_) => Write::Failed,
        },
    }
}

/// Parses a request and starts it, or returns the immediate refusal.
fn start(
    state: &GatewayState,
    principal: &Arc<Principal>,
    text: &str,
) -> Result<BoxFuture<'static, Answer>, Answer> {
    let frame = RequestFrame::parse(text).map_err(|(id, error)| (id, "unknown", Err(error)))?;
    if frame.method == CONNECT {
        return Err((Some(frame.id), CONNECT, Err(Error::AlreadyConnected)));
    }
    let label = state.registry().metric_label(&frame.method);
    if let Err(error) = state.charge(principal) {
        return Err((Some(frame.id), label, Err(error)));
    }
    let call = Call {
        state: state.clone(),
        caller: Arc::clone(principal),
    };
    let running = state.registry().dispatch(call, &frame.method, frame.params);
    let id = frame.id;
    Ok(running
        .map(move |outcome| (Some(id), label, outcome))
        .boxed())
}

fn binary_refused() -> Error {
    Error::InvalidRequest {
        reason: "binary frames are not part of the protocol; send JSON text".into(),
    }
}

/// Sends one response and counts it; false when the peer is gone or stopped reading for longer
/// than the write timeout.
async fn answer<Si>(state: &GatewayState, sink: &mut Si, done: Answer) -> bool
where
    Si: Sink<Outbound> + Unpin,
{
    let sending = sink.send(response(state, done));
    matches!(
        tokio::time::timeout(state.limits().write_timeout, sending).await,
        Ok(Ok(()))
    )
}

/// A finished request's response frame, counted in the metrics.
fn response(state: &GatewayState, (id, label, outcome): Answer) -> Outbound {
    let code = outcome.as_ref().map_or_else(Error::code, |_| "ok");
    state.metrics().record_request(Transport::Ws, label, code);
    Outbound::Text(ResponseFrame::new(id.as_deref(), &outcome).to_text().into())
}

/// Writes `first` and whatever else is ready at once (up to [`MAX_FRAMES_PER_FLUSH`]), then
/// flushes once: under load a burst of events or answers leaves in one write, not one each.
/// False when the peer is gone.
async fn send_coalesced<Si>(
    sink: &mut Si,
    first: Outbound,
    mut more: impl FnMut() -> Option<Outbound>,
) -> bool
where
    Si: Sink<Outbound> + Unpin,
{
    if sink.feed(first).await.is_err() {
        return false;
    }
    for _ in 1..MAX_FRAMES_PER_FLUSH {
        let Some(frame) = more() else { break };
        if sink.feed(frame).await.is_err() {
            return false;
        }
    }
    sink.flush().await.is_ok()
}

/// Answers with `error`, then closes with it.
async fn refuse<Si>(
    state: &GatewayState,
    sink: &mut Si,
    (id, label): (Option<String>, &'static str),
    error: Error,
) -> Peer
where
    Si: Sink<Outbound> + Unpin,
{
    // The code only: a params error can quote what the client sent, which may be a secret.
    tracing::info!(code = error.code(), "Refusing WebSocket connection.");
    let code = error.close_code();
    let reason = close_reason(&error);
    if !answer(state, sink, (id, label, Err(error))).await {
        return Peer::Stalled;
    }
    let closing = sink.send(Outbound::Close { code, reason });
    let sent = tokio::time::timeout(state.limits().write_timeout, closing).await;
    Peer::after(matches!(sent, Ok(Ok(()))))
}

/// Sends a close with `error`; bounded by the write timeout, since the peer may have stopped
/// reading.
async fn close<Si>(state: &GatewayState, sink: &mut Si, error: &Error) -> Peer
where
    Si: Sink<Outbound> + Unpin,
{
    let closing = sink.send(Outbound::Close {
        code: error.close_code(),
        reason: close_reason(error),
    });
    let sent = tokio::time::timeout(state.limits().write_timeout, closing).await;
    Peer::after(matches!(sent, Ok(Ok(()))))
}

/// `code: message`, cut at a character boundary to fit a close frame.
fn close_reason(error: &Error) -> String {
    let mut reason = format!("{}: {error}", error.code());
    if reason.len() > MAX_CLOSE_REASON {
        let mut end = MAX_CLOSE_REASON;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    reason
}

#[cfg(test)]
mod tests;
