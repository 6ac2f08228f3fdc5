//! The layer around every fake's routes that records what each API call was answered, and
//! carries out the faults that act on the answer: a stall, a lost answer, a reset.
//!
//! A handler marks its request as an API call by recording it through the request's
//! [`CallSlot`]; requests nobody recorded (control endpoints) pass through untouched.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::calls::{CallLog, FaultEffect};
use crate::conn::ConnCut;
use crate::server::Shutdown;

/// Largest answer the layer reads back to record; the fakes' answers are small JSON.
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// What a fault did or will do to a call's answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Applied {
    /// Served after a delay.
    Delayed,
    /// Answered with an injected error.
    Error,
    /// Cut without answering.
    Reset,
    /// Served; the answer is held back this long.
    Stalled(Duration),
    /// Served; the answer is held back this long (if at all), then the connection is cut.
    LostAnswer(Option<Duration>),
}

impl Applied {
    fn effect(self) -> FaultEffect {
        match self {
            Self::Delayed => FaultEffect::Delayed,
            Self::Error => FaultEffect::Error,
            Self::Reset => FaultEffect::Reset,
            Self::Stalled(_) => FaultEffect::Stalled,
            Self::LostAnswer(_) => FaultEffect::LostAnswer,
        }
    }
}

#[derive(Debug, Default)]
struct SlotState {
    seq: Option<u64>,
    applied: Option<Applied>,
}

/// Links one request to its entry in the call log, and to the fault applied to it. The
/// layer puts one in every request's extensions; handlers extract it.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallSlot(Arc<Mutex<SlotState>>);

impl CallSlot {
    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the call in `log` (addressing `chat`) and remembers its `seq` for the answer.
    pub(crate) fn record(
        &self,
        log: &CallLog,
        method: impl Into<String>,
        path: impl Into<String>,
        chat: Option<String>,
        body: Value,
    ) {
        let seq = log.record_in(method, path, chat, body);
        self.lock().seq = Some(seq);
    }

    /// Notes the fault applied to this call.
    pub(crate) fn apply(&self, applied: Applied) {
        self.lock().applied = Some(applied);
    }

    /// The fault applied so far, for tests of this crate.
    #[cfg(test)]
    pub(crate) fn applied(&self) -> Option<Applied> {
        self.lock().applied
    }
}

impl<S: Send + Sync> FromRequestParts<S> for CallSlot {
    type Rejection = Infallible;

    /// The slot the layer attached; a detached one (recording nothing) outside the layer.
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(parts.extensions.get::<Self>().cloned().unwrap_or_default())
    }
}

/// What the answer layer needs from the fake.
#[derive(Clone, Debug)]
pub(crate) struct AnswerTap {
    /// Where calls and their answers are recorded.
    pub(crate) calls: Arc<CallLog>,
    /// Ends stalls when the fake stops.
    pub(crate) shutdown: Shutdown,
}

/// A response that never reaches the client: its connection was cut.
fn unsent() -> Response {
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}

/// The layer: runs the handler, records the answer of a recorded call, then stalls, cuts
/// or passes the answer on as the fault asked.
pub(crate) async fn record_answers(
    State(tap): State<AnswerTap>,
    mut request: Request,
    next: Next,
) -> Response {
    let slot = CallSlot::default();
    request.extensions_mut().insert(slot.clone());
    let cut = request
        .extensions()
        .get::<ConnectInfo<ConnCut>>()
        .map(|info| info.0.clone());
    let response = next.run(request).await;
    let (seq, applied) = {
        let state = slot.lock();
        (state.seq, state.applied)
    };
    let Some(seq) = seq else {
        return response;
    };
    if applied == Some(Applied::Reset) {
        tap.calls
            .answered(seq, None, Value::Null, Some(FaultEffect::Reset));
        return cut_connection(cut.as_ref(), true);
    }
    let (parts, body) = response.into_parts();
    let bytes = match to_bytes(body, MAX_ANSWER).await {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::warn!(%error, seq, "Could not read back an answer to record it.");
            return unsent();
        }
    };
    let answer = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let status = Some(parts.status.as_u16());
    tap.calls
        .answered(seq, status, answer, applied.map(Applied::effect));
    match applied {
        Some(Applied::Stalled(stall)) => hold(&tap, stall).await,
        Some(Applied::LostAnswer(stall)) => {
            if let Some(stall) = stall {
                hold(&tap, stall).await;
            }
            return cut_connection(cut.as_ref(), false);
        }
        _ => {}
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Waits `stall`, or less if the fake stops meanwhile.
async fn hold(tap: &AnswerTap, stall: Duration) {
    let mut shutdown = tap.shutdown.clone();
    tokio::select! {
        () = tokio::time::sleep(stall) => {}
        () = shutdown.wait() => {}
    }
}

fn cut_connection(cut: Option<&ConnCut>, reset: bool) -> Response {
    match cut {
        Some(cut) if reset => cut.reset(),
        Some(cut) => cut.close(),
        None => tracing::warn!("No connection handle: an injected cut is answered instead."),
    }
    unsent()
}
