//! Every way a request or a connection can fail, each mapped to one stable wire code: the
//! transport's own failures, and the service's ([`Error::service`]), mapped here and nowhere
//! else.
//!
//! Clients branch on [`Error::code`], never on the message, so a code is never renamed or reused;
//! the message is for people and may improve.

use axum::http::StatusCode;
use gatehouse_service::ServiceError;

/// A failure answered to a client, or raised while building the gateway.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A WebSocket request arrived before a successful `connect`.
    #[error("the first request must be `connect {{token, client}}`, got `{method}`")]
    HandshakeRequired {
        /// The method the client sent instead.
        method: String,
    },
    /// `connect` arrived on a connection that is already authenticated.
    #[error("this connection is already connected")]
    AlreadyConnected,
    /// No `connect` arrived within the handshake window.
    #[error("no `connect` request within {timeout_ms} ms")]
    HandshakeTimeout {
        /// The window that elapsed.
        timeout_ms: u64,
    },
    /// The token is missing or matches no configured token.
    #[error("missing or unknown token")]
    Unauthorized,
    /// The token is valid but lacks the scope the method requires.
    #[error("method `{method}` requires scope `{required}`")]
    Forbidden {
        /// The refused method.
        method: String,
        /// The scope it requires.
        required: &'static str,
    },
    /// No method of this name is registered.
    #[error("unknown method `{method}`")]
    UnknownMethod {
        /// The name the client sent.
        method: String,
    },
    /// The frame or body is not a request this protocol understands.
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// What was wrong with it.
        reason: String,
    },
    /// The request is well formed but its params do not fit the method.
    #[error("invalid params for `{method}`: {reason}")]
    InvalidParams {
        /// The method whose params were refused.
        method: String,
        /// What was wrong with them.
        reason: String,
    },
    /// A WebSocket frame exceeded the configured limit.
    #[error("frame of {size} bytes exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The size received.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// An HTTP request body exceeded the configured limit.
    #[error("request body exceeds the limit of {limit} bytes")]
    BodyTooLarge {
        /// The configured limit.
        limit: usize,
    },
    /// Too many WebSockets are open without having sent `connect`; this one is refused before
    /// it upgrades, and may retry shortly.
    #[error("{limit} WebSocket connections are already waiting to authenticate; retry shortly")]
    HandshakeLimit {
        /// How many may wait at once.
        limit: usize,
    },
    /// The token has used up its request budget for now.
    #[error("rate limit exceeded for token `{token}`; retry in {retry_after_ms} ms")]
    RateLimited {
        /// The name (never the secret) of the limited token.
        token: String,
        /// When one request is available again.
        retry_after_ms: u64,
    },
    /// The connection read its events too slowly and its queue overflowed.
    #[error("event queue of {capacity} frames overflowed; reconnect and resync")]
    SlowConsumer {
        /// The per-connection queue capacity.
        capacity: usize,
    },
    /// The gateway is shutting down and takes no new work.
    #[error("the gateway is shutting down")]
    ShuttingDown,
    /// The gateway settings are unusable; raised before the server starts.
    #[error("invalid gateway settings: {reason}")]
    InvalidSettings {
        /// What is wrong with them.
        reason: String,
    },
    /// A bug or an unexpected condition inside the gateway.
    #[error("internal error: {reason}")]
    Internal {
        /// What failed, without secrets.
        reason: String,
    },
    /// A use case refused or failed; [`Error::code`] names it by the service's reason.
    #[error(transparent)]
    Service(ServiceError),
}

impl Error {
    /// The stable code clients branch on; documented in `docs/protocol.md`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::HandshakeRequired { .. } => "handshake_required",
            Self::AlreadyConnected => "already_connected",
            Self::HandshakeTimeout { .. } => "handshake_timeout",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden { .. } => "forbidden",
            Self::UnknownMethod { .. } => "unknown_method",
            Self::InvalidRequest { .. } => "invalid_request",
            Self::InvalidParams { .. } => "invalid_params",
            Self::FrameTooLarge { .. } => "frame_too_large",
            Self::BodyTooLarge { .. } => "body_too_large",
            Self::HandshakeLimit { .. } => "handshake_limit",
            Self::RateLimited { .. } => "rate_limited",
            Self::SlowConsumer { .. } => "slow_consumer",
            Self::ShuttingDown => "shutting_down",
            Self::InvalidSettings { .. } => "invalid_settings",
            Self::Internal { .. } => "internal",
            Self::Service(error) => match error {
                ServiceError::Invalid { .. } => "invalid_params",
                ServiceError::InvalidRequest { .. } => "invalid_request",
                ServiceError::AgentNotAllowed { .. } => "agent_forbidden",
                ServiceError::SessionNotOwned { .. } => "session_forbidden",
                ServiceError::ElevatedUnavailable { .. } => "elevated_unavailable",
                ServiceError::ShuttingDown => "shutting_down",
                ServiceError::InvalidSettings { .. } => "invalid_settings",
                ServiceError::ChatSetting { .. } => "invalid_chat_settings",
                ServiceError::NotFound { .. } => "not_found",
                ServiceError::AmbiguousPrefix { .. } => "ambiguous_prefix",
                ServiceError::ApprovalExpired { .. } => "approval_expired",
                ServiceError::ApprovalCancelled { .. } => "approval_cancelled",
                ServiceError::AlreadyResolved { .. } => "already_resolved",
                ServiceError::IdInUse { .. } => "id_in_use",
                ServiceError::DecisionNotOffered { .. } => "decision_not_offered",
                ServiceError::PendingLimit { .. } => "pending_limit",
                ServiceError::Conflict { .. } => "conflict",
                ServiceError::StoreBusy { .. } => "store_busy",
                ServiceError::Store { .. } => "store",
                ServiceError::Internal { .. } => "internal",
            },
        }
    }

    /// The HTTP status `POST /rpc` answers with, so plain HTTP tooling sees the failure too.
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::HandshakeRequired { .. }
            | Self::AlreadyConnected
            | Self::InvalidRequest { .. }
            | Self::InvalidParams { .. } => StatusCode::BAD_REQUEST,
            Self::HandshakeTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::UnknownMethod { .. } => StatusCode::NOT_FOUND,
            Self::FrameTooLarge { .. } | Self::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::HandshakeLimit { .. } | Self::SlowConsumer { .. } | Self::ShuttingDown => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::InvalidSettings { .. } | Self::Internal { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            Self::Service(error) => match error {
                ServiceError::Invalid { .. } | ServiceError::InvalidRequest { .. } => {
                    StatusCode::BAD_REQUEST
                }
                ServiceError::AgentNotAllowed { .. }
                | ServiceError::SessionNotOwned { .. }
                | ServiceError::ElevatedUnavailable { .. } => StatusCode::FORBIDDEN,
                ServiceError::ShuttingDown | ServiceError::StoreBusy { .. } => {
                    StatusCode::SERVICE_UNAVAILABLE
                }
                ServiceError::NotFound { .. } => StatusCode::NOT_FOUND,
                ServiceError::AmbiguousPrefix { .. }
                | ServiceError::ApprovalExpired { .. }
                | ServiceError::ApprovalCancelled { .. }
                | ServiceError::AlreadyResolved { .. }
                | ServiceError::IdInUse { .. }
                | ServiceError::DecisionNotOffered { .. }
                | ServiceError::Conflict { .. } => StatusCode::CONFLICT,
                ServiceError::PendingLimit { .. } => StatusCode::TOO_MANY_REQUESTS,
                ServiceError::InvalidSettings { .. }
                | ServiceError::ChatSetting { .. }
                | ServiceError::Internal { .. }
                | ServiceError::Store { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            },
        }
    }

    /// The WebSocket close code sent when this error ends a connection (RFC 6455 §7.4.1).
    pub fn close_code(&self) -> u16 {
        match self {
            Self::FrameTooLarge { .. } => 1009,
            Self::ShuttingDown => 1001,
            Self::Internal { .. }
            | Self::InvalidSettings { .. }
            | Self::Service(ServiceError::ChatSetting { .. }) => 1011,
            _ => 1008,
        }
    }
}

impl Error {
    /// The service's answer to `method` as the protocol's error. An input the service refused
    /// is `method`'s bad params; the failures the transport has too keep the transport's
    /// variant; every other is [`Error::Service`].
    pub fn service(method: &str, error: ServiceError) -> Self {
        match error {
            ServiceError::Invalid { reason } => Error::InvalidParams {
                method: method.to_owned(),
                reason,
            },
            ServiceError::InvalidRequest { reason } => Error::InvalidRequest { reason },
            ServiceError::ShuttingDown => Error::ShuttingDown,
            ServiceError::InvalidSettings { reason } => Error::InvalidSettings { reason },
            ServiceError::Internal { reason } => Error::Internal { reason },
            other => Error::Service(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_every_variant_a_distinct_code() {
        let service = |error| Error::service("x", error);
        let all = [
            Error::HandshakeRequired { method: "x".into() },
            Error::AlreadyConnected,
            Error::HandshakeTimeout { timeout_ms: 1 },
            Error::Unauthorized,
            Error::Forbidden {
                method: "x".into(),
                required: "agent",
            },
            service(ServiceError::ElevatedUnavailable {
                method: "x".into(),
                level: "full",
                reason: "x".into(),
            }),
            Error::UnknownMethod { method: "x".into() },
            Error::InvalidRequest { reason: "x".into() },
            Error::InvalidParams {
                method: "x".into(),
                reason: "x".into(),
            },
            Error::FrameTooLarge { size: 2, limit: 1 },
            Error::BodyTooLarge { limit: 1 },
            Error::HandshakeLimit { limit: 1 },
            Error::RateLimited {
                token: "t".into(),
                retry_after_ms: 1,
            },
            Error::SlowConsumer { capacity: 1 },
            Error::ShuttingDown,
            service(ServiceError::AgentNotAllowed {
                token: "t".into(),
                agent: "a".into(),
            }),
            service(ServiceError::SessionNotOwned {
                token: "t".into(),
                session_key: "s".into(),
            }),
            Error::InvalidSettings { reason: "x".into() },
            service(ServiceError::ChatSetting {
                key: "k".into(),
                message: "x".into(),
            }),
            service(ServiceError::NotFound { reason: "x".into() }),
            service(ServiceError::AmbiguousPrefix {
                count: 2,
                candidates: None,
            }),
            service(ServiceError::ApprovalExpired {
                id: "x".into(),
                reason: "x".into(),
            }),
            service(ServiceError::ApprovalCancelled {
                id: "x".into(),
                reason: "x".into(),
            }),
            service(ServiceError::AlreadyResolved {
                id: "x".into(),
                decision: "deny",
                resolved_by: None,
            }),
            service(ServiceError::IdInUse { reason: "x".into() }),
            service(ServiceError::DecisionNotOffered {
                id: "x".into(),
                decision: "allow-always",
            }),
            service(ServiceError::PendingLimit {
                holder: gatehouse_service::PendingHolder::Agent("a".into()),
                limit: 1,
            }),
            service(ServiceError::Conflict {
                expected: "a".into(),
                actual: "b".into(),
            }),
            service(ServiceError::StoreBusy { reason: "x".into() }),
            service(ServiceError::Store { reason: "x".into() }),
            Error::Internal { reason: "x".into() },
        ];
        let mut codes: Vec<_> = all.iter().map(Error::code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }

    /// The service's failures that the transport has too read as the transport's, whatever
    /// path they came by.
    #[test]
    fn maps_the_services_shared_failures_to_the_transports_codes() {
        let cases = [
            (
                ServiceError::Invalid { reason: "x".into() },
                "invalid_params",
            ),
            (
                ServiceError::InvalidRequest { reason: "x".into() },
                "invalid_request",
            ),
            (ServiceError::ShuttingDown, "shutting_down"),
            (
                ServiceError::InvalidSettings { reason: "x".into() },
                "invalid_settings",
            ),
            (ServiceError::Internal { reason: "x".into() }, "internal"),
        ];
        for (error, code) in cases {
            assert_eq!(Error::service("m", error.clone()).code(), code);
            assert_eq!(Error::Service(error).code(), code);
        }
        assert_eq!(
            Error::service("m", ServiceError::Invalid { reason: "r".into() }).to_string(),
            "invalid params for `m`: r"
        );
    }

    #[test]
    fn closes_oversized_frames_with_message_too_big() {
        assert_eq!(
            Error::FrameTooLarge { size: 2, limit: 1 }.close_code(),
            1009
        );
        assert_eq!(Error::ShuttingDown.close_code(), 1001);
        assert_eq!(Error::Unauthorized.close_code(), 1008);
    }
}
