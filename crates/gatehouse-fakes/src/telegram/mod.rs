//! Fake Telegram Bot API: `/bot<token>/<method>` with Telegram's envelope, long polling,
//! webhooks with the secret-token header, and per-chat message state.

mod api;
mod control;
mod inbound;
mod messages;
mod poll;
mod reply;
mod updates;
mod webhook;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use tokio::sync::Notify;

use crate::calls::CallLog;
use crate::control::{self as shared, Controlled};
use crate::error::FakeError;
use crate::faults::{FaultPlan, Platform};
use crate::server::{self, FakeHandle, Shutdown};
use messages::Chats;
use updates::{UpdateQueue, Webhook};

/// How long the fake waits for a bot's webhook to answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts a fake Telegram Bot API on `addr`. Point the client at `handle.base_url`
/// (teloxide: `Bot::new(token).set_api_url(url)`); any well-formed token is accepted.
pub async fn spawn(addr: SocketAddr) -> Result<FakeHandle, FakeError> {
    let calls = Arc::new(CallLog::default());
    let log = Arc::clone(&calls);
    server::serve(addr, calls, "", move |bound| {
        router(Arc::new(Telegram::new(log, bound.shutdown)))
    })
    .await
}

fn router(telegram: Arc<Telegram>) -> Router {
    Router::new()
        .route("/{bot}/{method}", get(api::method).post(api::method))
        .route("/_fake/inject", post(control::inject))
        .route(
            "/_fake/config",
            get(control::config).post(control::configure),
        )
        .merge(shared::routes::<Telegram>())
        .with_state(telegram)
}

/// Everything one fake Telegram knows.
#[derive(Debug)]
pub(crate) struct Telegram {
    calls: Arc<CallLog>,
    faults: FaultPlan,
    state: Mutex<TgState>,
    /// Woken whenever an update is queued, so long polls answer at once.
    updates_ready: Notify,
    /// Serializes webhook deliveries so updates arrive in order.
    delivery: tokio::sync::Mutex<()>,
    http: reqwest::Client,
    /// Ends pending long polls when the fake stops, so shutdown does not wait for them.
    shutdown: Shutdown,
}

#[derive(Debug)]
struct TgState {
    bot_username: String,
    chats: Chats,
    updates: UpdateQueue,
    webhook: Option<Webhook>,
    /// Callback query ids delivered to the bot, and whether each was answered.
    callbacks: HashMap<String, bool>,
    next_callback: u64,
}

impl Telegram {
    fn new(calls: Arc<CallLog>, shutdown: Shutdown) -> Self {
        let http = reqwest::Client::builder()
            .timeout(WEBHOOK_TIMEOUT)
            .build()
            .unwrap_or_default();
        Self {
            calls,
            faults: FaultPlan::new(Platform::Telegram),
            state: Mutex::new(TgState {
                bot_username: "gatehouse_fake_bot".into(),
                chats: Chats::default(),
                updates: UpdateQueue::default(),
                webhook: None,
                callbacks: HashMap::new(),
                next_callback: 1,
            }),
            updates_ready: Notify::new(),
            delivery: tokio::sync::Mutex::new(()),
            http,
            shutdown,
        }
    }

    fn lock(&self) -> MutexGuard<'_, TgState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Controlled for Telegram {
    fn calls(&self) -> &CallLog {
        &self.calls
    }

    fn faults(&self) -> &FaultPlan {
        &self.faults
    }
}
