//! The Gatehouse server: WebSocket (`/ws`) and HTTP (`POST /rpc`) JSON-RPC, token authentication
//! with scopes, an event hub, `/healthz`, `/metrics` and the embedded Control UI. It is the
//! transport only: every use case is `gatehouse-service`'s, which the `methods/` modules call
//! after reading params, and whose inputs, records and errors they convert by hand.
//!
//! **Invariants.**
//! - Nothing runs before authentication: a WebSocket's first request must be `connect`, an HTTP
//!   request must carry `Authorization: Bearer`; tokens are compared in constant time. What a
//!   stranger can make the gateway hold is bounded: an HTTP body is not read before the token is
//!   checked, a WebSocket's first message is 16 KiB at most, and only
//!   [`Limits::max_unauthenticated`] sockets may wait to authenticate at once.
//! - Every method declares its required scope where it is registered, and every refusal has a
//!   stable code ([`Error::code`], mapped from the service's errors in [`Error::service`]); the
//!   wire shapes live only in `wire/`.
//! - Publishing an event never waits for a client: a connection whose queue overflows is closed
//!   with `slow_consumer`, and `seq` increases by one per event across the whole gateway.
//! - Secrets are never logged; [`Secret`]'s `Debug` is redacted.
//! - A stop is bounded: calls waiting for a person answer `shutting_down` at once (their approvals
//!   stay pending for the next start to cancel), and once [`Limits::shutdown_grace`] has passed
//!   every connection still open is cut and [`serve`] returns. A WebSocket task still finishing
//!   a request it had started (a long `system.run`) ends when its runtime is dropped, which the
//!   binary does at once.
//!
//! **Entry points.** Build a [`GatewayState`] from [`GatewaySettings`] (the binary maps the config
//! file into them): [`GatewayState::builder`], whose [`GatewayBuilder::events`] hub the
//! service publishes on, then [`GatewayBuilder::with_service`] for the full server;
//! [`GatewayState::new`] for the bare protocol. Then [`serve`] it, or mount [`router`] yourself.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use gatehouse_gateway::{GatewaySettings, GatewayState, Limits, Scope, Secret, TokenSpec, serve};
//!
//! let settings = GatewaySettings {
//!     tokens: vec![TokenSpec {
//!         name: "admin".into(),
//!         secret: Secret::new("a-long-random-secret-value"),
//!         scopes: vec![Scope::Admin],
//!         agents: None,
//!     }],
//!     limits: Limits::default(),
//! };
//! let state = GatewayState::new(&settings)?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:18790").await?;
//! serve(listener, state, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(())
//! # }
//! ```

mod auth;
mod configured_limits;
mod connection;
mod error;
mod hooks;
mod http;
mod hub;
mod methods;
mod metrics;
mod publish;
mod rate;
mod scope;
mod server;
mod settings;
mod severable;
mod state;
mod ui;
mod wire;
mod ws;

pub use auth::Principal;
pub use configured_limits::configured_limits;
pub use error::Error;
pub use hub::EventHub;
pub use methods::{Call, Registry};
pub use metrics::{StoreBatches, StoreMetrics};
pub use scope::{Access, Scope};
pub use server::{router, serve, serve_with_routes};
pub use settings::{GatewaySettings, Limits, MIN_TOKEN_CHARS, RateLimit, Secret, TokenSpec};
pub use state::{GatewayBuilder, GatewayState};
