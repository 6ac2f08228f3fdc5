//! Control endpoints every fake serves on its own port: `GET /_fake/calls` (filtered by
//! `method`, `chat` and `since`) and `GET|POST|DELETE /_fake/faults`. Platform-specific
//! controls live in the platform modules.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::calls::{Call, CallLog};
use crate::error::FakeError;
use crate::faults::{FaultPlan, FaultSpec};

/// Access to the shared parts of a platform's state.
pub(crate) trait Controlled: Send + Sync + 'static {
    /// The platform's call log.
    fn calls(&self) -> &CallLog;
    /// The platform's armed faults.
    fn faults(&self) -> &FaultPlan;
}

/// Routes for the shared control endpoints, for any platform state.
pub(crate) fn routes<S: Controlled>() -> Router<Arc<S>> {
    Router::new().route("/_fake/calls", get(calls::<S>)).route(
        "/_fake/faults",
        get(pending::<S>).post(arm::<S>).delete(clear::<S>),
    )
}

/// `GET /_fake/calls` filters, so a shell dry run can find one card with `curl`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallFilter {
    /// Only this method (exact, as logged).
    method: Option<String>,
    /// Only calls to this chat or channel.
    chat: Option<String>,
    /// Only calls after this `seq`.
    since: Option<u64>,
}

impl CallFilter {
    fn keeps(&self, call: &Call) -> bool {
        self.method.as_ref().is_none_or(|m| *m == call.method)
            && self
                .chat
                .as_ref()
                .is_none_or(|c| call.chat.as_ref() == Some(c))
            && self.since.is_none_or(|since| call.seq > since)
    }
}

async fn calls<S: Controlled>(
    State(state): State<Arc<S>>,
    Query(filter): Query<CallFilter>,
) -> Json<Vec<Call>> {
    let mut calls = state.calls().snapshot();
    calls.retain(|call| filter.keeps(call));
    Json(calls)
}

async fn pending<S: Controlled>(State(state): State<Arc<S>>) -> Json<Value> {
    let faults = state.faults();
    Json(json!({"ok": true, "pending": faults.pending(), "armed": faults.describe()}))
}

async fn arm<S: Controlled>(
    State(state): State<Arc<S>>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, FakeError> {
    let spec: FaultSpec = serde_json::from_slice(&body)
        .map_err(|e| FakeError::control("/_fake/faults", e.to_string()))?;
    state.faults().arm(spec)?;
    Ok(Json(
        json!({"ok": true, "pending": state.faults().pending()}),
    ))
}

async fn clear<S: Controlled>(State(state): State<Arc<S>>) -> Json<Value> {
    state.faults().clear();
    Json(json!({"ok": true, "pending": 0}))
}

/// Parses a control request body, answering 400 with serde's reason when it does not fit.
pub(crate) fn parse_control<T: serde::de::DeserializeOwned>(
    endpoint: &'static str,
    body: &[u8],
) -> Result<T, FakeError> {
    serde_json::from_slice(body).map_err(|e| FakeError::control(endpoint, e.to_string()))
}
