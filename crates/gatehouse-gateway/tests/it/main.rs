//! Router-level tests over real sockets on 127.0.0.1.

// Shared helpers: start a gateway on a free port, WebSocket and HTTP clients.
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic in a test helper is a failed test"
)]
mod support;

// The WebSocket handshake: connect, refusals before it, bad tokens, scope refusals.
mod handshake;
// `POST /rpc`: bearer authentication, scopes and error statuses.
mod http_rpc;
// Frame, body and rate limits, each with its own error.
mod limits;
// Event fan-out, audience filtering and slow consumers.
mod events;
// Graceful shutdown: in-flight requests finish, sockets close with going-away.
mod shutdown;
// `/healthz`, `/metrics` and the embedded Control UI.
mod ops;
