//! The router and the serve loop with graceful shutdown.

use std::future::Future;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;

use crate::state::GatewayState;
use crate::{http, ui, ws};

/// Every route the gateway serves; tests mount it on a real listener or call it directly.
pub fn router(state: GatewayState) -> Router {
    let body_limit = state.limits().max_body_bytes;
    Router::new()
        .route("/ws", get(ws::upgrade))
        .route(
            "/rpc",
            post(http::rpc).layer(DefaultBodyLimit::max(body_limit)),
        )
        .route("/healthz", get(http::healthz))
        .route("/metrics", get(http::metrics))
        .route("/", get(ui::index))
        .route("/app.js", get(ui::app_js))
        .route("/app.css", get(ui::app_css))
        .with_state(state)
}

/// Serves until `shutdown` resolves, then stops accepting, lets HTTP requests and WebSocket
/// in-flight requests finish (WebSockets close with 1001 "going away"), and returns once every
/// connection is closed or `Limits::shutdown_grace` has passed.
pub async fn serve<F>(
    listener: TcpListener,
    state: GatewayState,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    serve_with_routes(listener, state, Router::new(), shutdown).await
}

/// [`serve`], with `extra` routes beside the gateway's own: endpoints a chat adapter serves on
/// the gateway's listener (Slack's signed Request URL in HTTP mode), built by the binary so this
/// crate never depends on an adapter. A path the gateway already serves panics at start.
pub async fn serve_with_routes<F>(
    listener: TcpListener,
    state: GatewayState,
    extra: Router,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let on_shutdown = state.clone();
    // Frames are small and interactive; with Nagle's algorithm a small event written behind an
    // unacknowledged one waits for the peer's delayed ACK (up to 40 ms).
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::warn!(error = %error, "Cannot set TCP_NODELAY; serving anyway.");
        }
    });
    axum::serve(listener, router(state.clone()).merge(extra))
        .with_graceful_shutdown(async move {
            shutdown.await;
            tracing::info!("Shutting down: no new connections; finishing in-flight requests.");
            on_shutdown.begin_shutdown();
        })
        .await?;
    // Upgraded WebSockets outlive axum's own graceful shutdown; wait for them here.
    if !state
        .connections_closed(state.limits().shutdown_grace)
        .await
    {
        tracing::warn!("Shutdown grace period passed with WebSocket connections still open.");
    }
    Ok(())
}
