//! The HTTP side of opening a WebSocket (RFC 6455 §4.2): check the upgrade request, answer
//! `101 Switching Protocols` with the accept key, and hand over the connection once hyper has
//! switched it.
//!
//! axum's `WebSocketUpgrade` does the same, but it builds the socket itself, over the bare
//! connection and with one size limit for the socket's whole life; the gateway needs to put
//! [`FirstMessageLimit`](super::first_message::FirstMessageLimit) beneath the socket.

use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Version, header};
use axum::response::{IntoResponse, Response};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::error::Error;
use crate::http::error_response;

/// The only WebSocket version there is (RFC 6455 §4.1).
const VERSION: &str = "13";

/// A checked upgrade request, not answered yet.
pub(super) struct Upgrade {
    key: HeaderValue,
    on_upgrade: OnUpgrade,
}

impl Upgrade {
    /// Checks what RFC 6455 §4.2.1 requires of an opening handshake over HTTP/1.1 and takes the
    /// connection's upgrade handle.
    pub(super) fn from_request(parts: &mut Parts) -> Result<Self, NotAnUpgrade> {
        if parts.method != Method::GET || parts.version != Version::HTTP_11 {
            return Err(NotAnUpgrade("send GET over HTTP/1.1"));
        }
        if !has_token(&parts.headers, &header::CONNECTION, "upgrade") {
            return Err(NotAnUpgrade("`Connection` must include `upgrade`"));
        }
        if !has_token(&parts.headers, &header::UPGRADE, "websocket") {
            return Err(NotAnUpgrade("`Upgrade` must be `websocket`"));
        }
        if !has_token(&parts.headers, &header::SEC_WEBSOCKET_VERSION, VERSION) {
            return Err(NotAnUpgrade("`Sec-WebSocket-Version` must be 13"));
        }
        let Some(key) = parts.headers.get(header::SEC_WEBSOCKET_KEY).cloned() else {
            return Err(NotAnUpgrade("`Sec-WebSocket-Key` is missing"));
        };
        let Some(on_upgrade) = parts.extensions.remove::<OnUpgrade>() else {
            return Err(NotAnUpgrade("this connection cannot be upgraded"));
        };
        Ok(Self { key, on_upgrade })
    }

    /// Answers `101` and runs `then` on the connection once it has switched protocols; when the
    /// switch fails (the client left first), `then` never runs.
    pub(super) fn accept<F, Fut>(self, then: F) -> Response
    where
        F: FnOnce(TokioIo<Upgraded>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Self { key, on_upgrade } = self;
        // Base64 is always a valid header value; should it not be, refuse rather than switch.
        let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) else {
            return error_response(Error::Internal {
                reason: "the WebSocket accept key is not a header value".into(),
            });
        };
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => then(TokioIo::new(upgraded)).await,
                Err(error) => tracing::debug!(error = %error, "WebSocket upgrade failed."),
            }
        });
        let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
        response
    }
}

/// Why a request is not a WebSocket opening handshake; answered `invalid_request` (400) saying
/// so, with the version the gateway speaks (RFC 6455 §4.4).
pub(super) struct NotAnUpgrade(&'static str);

impl IntoResponse for NotAnUpgrade {
    fn into_response(self) -> Response {
        let mut response = error_response(Error::InvalidRequest {
            reason: format!("not a WebSocket upgrade: {}", self.0),
        });
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static(VERSION),
        );
        response
    }
}

/// Whether the comma-separated header `name` lists `token`, ignoring case (RFC 9110 §5.6.1).
fn has_token(headers: &HeaderMap, name: &HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| item.trim().eq_ignore_ascii_case(token))
}
