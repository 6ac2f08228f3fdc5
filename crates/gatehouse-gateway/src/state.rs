//! The shared state behind every route and connection.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::auth::{Authenticator, Principal};
use crate::chat::ChatRuntime;
use crate::error::Error;
use crate::exec::{ExecServices, spawn_forwarder};
use crate::hub::EventHub;
use crate::methods::Registry;
use crate::metrics::Metrics;
use crate::rate::RateLimiter;
use crate::settings::{GatewaySettings, Limits};

/// A cheap handle to the gateway: clone it into handlers, tasks and method calls.
#[derive(Debug, Clone)]
pub struct GatewayState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    auth: Authenticator,
    registry: Registry,
    hub: EventHub,
    rate: RateLimiter,
    metrics: Arc<Metrics>,
    limits: Limits,
    started: Instant,
    shutdown: watch::Sender<bool>,
    connections: watch::Sender<usize>,
    /// One permit per WebSocket that may be open without having authenticated.
    unauthenticated: Arc<Semaphore>,
    exec: Option<ExecServices>,
    chat: OnceLock<Arc<ChatRuntime>>,
}

impl GatewayState {
    /// Builds the gateway with the standard methods; refuses unusable settings.
    pub fn new(settings: &GatewaySettings) -> Result<Self, Error> {
        Self::with_registry(settings, Registry::standard())
    }

    /// Builds the gateway with a caller-assembled method registry.
    pub fn with_registry(settings: &GatewaySettings, registry: Registry) -> Result<Self, Error> {
        Self::build(settings, registry, None)
    }

    /// Builds the gateway with every method, approvals and execution included, and starts
    /// re-publishing approval events on its hub. Must run inside a tokio runtime.
    pub fn with_exec(settings: &GatewaySettings, exec: ExecServices) -> Result<Self, Error> {
        let state = Self::build(settings, Registry::with_exec(), Some(exec.clone()))?;
        spawn_forwarder(&exec, state.events().clone());
        Ok(state)
    }

    fn build(
        settings: &GatewaySettings,
        registry: Registry,
        exec: Option<ExecServices>,
    ) -> Result<Self, Error> {
        settings.limits.validate()?;
        let metrics = Arc::new(Metrics::default());
        let inner = Inner {
            auth: Authenticator::new(&settings.tokens)?,
            registry,
            hub: EventHub::new(settings.limits.event_queue, Arc::clone(&metrics)),
            rate: RateLimiter::new(settings.limits.rate),
            metrics,
            limits: settings.limits.clone(),
            started: Instant::now(),
            shutdown: watch::Sender::new(false),
            connections: watch::Sender::new(0),
            unauthenticated: Arc::new(Semaphore::new(
                settings
                    .limits
                    .max_unauthenticated
                    .min(Semaphore::MAX_PERMITS),
            )),
            exec,
            chat: OnceLock::new(),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// The hub that approval and execution events are published on.
    pub fn events(&self) -> &EventHub {
        &self.inner.hub
    }

    /// The exec services, when the gateway was built [`with_exec`](Self::with_exec).
    pub(crate) fn exec(&self) -> Option<&ExecServices> {
        self.inner.exec.as_ref()
    }

    /// The chat runtime, once [`start_chat`](Self::start_chat) ran.
    pub(crate) fn chat(&self) -> Option<&Arc<ChatRuntime>> {
        self.inner.chat.get()
    }

    pub(crate) fn set_chat(&self, chat: Arc<ChatRuntime>) -> Result<(), Error> {
        self.inner
            .chat
            .set(chat)
            .map_err(|_| Error::InvalidSettings {
                reason: "chat approvals were already started".into(),
            })
    }

    /// Starts a graceful shutdown: calls waiting for a person answer `shutting_down` at once,
    /// connections stop reading, finish their other in-flight requests and close with "going
    /// away"; [`serve`](crate::serve) also stops accepting and bounds it all by
    /// `Limits::shutdown_grace`. Idempotent.
    pub fn begin_shutdown(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// Whether [`begin_shutdown`](Self::begin_shutdown) was called.
    pub fn is_shutting_down(&self) -> bool {
        *self.inner.shutdown.borrow()
    }

    /// Resolves once shutdown has begun; usable from any task.
    pub(crate) fn shutdown_signal(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.inner.shutdown.subscribe();
        async move {
            let _ = receiver.wait_for(|down| *down).await;
        }
    }

    /// Waits until every WebSocket connection has closed, or `timeout` passes; returns whether
    /// they all closed.
    pub async fn connections_closed(&self, timeout: Duration) -> bool {
        let mut receiver = self.inner.connections.subscribe();
        tokio::time::timeout(timeout, receiver.wait_for(|open| *open == 0))
            .await
            .is_ok_and(|outcome| outcome.is_ok())
    }

    /// Counts a WebSocket connection as open until the guard drops.
    pub(crate) fn track_connection(&self) -> ConnectionGuard {
        self.inner.connections.send_modify(|open| *open += 1);
        ConnectionGuard {
            state: self.clone(),
        }
    }

    /// Open WebSocket connections right now.
    pub(crate) fn open_connections(&self) -> usize {
        *self.inner.connections.borrow()
    }

    /// Takes one of the [`Limits::max_unauthenticated`] places for a WebSocket that has not
    /// sent `connect` yet; `handshake_limit` when none is free.
    pub(crate) fn admit_unauthenticated(&self) -> Result<Unauthenticated, Error> {
        Arc::clone(&self.inner.unauthenticated)
            .try_acquire_owned()
            .map(|permit| Unauthenticated { _permit: permit })
            .map_err(|_| Error::HandshakeLimit {
                limit: self.inner.limits.max_unauthenticated,
            })
    }

    pub(crate) fn authenticate(&self, token: &str) -> Result<Arc<Principal>, Error> {
        self.inner.auth.authenticate(token)
    }

    pub(crate) fn principals(&self) -> impl Iterator<Item = &Principal> {
        self.inner.auth.principals()
    }

    /// Charges one request to `principal`'s budget.
    pub(crate) fn charge(&self, principal: &Principal) -> Result<(), Error> {
        self.inner.rate.check(principal.name(), Instant::now())
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    pub(crate) fn uptime(&self) -> Duration {
        self.inner.started.elapsed()
    }
}

/// Decrements the open-connection count when a connection ends, however it ends.
#[derive(Debug)]
pub(crate) struct ConnectionGuard {
    state: GatewayState,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.state
            .inner
            .connections
            .send_modify(|open| *open = open.saturating_sub(1));
    }
}

/// A WebSocket's place among those not yet authenticated; the place is free again when this
/// drops, which the connection does once `connect` succeeded, or when it ends.
#[derive(Debug)]
pub(crate) struct Unauthenticated {
    _permit: OwnedSemaphorePermit,
}
