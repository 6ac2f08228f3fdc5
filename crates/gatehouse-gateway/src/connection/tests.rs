//! The connection loop driven through channels, without sockets.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Sink, sink, stream};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use super::{Inbound, Outbound, run};
use crate::methods::{Call, Registry};
use crate::scope::{Access, Scope};
use crate::settings::{GatewaySettings, Limits, Secret, TokenSpec};
use crate::state::GatewayState;
use crate::wire::NoParams;

const ADMIN: &str = "admin-secret-0123456789";
const AGENT: &str = "agent-secret-0123456789";

fn settings(limits: Limits) -> GatewaySettings {
    let token = |name: &str, secret: &str, scope| TokenSpec {
        name: name.into(),
        secret: Secret::new(secret),
        scopes: vec![scope],
        agents: None,
    };
    GatewaySettings {
        tokens: vec![
            token("admin", ADMIN, Scope::Admin),
            token("agent", AGENT, Scope::Agent),
        ],
        limits,
    }
}

struct Client {
    to_server: mpsc::Sender<Inbound>,
    from_server: mpsc::Receiver<Outbound>,
    task: tokio::task::JoinHandle<()>,
    /// Set once the connection asked its sink to close (the closing flush).
    closed: Arc<AtomicBool>,
}

/// A sink that notes whether it was asked to close.
struct CloseSpy<S> {
    inner: S,
    closed: Arc<AtomicBool>,
}

impl<S: Sink<Outbound> + Unpin> Sink<Outbound> for CloseSpy<S> {
    type Error = S::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Pin::new(&mut self.inner).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Outbound) -> Result<(), S::Error> {
        Pin::new(&mut self.inner).start_send(item)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.closed.store(true, Ordering::SeqCst);
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

impl Client {
    fn spawn(state: &GatewayState, outbound_capacity: usize) -> Self {
        let (to_server, inbound) = mpsc::channel(16);
        let (outbound, from_server) = mpsc::channel(outbound_capacity);
        let closed = Arc::new(AtomicBool::new(false));
        let sink = CloseSpy {
            inner: Box::pin(sink::unfold(
                outbound,
                |tx: mpsc::Sender<Outbound>, item| async move {
                    tx.send(item).await.map(|()| tx).map_err(|_| ())
                },
            )),
            closed: Arc::clone(&closed),
        };
        let stream = Box::pin(stream::unfold(
            inbound,
            |mut rx: mpsc::Receiver<Inbound>| async move { rx.recv().await.map(|item| (item, rx)) },
        ));
        let place = state.admit_unauthenticated().unwrap();
        let task = tokio::spawn(run(state.clone(), place, sink, stream));
        Self {
            to_server,
            from_server,
            task,
            closed,
        }
    }

    async fn send(&self, frame: Value) {
        self.to_server
            .send(Inbound::Text(frame.to_string()))
            .await
            .unwrap();
    }

    async fn recv(&mut self) -> Outbound {
        tokio::time::timeout(Duration::from_secs(5), self.from_server.recv())
            .await
            .expect("no frame within 5 s")
            .expect("connection ended without a frame")
    }

    async fn recv_json(&mut self) -> Value {
        match self.recv().await {
            Outbound::Text(text) => serde_json::from_str(&text).unwrap(),
            other => panic!("expected a text frame, got {other:?}"),
        }
    }

    async fn connect(&mut self, token: &str) -> Value {
        self.send(json!({"type":"req","id":"c","method":"connect",
                         "params":{"token": token, "client":{"name":"test","version":"1"}}}))
            .await;
        self.recv_json().await
    }

    async fn expect_close(&mut self, code: u16, reason_prefix: &str) {
        match self.recv().await {
            Outbound::Close { code: got, reason } => {
                assert_eq!(got, code, "{reason}");
                assert!(reason.starts_with(reason_prefix), "{reason}");
            }
            other => panic!("expected a close, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn connects_then_answers_requests_with_their_id() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    let mut client = Client::spawn(&state, 16);
    let connected = client.connect(AGENT).await;
    let server = json!({"version": env!("CARGO_PKG_VERSION"),
                        "instance": state.events().instance(),
                        "startedAtMs": state.events().started_at_ms()});
    assert_eq!(
        connected,
        json!({"type":"res","id":"c","ok":true,
               "payload":{"scopes":["agent"],"server":server,
                          "events":{"lastSeq":0,"replayed":0,"complete":true}}})
    );
    client
        .send(json!({"type":"req","id":"s1","method":"gateway.status"}))
        .await;
    let status = client.recv_json().await;
    assert_eq!(
        (status["id"].as_str(), status["ok"].as_bool()),
        (Some("s1"), Some(true))
    );
    assert_eq!(status["payload"]["connections"], 1);
}

#[tokio::test]
async fn denies_a_request_before_connect_and_closes_with_policy_violation() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    let mut client = Client::spawn(&state, 16);
    client
        .send(json!({"type":"req","id":"1","method":"gateway.status"}))
        .await;
    let refused = client.recv_json().await;
    assert_eq!(refused["id"], "1");
    assert_eq!(refused["error"]["code"], "handshake_required");
    client.expect_close(1008, "handshake_required: ").await;
    client.task.await.unwrap();
}

#[tokio::test]
async fn denies_an_unknown_token_and_closes() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    let mut client = Client::spawn(&state, 16);
    let refused = client.connect("wrong-secret-0123456789").await;
    assert_eq!(refused["error"]["code"], "unauthorized");
    client.expect_close(1008, "unauthorized: ").await;
}

#[tokio::test]
async fn gives_back_its_unauthenticated_place_once_connected_or_refused() {
    let limits = Limits {
        max_unauthenticated: 1,
        ..Limits::default()
    };
    let state = GatewayState::new(&settings(limits)).unwrap();
    let mut connected = Client::spawn(&state, 16);
    let full = state.admit_unauthenticated().unwrap_err();
    assert_eq!(full.code(), "handshake_limit");
    connected.connect(ADMIN).await;
    let mut refused = Client::spawn(&state, 16);
    assert!(state.admit_unauthenticated().is_err());
    refused.connect("wrong-secret-0123456789").await;
    refused.expect_close(1008, "unauthorized: ").await;
    refused.task.await.unwrap();
    assert!(state.admit_unauthenticated().is_ok());
}

#[tokio::test]
async fn refuses_a_frame_the_socket_found_too_large_before_and_after_connect() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    for connected in [false, true] {
        let mut client = Client::spawn(&state, 16);
        if connected {
            client.connect(AGENT).await;
        }
        let too_large = Inbound::TooLarge {
            size: 20_000,
            limit: 16_384,
        };
        client.to_server.send(too_large).await.unwrap();
        let refused = client.recv_json().await;
        assert_eq!(refused["id"], Value::Null);
        assert_eq!(refused["error"]["code"], "frame_too_large");
        assert_eq!(
            refused["error"]["message"],
            "frame of 20000 bytes exceeds the limit of 16384 bytes"
        );
        client.expect_close(1009, "frame_too_large: ").await;
        client.task.await.unwrap();
    }
}

#[tokio::test]
async fn denies_a_second_connect_but_keeps_the_connection() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    let mut client = Client::spawn(&state, 16);
    client.connect(ADMIN).await;
    assert_eq!(
        client.connect(ADMIN).await["error"]["code"],
        "already_connected"
    );
    client
        .send(json!({"type":"req","id":"2","method":"gateway.tokens"}))
        .await;
    assert_eq!(client.recv_json().await["ok"], true);
}

#[tokio::test]
async fn closes_when_no_connect_arrives_in_time() {
    let limits = Limits {
        handshake_timeout: Duration::from_millis(50),
        ..Limits::default()
    };
    let state = GatewayState::new(&settings(limits)).unwrap();
    let mut client = Client::spawn(&state, 16);
    assert_eq!(
        client.recv_json().await["error"]["code"],
        "handshake_timeout"
    );
    client.expect_close(1008, "handshake_timeout: ").await;
}

#[tokio::test]
async fn drops_a_slow_consumer_with_a_reason_and_never_blocks_the_publisher() {
    let limits = Limits {
        event_queue: 2,
        ..Limits::default()
    };
    let state = GatewayState::new(&settings(limits)).unwrap();
    // Room for exactly the connect answer: after it the sink blocks until the test reads.
    let mut client = Client::spawn(&state, 1);
    client.connect(ADMIN).await;
    for i in 0..10 {
        state
            .events()
            .publish("tick", &json!({"i": i}), Access::AnyScope);
    }
    let mut seqs = Vec::new();
    let reason = loop {
        match client.recv().await {
            Outbound::Text(text) => {
                let frame: Value = serde_json::from_str(&text).unwrap();
                seqs.push(frame["seq"].as_u64().unwrap());
            }
            Outbound::Close { code, reason } => {
                assert_eq!(code, 1008);
                break reason;
            }
        }
    };
    assert!(reason.starts_with("slow_consumer: "), "{reason}");
    assert!(
        seqs.len() < 10 && seqs.windows(2).all(|w| w[0] < w[1]),
        "{seqs:?}"
    );
    client.task.await.unwrap();
}

/// Transport review: a client that stopped reading blocked the connection in its write, where
/// it never saw the hub drop it, so the task and its buffers lived until the peer left. The
/// write timeout ends it (a peer that never reads cannot take the slow-consumer close either;
/// one that reads slowly gets that close at its next read, which the race with the hub's drop
/// in `write_unless_dropped` makes prompt).
#[tokio::test]
async fn ends_a_connection_whose_peer_stopped_reading() {
    let limits = Limits {
        event_queue: 2,
        write_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let state = GatewayState::new(&settings(limits)).unwrap();
    // Room for one frame after the connect answer; the test never reads again.
    let mut client = Client::spawn(&state, 1);
    client.connect(ADMIN).await;
    let publish = |range: std::ops::Range<u32>| {
        for i in range {
            state
                .events()
                .publish("tick", &json!({"i": i}), Access::AnyScope);
        }
    };
    // Two events (the queue holds two): the second blocks the connection in its write; then
    // enough to overflow the queue, so the hub drops it while it waits there.
    publish(0..2);
    tokio::time::sleep(Duration::from_millis(50)).await;
    publish(2..10);
    tokio::time::timeout(Duration::from_secs(5), &mut client.task)
        .await
        .expect("the connection outlived a peer that stopped reading")
        .unwrap();
}

/// A client that sends requests but never reads their answers is let go as well, after one
/// write timeout: the closing flush would wait on the same stalled write (transport review: it
/// held the connection for the timeout twice), so once a write has timed out nothing more is
/// written.
#[tokio::test]
async fn ends_a_connection_whose_peer_never_reads_its_answers() {
    let limits = Limits {
        write_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let state = GatewayState::new(&settings(limits)).unwrap();
    let mut client = Client::spawn(&state, 1);
    client.connect(ADMIN).await;
    for i in 0..4 {
        client
            .send(json!({"type":"req","id": format!("r{i}"),"method":"gateway.status","params":{}}))
            .await;
    }
    tokio::time::timeout(Duration::from_secs(5), &mut client.task)
        .await
        .expect("the connection outlived a peer that never read its answers")
        .unwrap();
    assert!(
        !client.closed.load(Ordering::SeqCst),
        "the closing flush waited on the stalled peer"
    );
}

/// A peer that leaves cleanly is still owed the closing flush (the echo of its close).
#[tokio::test]
async fn flushes_on_close_for_a_peer_that_left_cleanly() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    let mut client = Client::spawn(&state, 4);
    client.connect(ADMIN).await;
    client.to_server.send(Inbound::Close).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), &mut client.task)
        .await
        .expect("the connection outlived its peer's close")
        .unwrap();
    assert!(client.closed.load(Ordering::SeqCst));
}

/// A connected agent with one `test.slow` request running: it has started and waits for
/// `release`.
async fn connected_with_slow_request(limits: Limits) -> (GatewayState, Client, Arc<Notify>) {
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let mut registry = Registry::standard();
    let (on_start, on_release) = (Arc::clone(&started), Arc::clone(&release));
    registry.register(
        "test.slow",
        Access::AnyScope,
        move |_: Call, _: NoParams| {
            let (on_start, on_release) = (Arc::clone(&on_start), Arc::clone(&on_release));
            async move {
                on_start.notify_one();
                on_release.notified().await;
                Ok(json!("done"))
            }
        },
    );
    let state = GatewayState::with_registry(&settings(limits), registry).unwrap();
    let mut client = Client::spawn(&state, 16);
    client.connect(AGENT).await;
    client
        .send(json!({"type":"req","id":"slow","method":"test.slow"}))
        .await;
    started.notified().await;
    (state, client, release)
}

#[tokio::test]
async fn finishes_in_flight_requests_on_shutdown_then_says_going_away() {
    let (state, mut client, release) = connected_with_slow_request(Limits::default()).await;
    state.begin_shutdown();
    release.notify_one();
    let finished = client.recv_json().await;
    assert_eq!(
        (finished["id"].as_str(), finished["payload"].as_str()),
        (Some("slow"), Some("done"))
    );
    client.expect_close(1001, "shutting_down: ").await;
    assert!(state.connections_closed(Duration::from_secs(5)).await);
}

#[tokio::test]
async fn stops_reading_at_the_in_flight_cap_until_a_request_finishes() {
    let limits = Limits {
        max_in_flight: 1,
        ..Limits::default()
    };
    let (_state, mut client, release) = connected_with_slow_request(limits).await;
    client
        .send(json!({"type":"req","id":"quick","method":"gateway.status"}))
        .await;
    let early = tokio::time::timeout(Duration::from_millis(200), client.from_server.recv()).await;
    assert!(early.is_err(), "answered past the cap: {early:?}");
    release.notify_one();
    assert_eq!(client.recv_json().await["id"], "slow");
    assert_eq!(client.recv_json().await["id"], "quick");
}

#[tokio::test]
async fn answers_a_rate_limited_request_with_its_own_code_and_keeps_the_connection() {
    let limits = Limits {
        rate: Some(crate::settings::RateLimit {
            burst: 2,
            per_second: 1,
        }),
        ..Limits::default()
    };
    let state = GatewayState::new(&settings(limits)).unwrap();
    let mut client = Client::spawn(&state, 16);
    client.connect(AGENT).await;
    client
        .send(json!({"type":"req","id":"1","method":"gateway.status"}))
        .await;
    assert_eq!(client.recv_json().await["ok"], true);
    client
        .send(json!({"type":"req","id":"2","method":"gateway.status"}))
        .await;
    let limited = client.recv_json().await;
    assert_eq!(
        (limited["id"].as_str(), limited["error"]["code"].as_str()),
        (Some("2"), Some("rate_limited"))
    );
    assert!(!client.task.is_finished());
}

/// What reached a [`RecordingSink`]: frames, and the flushes that would write them out.
#[derive(Debug, PartialEq, Eq)]
enum Written {
    Frame,
    Flush,
}

/// A sink that notes every frame and every flush after a frame, to see how writes are grouped.
struct RecordingSink {
    written: mpsc::UnboundedSender<Written>,
    unflushed: bool,
}

impl futures_util::Sink<Outbound> for RecordingSink {
    type Error = ();

    fn poll_ready(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn start_send(mut self: std::pin::Pin<&mut Self>, _: Outbound) -> Result<(), ()> {
        self.unflushed = true;
        self.written.send(Written::Frame).map_err(drop)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ()>> {
        if std::mem::take(&mut self.unflushed) {
            let _ = self.written.send(Written::Flush);
        }
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Connects an admin on a recording sink; returns the inbound side and what was written.
async fn connected_recording(
    state: &GatewayState,
) -> (mpsc::Sender<Inbound>, mpsc::UnboundedReceiver<Written>) {
    let (to_server, inbound) = mpsc::channel(16);
    let (written, mut writes) = mpsc::unbounded_channel();
    let sink = RecordingSink {
        written,
        unflushed: false,
    };
    let stream = Box::pin(stream::unfold(
        inbound,
        |mut rx: mpsc::Receiver<Inbound>| async move { rx.recv().await.map(|item| (item, rx)) },
    ));
    let place = state.admit_unauthenticated().unwrap();
    tokio::spawn(run(state.clone(), place, sink, stream));
    let connect = json!({"type":"req","id":"c","method":"connect",
                         "params":{"token": ADMIN, "client":{"name":"test","version":"1"}}});
    to_server
        .send(Inbound::Text(connect.to_string()))
        .await
        .unwrap();
    assert_eq!(writes.recv().await, Some(Written::Frame));
    assert_eq!(writes.recv().await, Some(Written::Flush));
    (to_server, writes)
}

/// Everything written up to and including the next flush.
async fn until_flush(writes: &mut mpsc::UnboundedReceiver<Written>) -> Vec<Written> {
    let mut seen = Vec::new();
    while seen.last() != Some(&Written::Flush) {
        let next = tokio::time::timeout(Duration::from_secs(5), writes.recv()).await;
        seen.push(
            next.expect("a flush within 5 s")
                .expect("the connection ended"),
        );
    }
    seen
}

#[tokio::test]
async fn a_burst_of_events_goes_out_in_one_flush() {
    let state = GatewayState::new(&settings(Limits::default())).unwrap();
    let (_to_server, mut writes) = connected_recording(&state).await;
    // Published without yielding, so the connection finds all three queued at once.
    for i in 0..3 {
        state
            .events()
            .publish("tick", &json!({"i": i}), Access::AnyScope);
    }
    use Written::{Flush, Frame};
    assert_eq!(until_flush(&mut writes).await, [Frame, Frame, Frame, Flush]);
}

#[tokio::test]
async fn answers_that_finish_together_go_out_in_one_flush() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let started = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let mut registry = Registry::standard();
    let (on_start, on_release) = (Arc::clone(&started), Arc::clone(&release));
    registry.register(
        "test.held",
        Access::AnyScope,
        move |_: Call, _: NoParams| {
            let (on_start, on_release) = (Arc::clone(&on_start), Arc::clone(&on_release));
            async move {
                // Counted and registered in the same poll, so a count of two means both wait.
                on_start.fetch_add(1, Ordering::SeqCst);
                on_release.notified().await;
                Ok(json!("done"))
            }
        },
    );
    let state = GatewayState::with_registry(&settings(Limits::default()), registry).unwrap();
    let (to_server, mut writes) = connected_recording(&state).await;
    for id in ["a", "b"] {
        let request = json!({"type":"req","id": id,"method":"test.held"});
        to_server
            .send(Inbound::Text(request.to_string()))
            .await
            .unwrap();
    }
    while started.load(Ordering::SeqCst) < 2 {
        tokio::task::yield_now().await;
    }
    release.notify_waiters();
    use Written::{Flush, Frame};
    assert_eq!(until_flush(&mut writes).await, [Frame, Frame, Flush]);
}
