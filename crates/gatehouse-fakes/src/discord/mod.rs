//! Fake Discord: the REST API under `/api/v10` and a gateway WebSocket at `/gateway`, with
//! channels, DMs, messages, interactions and application commands.

mod commands;
mod control;
mod gateway;
mod inbound;
mod interactions;
mod messages;
mod nonces;
mod reply;
mod rest;
mod sessions;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::routing::{any, get, post};

use crate::calls::CallLog;
use crate::control::{self as shared, Controlled};
use crate::error::FakeError;
use crate::faults::{FaultPlan, Platform};
use crate::server::{self, Bound, FakeHandle, Shutdown};
use commands::Commands;
use interactions::Interactions;
use messages::{Channels, Snowflakes};
use sessions::Sessions;

/// The bot user's id; also its application id, as for most Discord bots.
pub const BOT_ID: u64 = 1_100_000_000_000_000_001;
/// The application id interaction webhooks and commands must name.
pub const APP_ID: u64 = BOT_ID;
/// The guild every channel the fake has not seen as a DM belongs to.
pub const GUILD_ID: u64 = 1_100_000_000_000_000_002;

/// Starts a fake Discord on `addr`. Point serenity at `handle.base_url` with
/// `HttpBuilder::new(token).proxy(url).ratelimiter_disabled(true)` (serenity only honours the
/// proxy with its rate limiter off); `GET /api/v10/gateway` then leads it to the fake gateway.
pub async fn spawn(addr: SocketAddr) -> Result<FakeHandle, FakeError> {
    let calls = Arc::new(CallLog::default());
    let log = Arc::clone(&calls);
    server::serve(addr, calls, "", move |bound| {
        router(Arc::new(Discord::new(log, &bound)))
    })
    .await
}

fn router(discord: Arc<Discord>) -> Router {
    let api = Router::new()
        .route("/gateway", get(rest::get_gateway))
        .route("/gateway/bot", get(rest::get_gateway_bot))
        .route("/users/@me", get(rest::get_current_user))
        .route(
            "/oauth2/applications/@me",
            get(rest::get_current_application),
        )
        .route("/users/@me/channels", post(rest::create_dm))
        .route("/channels/{channel}", get(rest::get_channel))
        .route("/channels/{channel}/messages", post(rest::create_message))
        .route(
            "/channels/{channel}/messages/{message}",
            get(rest::get_message)
                .patch(rest::edit_message)
                .delete(rest::delete_message),
        )
        .route(
            "/interactions/{id}/{token}/callback",
            post(rest::interaction_callback),
        )
        .route("/webhooks/{app}/{token}", post(rest::execute_webhook))
        .route(
            "/webhooks/{app}/{token}/messages/{message}",
            get(rest::get_webhook_message)
                .patch(rest::edit_webhook_message)
                .delete(rest::delete_webhook_message),
        )
        .route(
            "/applications/{app}/guilds/{guild}/commands",
            get(rest::get_guild_commands)
                .put(rest::overwrite_guild_commands)
                .post(rest::create_guild_command),
        )
        .route(
            "/applications/{app}/commands",
            get(rest::get_global_commands)
                .put(rest::overwrite_global_commands)
                .post(rest::create_global_command),
        )
        .fallback(any(rest::unknown_route));
    Router::new()
        .nest("/api/v10", api)
        .route("/gateway", get(gateway::connect))
        .route("/_fake/inject", post(control::inject))
        .route("/_fake/disconnect", post(control::disconnect))
        .route("/_fake/threads", post(control::open_thread))
        .route(
            "/_fake/config",
            get(control::config).post(control::configure),
        )
        .merge(shared::routes::<Discord>())
        .with_state(discord)
}

/// Everything one fake Discord knows.
#[derive(Debug)]
pub(crate) struct Discord {
    calls: Arc<CallLog>,
    faults: FaultPlan,
    state: Mutex<DcState>,
    gateway_url: String,
    shutdown: Shutdown,
}

/// Mutable platform state, behind one lock.
#[derive(Debug, Default)]
pub(crate) struct DcState {
    ids: Snowflakes,
    channels: Channels,
    interactions: Interactions,
    commands: Commands,
    sessions: Sessions,
    /// Set by `/_fake/disconnect`: gateway upgrades wait until then.
    reconnect_not_before: Option<tokio::time::Instant>,
}

impl Discord {
    fn new(calls: Arc<CallLog>, bound: &Bound) -> Self {
        Self {
            calls,
            faults: FaultPlan::new(Platform::Discord),
            state: Mutex::new(DcState::default()),
            gateway_url: format!("ws://{}/gateway", bound.addr),
            shutdown: bound.shutdown.clone(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, DcState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Controlled for Discord {
    fn calls(&self) -> &CallLog {
        &self.calls
    }

    fn faults(&self) -> &FaultPlan {
        &self.faults
    }
}
