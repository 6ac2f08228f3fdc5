//! The error type of the HTTP and DNS fakes (the PostgreSQL cluster has its own,
//! `postgres::ClusterError`).

use std::net::SocketAddr;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Why a fake could not start or a control request was refused.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    /// The listen address was taken or not allowed.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// Address asked for.
        addr: SocketAddr,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The socket bound but has no readable local address.
    #[error("cannot read the bound address: {0}")]
    LocalAddr(#[source] std::io::Error),
    /// A control request sent through [`crate::FakeHandle::control`] could not be made.
    #[error("control request to {path} failed: {source}")]
    ControlTransport {
        /// The control endpoint.
        path: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// A control endpoint refused a request sent through [`crate::FakeHandle::control`].
    #[error("control request to {path} answered {status}: {body}")]
    ControlRefused {
        /// The control endpoint.
        path: String,
        /// HTTP status of the answer.
        status: u16,
        /// The answer, for the reason.
        body: String,
    },
    /// [`crate::FakeHandle::wait_for_calls`] ran out of time.
    #[error("timed out waiting for {count} call(s) of {method}; saw {seen}")]
    CallsTimedOut {
        /// Method waited for.
        method: String,
        /// How many were wanted.
        count: usize,
        /// How many arrived.
        seen: usize,
    },
    /// A DNS zone (names and answers) was not valid.
    #[error("bad DNS zone: {reason}")]
    BadZone {
        /// What was wrong, in words.
        reason: String,
    },
    /// A fake model's script was not valid.
    #[error("bad model script: {reason}")]
    BadScript {
        /// What was wrong, in words.
        reason: String,
    },
    /// A `/_fake/...` control request was malformed; answered with 400 so a test sees it.
    #[error("bad control request to {endpoint}: {reason}")]
    BadControl {
        /// The control endpoint, such as `/_fake/faults`.
        endpoint: &'static str,
        /// What was wrong, in words.
        reason: String,
    },
}

impl FakeError {
    /// Shorthand for a refused control request.
    pub(crate) fn control(endpoint: &'static str, reason: impl Into<String>) -> Self {
        Self::BadControl {
            endpoint,
            reason: reason.into(),
        }
    }
}

impl IntoResponse for FakeError {
    fn into_response(self) -> Response {
        let status = match self {
            Self::BadControl { .. } => StatusCode::BAD_REQUEST,
            // Only control handlers answer with this type, and they only fail with BadControl.
            Self::Bind { .. }
            | Self::LocalAddr(_)
            | Self::ControlTransport { .. }
            | Self::ControlRefused { .. }
            | Self::CallsTimedOut { .. }
            | Self::BadZone { .. }
            | Self::BadScript { .. } => StatusCode::BAD_REQUEST,
        };
        (
            status,
            Json(json!({"ok": false, "error": self.to_string()})),
        )
            .into_response()
    }
}
