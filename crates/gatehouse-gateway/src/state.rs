//! The shared state behind every route and connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_hooks::IntegrationSettings;
use gatehouse_service::Service;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::auth::{Authenticator, Principal};
use crate::error::Error;
use crate::hub::EventHub;
use crate::methods::Registry;
use crate::metrics::{Metrics, StoreMetrics};
use crate::rate::RateLimiter;
use crate::settings::{GatewaySettings, Limits};

/// A cheap handle to the gateway: clone it into handlers, tasks and method calls.
#[derive(Debug, Clone)]
pub struct GatewayState {
    inner: Arc<Inner>,
}

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
    /// The application the exec methods call; `None` for the bare protocol.
    service: Option<Service>,
    /// The approvals store's batch times for `GET /metrics`, when it keeps them.
    store_metrics: Option<StoreMetrics>,
    /// What `POST /hooks/claude-code` runs its calls as (agent, session keys, card route).
    claude_code_hook: IntegrationSettings,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("registry", &self.registry)
            .field("limits", &self.limits)
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

/// A gateway being put together: its hub exists before the service that publishes on it, and
/// its settings are checked when it is built.
pub struct GatewayBuilder {
    settings: GatewaySettings,
    registry: Registry,
    hub: EventHub,
    metrics: Arc<Metrics>,
    store_metrics: Option<StoreMetrics>,
    claude_code_hook: IntegrationSettings,
}

impl std::fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayBuilder").finish_non_exhaustive()
    }
}

impl GatewayState {
    /// Builds the gateway with the standard methods; refuses unusable settings.
    pub fn new(settings: &GatewaySettings) -> Result<Self, Error> {
        Self::builder(settings).build()
    }

    /// Builds the gateway with a caller-assembled method registry.
    pub fn with_registry(settings: &GatewaySettings, registry: Registry) -> Result<Self, Error> {
        Self::builder(settings).registry(registry).build()
    }

    /// Starts putting a gateway together. Hand [`GatewayBuilder::events`] to the service as
    /// its publisher, then [`GatewayBuilder::with_service`]; the settings are checked then.
    pub fn builder(settings: &GatewaySettings) -> GatewayBuilder {
        let metrics = Arc::new(Metrics::default());
        GatewayBuilder {
            settings: settings.clone(),
            registry: Registry::standard(),
            hub: EventHub::new(settings.limits.event_queue, Arc::clone(&metrics)),
            metrics,
            store_metrics: None,
            claude_code_hook: IntegrationSettings::default(),
        }
    }

    /// The hub that approval and execution events are published on.
    pub fn events(&self) -> &EventHub {
        &self.inner.hub
    }

    /// The service, when the gateway was built [`with_service`](GatewayBuilder::with_service).
    pub(crate) fn service(&self) -> Option<&Service> {
        self.inner.service.as_ref()
    }

    /// The store's own series for `GET /metrics`, if it has any.
    pub(crate) fn store_metrics(&self) -> Option<&StoreMetrics> {
        self.inner.store_metrics.as_ref()
    }

    /// Starts a graceful shutdown: calls waiting for a person answer `shutting_down` at once,
    /// connections stop reading, finish their other in-flight requests and close with "going
    /// away"; [`serve`](crate::serve) also stops accepting and bounds it all by
    /// `Limits::shutdown_grace`. Idempotent.
    pub fn begin_shutdown(&self) {
        if let Some(service) = self.service() {
            service.begin_shutdown();
        }
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

    /// The settings of Claude Code's HTTP hook.
    pub(crate) fn claude_code_hook(&self) -> &IntegrationSettings {
        &self.inner.claude_code_hook
    }
}

impl GatewayBuilder {
    /// The hub approval and execution events are published on: the service's
    /// [`Publisher`](gatehouse_service::Publisher).
    pub fn events(&self) -> &EventHub {
        &self.hub
    }

    /// Serves `registry` instead of the standard methods.
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Reports the approvals store's write batches on `GET /metrics`.
    pub fn store_metrics(mut self, metrics: StoreMetrics) -> Self {
        self.store_metrics = Some(metrics);
        self
    }

    /// The agent, session keys, card route and approval timeout of `POST /hooks/claude-code`
    /// (`integrations.claudeCode` in the config); the defaults otherwise.
    pub fn claude_code_hook(mut self, settings: IntegrationSettings) -> Self {
        self.claude_code_hook = settings;
        self
    }

    /// The bare protocol: `gateway.*` and whatever [`registry`](Self::registry) added;
    /// refuses unusable settings.
    pub fn build(self) -> Result<GatewayState, Error> {
        self.finish(None)
    }

    /// The full gateway: every method, calling `service`, which should have been started with
    /// [`events`](Self::events) as its publisher; refuses unusable settings.
    pub fn with_service(mut self, service: Service) -> Result<GatewayState, Error> {
        self.registry = Registry::with_exec();
        self.finish(Some(service))
    }

    fn finish(self, service: Option<Service>) -> Result<GatewayState, Error> {
        let settings = self.settings;
        settings.limits.validate()?;
        let inner = Inner {
            auth: Authenticator::new(&settings.tokens)?,
            registry: self.registry,
            hub: self.hub,
            rate: RateLimiter::new(settings.limits.rate),
            metrics: self.metrics,
            started: Instant::now(),
            shutdown: watch::Sender::new(false),
            connections: watch::Sender::new(0),
            unauthenticated: Arc::new(Semaphore::new(
                settings
                    .limits
                    .max_unauthenticated
                    .min(Semaphore::MAX_PERMITS),
            )),
            limits: settings.limits,
            service,
            store_metrics: self.store_metrics,
            claude_code_hook: self.claude_code_hook,
        };
        Ok(GatewayState {
            inner: Arc::new(inner),
        })
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
