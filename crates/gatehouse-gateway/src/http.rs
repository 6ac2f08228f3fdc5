//! Plain HTTP routes: `POST /rpc`, `GET /healthz`, `GET /metrics`.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::Error;
use crate::methods::{CONNECT, Call};
use crate::metrics::Transport;
use crate::state::GatewayState;
use crate::wire::{Health, HttpRequest, HttpResponse, RawJson};

/// `POST /rpc`: authenticate the bearer token, charge its budget, then dispatch like a WebSocket
/// request. Authentication comes first, from the headers alone: a stranger's body is never read,
/// so it costs no memory and reveals nothing.
pub(crate) async fn rpc(State(state): State<GatewayState>, request: Request) -> Response {
    let (label, outcome) = rpc_outcome(&state, request).await;
    let code = outcome.as_ref().map_or_else(Error::code, |_| "ok");
    state.metrics().record_request(Transport::Http, label, code);
    let status = outcome
        .as_ref()
        .map_or_else(Error::http_status, |_| StatusCode::OK);
    let mut response = (status, Json(HttpResponse::new(&outcome))).into_response();
    if matches!(outcome, Err(Error::Unauthorized)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

async fn rpc_outcome(
    state: &GatewayState,
    request: Request,
) -> (&'static str, Result<RawJson, Error>) {
    let principal = match bearer(request.headers()).map(|token| state.authenticate(token)) {
        Some(Ok(principal)) => principal,
        Some(Err(error)) => return ("unknown", Err(error)),
        None => return ("unknown", Err(Error::Unauthorized)),
    };
    // `DefaultBodyLimit` travels in the request's extensions, so this read still stops at it.
    let body = match Bytes::from_request(request, state).await {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let limit = state.limits().max_body_bytes;
            return ("unknown", Err(Error::BodyTooLarge { limit }));
        }
        Err(rejection) => {
            return (
                "unknown",
                Err(Error::InvalidRequest {
                    reason: rejection.body_text(),
                }),
            );
        }
    };
    let request: HttpRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            return (
                "unknown",
                Err(Error::InvalidRequest {
                    reason: error.to_string(),
                }),
            );
        }
    };
    let label = state.registry().metric_label(&request.method);
    if let Err(error) = state.charge(&principal) {
        return (label, Err(error));
    }
    if request.method == CONNECT {
        let reason =
            "`connect` is the WebSocket handshake; over HTTP send `Authorization: Bearer`".into();
        return (CONNECT, Err(Error::InvalidRequest { reason }));
    }
    let call = Call {
        state: state.clone(),
        caller: principal,
    };
    (
        label,
        state
            .registry()
            .dispatch(call, &request.method, request.params)
            .await,
    )
}

/// The token of an `Authorization: Bearer <token>` header; any other scheme counts as none.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// `GET /healthz`: the process is up and serving; unauthenticated and content-free on purpose.
/// Once shutdown began the listener is closed, so only a request already under way on an
/// accepted connection gets here, and hears 503 `shutting-down`.
pub(crate) async fn healthz(State(state): State<GatewayState>) -> Response {
    if state.is_shutting_down() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health {
                status: "shutting-down",
            }),
        )
            .into_response();
    }
    Json(Health { status: "ok" }).into_response()
}

/// `GET /metrics`: Prometheus text format.
pub(crate) async fn metrics(State(state): State<GatewayState>) -> Response {
    let batch_times = state.store_metrics().map(|read| read());
    let body = state
        .metrics()
        .render(state.open_connections(), batch_times.as_ref());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

/// An error as a JSON `{"ok":false,"error"}` response with its HTTP status.
pub(crate) fn error_response(error: Error) -> Response {
    let status = error.http_status();
    let outcome = Err(error);
    (status, Json(HttpResponse::new(&outcome))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_auth(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn reads_bearer_tokens_only() {
        assert_eq!(bearer(&with_auth("Bearer abc")), Some("abc"));
        assert_eq!(bearer(&with_auth("bearer abc")), Some("abc"));
        assert_eq!(bearer(&with_auth("Basic abc")), None);
        assert_eq!(bearer(&with_auth("Bearer")), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }
}
