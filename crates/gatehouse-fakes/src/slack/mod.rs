//! Fake Slack: the Web API methods an approval bot uses under `/api/`, Socket Mode at `/link`,
//! and signed HTTP delivery to the app's Request URL.

mod api;
mod blocks;
mod control;
mod delivery;
mod envelopes;
mod inbound;
mod messages;
mod reply;
mod socket;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};

use crate::calls::CallLog;
use crate::control::{self as shared, Controlled};
use crate::error::FakeError;
use crate::faults::{FaultPlan, Platform};
use crate::server::{self, Bound, FakeHandle, Shutdown};
use delivery::HttpMode;
use envelopes::SocketMode;
use messages::Conversations;

/// The fake workspace.
pub const TEAM_ID: &str = "T0FAKE";
/// The app, as `api_app_id` and in `hello`.
pub const APP_ID: &str = "A0FAKE";
/// The bot's user id (`auth.test`'s `user_id`).
pub const BOT_USER_ID: &str = "U0FAKEBOT";
/// The bot id on messages the bot posts.
pub const BOT_ID: &str = "B0FAKEBOT";

/// How long the fake waits for the app's Request URL to answer.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts a fake Slack on `addr`. `handle.base_url` is the Web API base, `http://addr/api`
/// (slack-morphism: `SlackClientHyperConnector::with_connector(..).with_slack_api_url(url)`);
/// `apps.connections.open` returns the fake's Socket Mode URL.
pub async fn spawn(addr: SocketAddr) -> Result<FakeHandle, FakeError> {
    let calls = Arc::new(CallLog::default());
    let log = Arc::clone(&calls);
    server::serve(addr, calls, "/api", move |bound| {
        router(Arc::new(Slack::new(log, &bound)))
    })
    .await
}

fn router(slack: Arc<Slack>) -> Router {
    Router::new()
        .route("/api/{method}", get(api::method).post(api::method))
        .route("/link", get(socket::connect))
        .route("/link/", get(socket::connect))
        .route("/response/{id}", post(control::response_url))
        .route("/_fake/inject", post(control::inject))
        .route("/_fake/disconnect", post(control::disconnect))
        .route("/_fake/envelopes", get(control::envelopes))
        .route("/_fake/messages", get(control::messages))
        .route(
            "/_fake/config",
            get(control::config).post(control::configure),
        )
        .merge(shared::routes::<Slack>())
        .with_state(slack)
}

/// Everything one fake Slack knows.
#[derive(Debug)]
pub(crate) struct Slack {
    calls: Arc<CallLog>,
    faults: FaultPlan,
    state: Mutex<SlState>,
    addr: SocketAddr,
    shutdown: Shutdown,
    http_client: reqwest::Client,
}

/// Mutable platform state, behind one lock.
#[derive(Debug, Default)]
pub(crate) struct SlState {
    conversations: Conversations,
    socket: SocketMode,
    http: HttpMode,
    next_trigger: u64,
    /// Set by `/_fake/disconnect`: Socket Mode upgrades wait until then.
    reconnect_not_before: Option<tokio::time::Instant>,
}

impl Slack {
    fn new(calls: Arc<CallLog>, bound: &Bound) -> Self {
        Self {
            calls,
            faults: FaultPlan::new(Platform::Slack),
            state: Mutex::new(SlState::default()),
            addr: bound.addr,
            shutdown: bound.shutdown.clone(),
            http_client: reqwest::Client::builder()
                .timeout(DELIVERY_TIMEOUT)
                .build()
                .unwrap_or_default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SlState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `http://addr`, for URLs the fake hands out.
    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Controlled for Slack {
    fn calls(&self) -> &CallLog {
        &self.calls
    }

    fn faults(&self) -> &FaultPlan {
        &self.faults
    }
}
