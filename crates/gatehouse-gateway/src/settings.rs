//! The plain inputs the gateway runs on.
//!
//! These are deliberately small structs, not config syntax: `gatehouse-config` maps
//! `gateway.auth.tokens[{name, token | tokenFile | tokenEnv, scopes}]` and the limit keys into them,
//! and the binary builds the embedded default from them when no config file is given.

use std::time::Duration;

pub use gatehouse_config::Secret;

use crate::error::Error;
use crate::scope::Scope;

/// Everything the gateway needs to start.
#[derive(Debug, Clone)]
pub struct GatewaySettings {
    /// Every token that may connect; at least one is required.
    pub tokens: Vec<TokenSpec>,
    /// Size, rate and queue limits.
    pub limits: Limits,
}

/// One configured token: its public name (logged, used for rate limits) and its secret.
#[derive(Debug, Clone)]
pub struct TokenSpec {
    /// A unique, loggable name such as `admin` or `agent-main`.
    pub name: String,
    /// The bearer secret; at least [`MIN_TOKEN_CHARS`] characters.
    pub secret: Secret,
    /// What the token may do; at least one scope.
    pub scopes: Vec<Scope>,
    /// The agent ids the token may act for; `None`, any (see [`Principal::may_act_for`]).
    ///
    /// [`Principal::may_act_for`]: crate::Principal::may_act_for
    pub agents: Option<Vec<String>>,
}

/// The fewest characters a token may have: shorter ones can be guessed online despite the rate
/// limits.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Limits that keep one client from exhausting the gateway, each answered with its own error code.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest WebSocket text frame accepted (`frame_too_large` above it).
    pub max_frame_bytes: usize,
    /// Largest `POST /rpc` body accepted (`body_too_large` above it).
    pub max_body_bytes: usize,
    /// Per-token request budget; `None` disables rate limiting.
    pub rate: Option<RateLimit>,
    /// Events buffered per connection before it is dropped as a slow consumer.
    pub event_queue: usize,
    /// Requests one WebSocket may have running at once; further frames wait unread.
    pub max_in_flight: usize,
    /// Time a new WebSocket has to send `connect`.
    pub handshake_timeout: Duration,
    /// WebSockets that may be open at once without having authenticated with `connect`; another
    /// is refused `handshake_limit` (503) before it upgrades. Each costs little (its first
    /// message is bounded to 16 KiB), but strangers must not be able to open them without end.
    pub max_unauthenticated: usize,
    /// Time open connections get to finish in-flight requests on shutdown, counted from the
    /// shutdown signal; connections still open after it are dropped, so a stop never takes
    /// longer. Calls waiting for a person do not use it: they answer `shutting_down` at once.
    pub shutdown_grace: Duration,
    /// Longest a WebSocket frame may wait to be written: a peer that stopped reading fills its
    /// socket, and its connection is dropped then, instead of holding a task and its buffers
    /// until the peer leaves.
    pub write_timeout: Duration,
}

impl Default for Limits {
    /// Generous enough for thousands of approvals per second from one agent token, small enough
    /// that a runaway client is cut off within a second.
    fn default() -> Self {
        Self {
            max_frame_bytes: 1024 * 1024,
            max_body_bytes: 1024 * 1024,
            rate: Some(RateLimit {
                burst: 2_000,
                per_second: 1_000,
            }),
            event_queue: 1_024,
            max_in_flight: 256,
            handshake_timeout: Duration::from_secs(10),
            max_unauthenticated: 256,
            shutdown_grace: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// Refuses zero limits, which would lock every client out instead of protecting the gateway;
    /// rate limiting is switched off with `rate: None`, not with a zero rate.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        let zero = [
            ("max_frame_bytes", self.max_frame_bytes == 0),
            ("max_body_bytes", self.max_body_bytes == 0),
            ("event_queue", self.event_queue == 0),
            ("max_in_flight", self.max_in_flight == 0),
            ("handshake_timeout", self.handshake_timeout.is_zero()),
            ("write_timeout", self.write_timeout.is_zero()),
            ("max_unauthenticated", self.max_unauthenticated == 0),
            ("rate.burst", self.rate.is_some_and(|rate| rate.burst == 0)),
            (
                "rate.per_second",
                self.rate.is_some_and(|rate| rate.per_second == 0),
            ),
        ];
        match zero.iter().find(|(_, is_zero)| *is_zero) {
            Some((name, _)) => Err(Error::InvalidSettings {
                reason: format!("limit `{name}` must not be zero"),
            }),
            None => Ok(()),
        }
    }
}

/// A token bucket: `burst` requests at once, refilled at `per_second`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Bucket size: requests allowed back to back.
    pub burst: u32,
    /// Refill rate in requests per second.
    pub per_second: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_default_limits() {
        Limits::default().validate().unwrap();
        Limits {
            rate: None,
            ..Limits::default()
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn refuses_zero_limits_by_name() {
        let zero_rate = Limits {
            rate: Some(RateLimit {
                burst: 10,
                per_second: 0,
            }),
            ..Limits::default()
        };
        let error = zero_rate.validate().unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid gateway settings: limit `rate.per_second` must not be zero"
        );
        let zero_queue = Limits {
            event_queue: 0,
            ..Limits::default()
        };
        assert_eq!(
            zero_queue.validate().unwrap_err().code(),
            "invalid_settings"
        );
    }
}
