//! Webhook mode: an HTTP endpoint Telegram POSTs updates to, guarded by the secret token.
//!
//! teloxide's own webhook listener compares the secret with `==`; this endpoint compares in
//! constant time (`Secret::matches`), so response timing reveals nothing about the secret.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use gatehouse_chat::ChatError;
use gatehouse_chat::channel::Inbound;
use gatehouse_chat::delivery::RetryPolicy;
use gatehouse_config::Secret;
use teloxide::prelude::*;
use teloxide::types::Update;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::channel::{ALLOWED_UPDATES, TelegramChannel};
use crate::classify::CHANNEL;
use crate::config::{HostedWebhook, WebhookConfig};
use crate::inbound::translate;

/// The header Telegram carries the webhook secret in.
pub const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

/// How many recent update ids are remembered to spot repeated deliveries.
const RECENT_UPDATES: usize = 1024;

/// Where the endpoint hands updates: the chat core's channel while the adapter runs, `None`
/// before its start and after its end (answered 503, so Telegram keeps the update).
pub(crate) type Intake = Arc<Mutex<Option<mpsc::Sender<Inbound>>>>;

struct Endpoint {
    secret: Secret,
    account_id: Option<String>,
    inbound: Intake,
    recent: Mutex<VecDeque<u32>>,
}

impl Endpoint {
    /// Records `id`; `false` when it was already handed over. Telegram repeats a delivery whose
    /// answer it did not get, and update ids are its documented way to drop the repeat. A set of
    /// recent ids, not "at most the highest", because ids restart at random after a quiet week.
    fn first_delivery(&self, id: u32) -> bool {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.contains(&id) {
            return false;
        }
        if recent.len() == RECENT_UPDATES {
            recent.pop_front();
        }
        recent.push_back(id);
        true
    }

    /// Forgets `id` after a failed hand-over, so Telegram's retry is accepted.
    fn forget(&self, id: u32) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.retain(|&seen| seen != id);
    }
}

/// The webhook route alone, for a gateway that serves it on its own HTTP server. Answers 401
/// to a missing or wrong secret, 400 to a body that is not an update, 503 once `inbound` is
/// closed (Telegram keeps the update and retries), 200 after the event was queued or when the
/// update was already handed over.
pub fn webhook_router(
    path: &str,
    secret: Secret,
    account_id: Option<String>,
    inbound: mpsc::Sender<Inbound>,
) -> Router {
    router(
        path,
        secret,
        account_id,
        Arc::new(Mutex::new(Some(inbound))),
    )
}

/// The webhook route handing updates to whatever `intake` holds at the time.
pub(crate) fn router(
    path: &str,
    secret: Secret,
    account_id: Option<String>,
    inbound: Intake,
) -> Router {
    let endpoint = Arc::new(Endpoint {
        secret,
        account_id,
        inbound,
        recent: Mutex::new(VecDeque::new()),
    });
    Router::new()
        .route(path, post(receive))
        .with_state(endpoint)
}

async fn receive(
    State(endpoint): State<Arc<Endpoint>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    // `Secret::matches` compares in constant time; only a length mismatch returns early, and
    // the length of a secret of up to 256 allowed characters is no help in guessing it. A
    // header that is not visible ASCII cannot be the secret and is refused like a wrong one.
    let presented = headers
        .get(SECRET_HEADER)
        .and_then(|value| value.to_str().ok());
    if !presented.is_some_and(|presented| endpoint.secret.matches(presented)) {
        tracing::warn!(
            target: "security",
            channel = CHANNEL,
            header_present = headers.contains_key(SECRET_HEADER),
            "Webhook request with a wrong secret token refused."
        );
        return StatusCode::UNAUTHORIZED;
    }
    let Ok(update) = serde_json::from_slice::<Update>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let Some(event) = translate(&update, endpoint.account_id.as_deref()) else {
        return StatusCode::OK;
    };
    let inbound = endpoint
        .inbound
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let Some(inbound) = inbound else {
        return StatusCode::SERVICE_UNAVAILABLE;
    };
    if !endpoint.first_delivery(update.id.0) {
        return StatusCode::OK;
    }
    match inbound.send(event).await {
        Ok(()) => StatusCode::OK,
        Err(_) => {
            endpoint.forget(update.id.0);
            StatusCode::SERVICE_UNAVAILABLE
        }
    }
}

/// Binds `hook.listen`, registers `hook.url` with `setWebhook`, and serves until `inbound` is
/// closed. The webhook stays registered on exit: Telegram holds updates until the next start.
pub(crate) async fn run(
    channel: &TelegramChannel,
    hook: &WebhookConfig,
    inbound: mpsc::Sender<Inbound>,
) -> Result<(), ChatError> {
    let listener = TcpListener::bind(hook.listen)
        .await
        .map_err(|error| ChatError::Permanent {
            channel: CHANNEL.to_owned(),
            reason: format!("cannot listen for webhooks on {}: {error}", hook.listen),
        })?;
    let app = webhook_router(
        &hook.path,
        hook.secret_token.clone(),
        channel.account_id.clone(),
        inbound.clone(),
    );
    let closed = inbound.clone();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { closed.closed().await })
            .await
    });
    let registered = register(channel, &hook.url, &hook.secret_token, &inbound).await;
    if registered.is_err() {
        server.abort();
        return registered;
    }
    match server.await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(ChatError::Transient {
            channel: CHANNEL.to_owned(),
            reason: format!("webhook server failed: {error}"),
        }),
        Err(error) => Err(ChatError::Transient {
            channel: CHANNEL.to_owned(),
            reason: format!("webhook server task ended: {error}"),
        }),
    }
}

/// Opens `intake` to `inbound`, registers `hook.url` with `setWebhook`, and waits until
/// `inbound` is closed; the host's server serves the route meanwhile. As in [`run`], the webhook
/// stays registered on exit.
pub(crate) async fn run_hosted(
    channel: &TelegramChannel,
    hook: &HostedWebhook,
    intake: &Intake,
    inbound: mpsc::Sender<Inbound>,
) -> Result<(), ChatError> {
    let set = |value| *intake.lock().unwrap_or_else(PoisonError::into_inner) = value;
    set(Some(inbound.clone()));
    let registered = register(channel, &hook.url, &hook.secret_token, &inbound).await;
    if registered.is_ok() {
        inbound.closed().await;
    }
    set(None);
    registered
}

/// Opens `intake` to `inbound` until `inbound` is closed, registering nothing: a gateway
/// sharing its store with the one holding the chat connections takes the updates Telegram
/// sends it through the load balancer. The secret check is this endpoint's, as on the holder,
/// and everything an update can do is safe from any gateway: a press is checked against the
/// shared store's button tokens and decided there (first answer wins), and a typed command
/// acts on the shared approvals and sessions.
pub(crate) async fn listen_hosted(intake: &Intake, inbound: mpsc::Sender<Inbound>) {
    let set = |value| *intake.lock().unwrap_or_else(PoisonError::into_inner) = value;
    set(Some(inbound.clone()));
    inbound.closed().await;
    set(None);
}

/// `setWebhook`, retried with the core's backoff while failures are transient.
async fn register(
    channel: &TelegramChannel,
    url: &reqwest::Url,
    secret_token: &Secret,
    inbound: &mpsc::Sender<Inbound>,
) -> Result<(), ChatError> {
    let policy = RetryPolicy::default();
    let mut attempts = 0;
    loop {
        let request = channel
            .bot
            .set_webhook(url.clone())
            .secret_token(secret_token.expose().to_owned())
            .allowed_updates(ALLOWED_UPDATES);
        let error = match channel.checked(request).await {
            Ok(_) => return Ok(()),
            Err(error) => error,
        };
        attempts += 1;
        let delay = match &error {
            ChatError::RateLimited { retry_after, .. } => *retry_after,
            ChatError::Transient { .. } if attempts < policy.max_attempts => {
                policy.backoff(attempts)
            }
            _ => return Err(error),
        };
        tokio::select! {
            () = inbound.closed() => return Ok(()),
            () = tokio::time::sleep(delay) => {}
        }
    }
}
