//! The router and the serve loop with graceful shutdown, bounded by `Limits::shutdown_grace`.

use std::future::Future;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;
use tokio::time::Instant;

use crate::severable::Severable;
use crate::state::GatewayState;
use crate::{hooks, http, ui, ws};

/// Every route the gateway serves; tests mount it on a real listener or call it directly.
pub fn router(state: GatewayState) -> Router {
    let body_limit = state.limits().max_body_bytes;
    Router::new()
        .route("/ws", get(ws::upgrade))
        .route(
            "/rpc",
            post(http::rpc).layer(DefaultBodyLimit::max(body_limit)),
        )
        // Reads its body itself, up to the hook input limit, after authenticating.
        .route("/hooks/claude-code", post(hooks::claude_code))
        .route("/healthz", get(http::healthz))
        .route("/metrics", get(http::metrics))
        .route("/", get(ui::index))
        .route("/app.js", get(ui::app_js))
        .route("/app.css", get(ui::app_css))
        .with_state(state)
}

/// Serves until `shutdown` resolves, then stops accepting and gives open connections
/// `Limits::shutdown_grace` to finish: calls waiting for a person answer `shutting_down` at
/// once, other HTTP requests and WebSocket in-flight requests finish (WebSockets then close with
/// 1001 "going away"). Connections still open when the grace runs out are dropped, and `serve`
/// returns then at the latest.
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
///
/// Shutdown also begins when [`GatewayState::begin_shutdown`] is called directly.
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
    let begun = state.shutdown_signal();
    // Frames are small and interactive; with Nagle's algorithm a small event written behind an
    // unacknowledged one waits for the peer's delayed ACK (up to 40 ms).
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::warn!(error = %error, "Cannot set TCP_NODELAY; serving anyway.");
        }
    });
    let (listener, severer) = Severable::new(listener);
    let serving = axum::serve(listener, router(state.clone()).merge(extra))
        .with_graceful_shutdown(async move {
            tokio::select! {
                () = shutdown => {}
                () = begun => {}
            }
            tracing::info!("Shutting down: no new connections; finishing in-flight requests.");
            on_shutdown.begin_shutdown();
        })
        .into_future();
    tokio::pin!(serving);
    // axum's loop ends only after shutdown began, and then only once every HTTP connection
    // closed, which may be never.
    let http_closed = tokio::select! {
        result = &mut serving => {
            result?;
            true
        }
        () = state.shutdown_signal() => false,
    };
    // One deadline for everything: upgraded WebSockets outlive axum's own graceful shutdown.
    let deadline = Instant::now() + state.limits().shutdown_grace;
    if !http_closed {
        match tokio::time::timeout_at(deadline, &mut serving).await {
            Ok(result) => result?,
            Err(_) => tracing::warn!(
                connections = severer.open_streams(),
                "Shutdown grace period passed with connections still open; dropping them."
            ),
        }
    }
    let remaining = deadline.saturating_duration_since(Instant::now());
    if !state.connections_closed(remaining).await {
        tracing::warn!(
            "Shutdown grace period passed with WebSocket connections still open; dropping them."
        );
    }
    severer.sever();
    Ok(())
}
