//! Binding, serving and stopping a fake: what every platform shares.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::middleware::from_fn_with_state;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::answer::{AnswerTap, record_answers};
use crate::calls::{Call, CallLog};
use crate::conn::{ConnCut, CutListener};
use crate::error::FakeError;

/// A running fake. Dropping it stops the server and every open WebSocket, so a test that
/// panics cannot leave a port serving.
#[derive(Debug)]
pub struct FakeHandle {
    /// The bound address (useful when asked for port 0).
    pub addr: SocketAddr,
    /// What to point the platform client at (see each platform's `spawn`).
    pub base_url: String,
    calls: Arc<CallLog>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl FakeHandle {
    /// The calls received so far, the same list `GET /_fake/calls` serves.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.snapshot()
    }

    /// Every call of `method` so far, in arrival order.
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        self.calls
            .snapshot()
            .into_iter()
            .filter(|c| c.method == method)
            .collect()
    }

    /// Every call that addressed `chat` (as logged in [`Call::chat`]), in arrival order: for
    /// per-chat send rates with [`crate::max_calls_within`].
    pub fn calls_in_chat(&self, chat: &str) -> Vec<Call> {
        self.calls
            .snapshot()
            .into_iter()
            .filter(|c| c.chat.as_deref() == Some(chat))
            .collect()
    }

    /// Waits until `count` calls of `method` arrived (polling every 20 ms) and returns all of
    /// them, so tests need no sleeps.
    pub async fn wait_for_calls(
        &self,
        method: &str,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<Call>, FakeError> {
        let deadline = Instant::now() + timeout;
        loop {
            let calls = self.calls_of(method);
            if calls.len() >= count {
                return Ok(calls);
            }
            if Instant::now() >= deadline {
                return Err(FakeError::CallsTimedOut {
                    method: method.to_owned(),
                    count,
                    seen: calls.len(),
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// POSTs JSON to one of this fake's control endpoints (`/_fake/inject`, `/_fake/faults`,
    /// …) and returns the answer; a non-2xx answer is an error carrying the fake's reason.
    pub async fn control(&self, path: &str, body: &Value) -> Result<Value, FakeError> {
        let transport = |source| FakeError::ControlTransport {
            path: path.to_owned(),
            source,
        };
        let response = reqwest::Client::new()
            .post(format!("http://{}{path}", self.addr))
            .json(body)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status();
        let text = response.text().await.map_err(transport)?;
        if !status.is_success() {
            return Err(FakeError::ControlRefused {
                path: path.to_owned(),
                status: status.as_u16(),
                body: text,
            });
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Stops accepting, closes WebSockets and waits for the server task to end.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let _ = self.task.await;
    }
}

/// A clonable "stop now" signal for long-lived connection tasks.
#[derive(Clone, Debug)]
pub(crate) struct Shutdown(watch::Receiver<bool>);

/// A new stop signal: sending `true` (or dropping the sender) stops every holder.
pub(crate) fn shutdown_signal() -> (watch::Sender<bool>, Shutdown) {
    let (sender, receiver) = watch::channel(false);
    (sender, Shutdown(receiver))
}

impl Shutdown {
    /// Resolves once the fake is stopping (or its handle was dropped).
    pub(crate) async fn wait(&mut self) {
        loop {
            if *self.0.borrow_and_update() {
                return;
            }
            if self.0.changed().await.is_err() {
                return;
            }
        }
    }
}

/// What a platform needs to know to build its router.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    /// The real bound address.
    pub(crate) addr: SocketAddr,
    /// Signal for WebSocket loops.
    pub(crate) shutdown: Shutdown,
}

/// Binds `addr`, builds the platform router and serves it until the handle stops it. Every
/// route runs inside the answer layer, on connections a fault can cut.
pub(crate) async fn serve(
    addr: SocketAddr,
    calls: Arc<CallLog>,
    base_path: &str,
    router: impl FnOnce(Bound) -> Router,
) -> Result<FakeHandle, FakeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| FakeError::Bind { addr, source })?;
    let addr = listener.local_addr().map_err(FakeError::LocalAddr)?;
    let (shutdown, signal) = shutdown_signal();
    let app = router(Bound {
        addr,
        shutdown: signal.clone(),
    });
    let tap = AnswerTap {
        calls: Arc::clone(&calls),
        shutdown: signal.clone(),
    };
    let app = app
        .layer(from_fn_with_state(tap, record_answers))
        .into_make_service_with_connect_info::<ConnCut>();
    let mut stop = signal;
    let task = tokio::spawn(async move {
        let served = axum::serve(CutListener(listener), app)
            .with_graceful_shutdown(async move { stop.wait().await })
            .await;
        if let Err(error) = served {
            tracing::warn!(%error, "Fake server stopped with an error.");
        }
    });
    Ok(FakeHandle {
        addr,
        base_url: format!("http://{addr}{base_path}"),
        calls,
        shutdown,
        task,
    })
}
