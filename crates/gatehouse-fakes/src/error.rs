//! The one error type of the crate.

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
            Self::Bind { .. } | Self::LocalAddr(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (
            status,
            Json(json!({"ok": false, "error": self.to_string()})),
        )
            .into_response()
    }
}
