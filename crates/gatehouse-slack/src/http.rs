//! HTTP mode: one Request URL for events, interactivity and slash commands, mounted by the
//! gateway. Every request is signature-checked first (401 and a log line otherwise), and
//! checked against replays in this gateway's memory, or for events and commands in the one the
//! gateways sharing a store keep (`Intake::shared_replays`); the body kind is then told apart
//! the way Slack sends them: JSON for events, `payload=` for interactions, form fields with
//! `command` for slash commands.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use gatehouse_chat::ReplayMemory;
use serde_json::json;
use slack_morphism::prelude::*;

use crate::encode::answer_content;
use crate::intake::{Intake, Kind};
use crate::signature::{Refusal, RequestVerifier};

/// The path the manifest's Request URLs point at.
pub const EVENTS_PATH: &str = "/slack/events";

struct HttpState {
    intake: Arc<Intake>,
    verifier: RequestVerifier,
}

/// The router for [`EVENTS_PATH`].
pub(crate) fn router(intake: Arc<Intake>, verifier: RequestVerifier) -> Router {
    Router::new()
        .route(EVENTS_PATH, post(receive))
        .with_state(Arc::new(HttpState { intake, verifier }))
}

async fn receive(State(state): State<Arc<HttpState>>, headers: HeaderMap, body: Bytes) -> Response {
    // JSON for events, a form for the rest; read (not acted on) before the checks below, since
    // a gateway not holding the chat connections takes interactions only, unless it shares the
    // replay memory of the rest with the other gateways.
    let form = (body.first() != Some(&b'{'))
        .then(|| serde_urlencoded::from_bytes::<HashMap<String, String>>(&body));
    let kind = match &form {
        Some(Ok(form)) if form.contains_key("payload") => Kind::Interaction,
        _ => Kind::Other,
    };
    if !state.intake.takes(kind) {
        // Slack retries events and shows the user an error for interactions: better than
        // accepting something nobody will act on. Checked before the signature so the request
        // is not remembered as seen, and Slack's retry of the same bytes is accepted later.
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let checked = match state.intake.shared_replays(kind) {
        Some(memory) => match first_delivery(&state.verifier, &*memory, &headers, &body).await {
            Ok(checked) => checked,
            Err(unavailable) => return unavailable,
        },
        None => state.verifier.verify(&headers, &body, now_secs()),
    };
    if let Err(refusal) = checked {
        tracing::warn!(channel = "slack", reason = %refusal, "Refused an unauthenticated Slack request.");
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let form = match form {
        None => return event(&state, &body),
        Some(Ok(form)) => form,
        Some(Err(error)) => return malformed("form body", &error),
    };
    if let Some(payload) = form.get("payload") {
        return match serde_json::from_str::<SlackInteractionEvent>(payload) {
            Ok(interaction) => {
                state.intake.interaction(&interaction);
                StatusCode::OK.into_response()
            }
            Err(error) => malformed("interaction payload", &error),
        };
    }
    if form.contains_key("command") {
        return match serde_urlencoded::from_bytes::<SlackCommandEvent>(&body) {
            Ok(command) => command_response(Arc::clone(&state.intake).command(&command).await),
            Err(error) => malformed("slash command", &error),
        };
    }
    malformed("request", &"neither an event, an interaction nor a command")
}

/// Checks the signature, then whether any gateway sharing the store took this request
/// before. A memory that cannot be reached refuses the request (503, and Slack retries an
/// event) rather than take it unchecked.
async fn first_delivery(
    verifier: &RequestVerifier,
    memory: &dyn ReplayMemory,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Result<(), Refusal>, Response> {
    let signed = match verifier.check(headers, body, now_secs()) {
        Ok(signed) => signed,
        Err(refusal) => return Ok(Err(refusal)),
    };
    match memory
        .first_delivery(signed.replay_key(), signed.remember_until_ms())
        .await
    {
        Ok(true) => Ok(Ok(())),
        Ok(false) => Ok(Err(Refusal::Replayed)),
        Err(error) => {
            tracing::error!(channel = "slack", %error, "Cannot check a Slack request against replays; refused.");
            Err(StatusCode::SERVICE_UNAVAILABLE.into_response())
        }
    }
}

fn event(state: &HttpState, body: &[u8]) -> Response {
    match serde_json::from_slice::<SlackPushEvent>(body) {
        Ok(SlackPushEvent::UrlVerification(check)) => {
            Json(json!({ "challenge": check.challenge })).into_response()
        }
        Ok(SlackPushEvent::EventCallback(callback)) => {
            state.intake.event(&callback);
            StatusCode::OK.into_response()
        }
        Ok(SlackPushEvent::AppRateLimited(_)) => {
            tracing::warn!(
                channel = "slack",
                "Slack is dropping events: the app is rate limited."
            );
            StatusCode::OK.into_response()
        }
        Err(error) => malformed("event", &error),
    }
}

/// The answer travels in the response body (ephemeral); without one Slack shows nothing.
fn command_response(answer: Option<String>) -> Response {
    let Some(text) = answer else {
        return StatusCode::OK.into_response();
    };
    let mut body = serde_json::to_value(answer_content(&text)).unwrap_or_else(|_| json!({}));
    body["response_type"] = json!("ephemeral");
    Json(body).into_response()
}

fn malformed(what: &str, error: &dyn std::fmt::Display) -> Response {
    tracing::warn!(channel = "slack", error = %error, "Signed Slack {what} could not be read.");
    StatusCode::BAD_REQUEST.into_response()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}
