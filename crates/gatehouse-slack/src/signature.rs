//! Slack's request signing (`X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:{ts}:{body}"))`),
//! checked here rather than by slack-morphism's layer because that layer answers 400 and keeps no
//! memory: every refusal must be a 401, and a captured request must not work twice.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::{Mutex, PoisonError};

use axum::http::HeaderMap;
use gatehouse_config::Secret;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Slack's limit on a request's age, in either direction.
pub(crate) const MAX_AGE_SECS: u64 = 5 * 60;

/// How many recent signatures are remembered. Only Slack can make valid signatures, so the
/// cache fills with genuine requests only; at Slack's event rates this spans the 5-minute
/// window many times over.
const REPLAY_CAPACITY: usize = 8192;

const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";
const SIGNATURE_HEADER: &str = "x-slack-signature";

/// Why a request was refused (logged; the caller only ever sees 401).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A signing header is absent or not text.
    MissingHeader(&'static str),
    /// The timestamp is not a number of seconds.
    BadTimestamp,
    /// The timestamp is more than five minutes from now.
    Stale {
        /// The distance from now, in seconds.
        age_secs: u64,
    },
    /// The signature does not match the body and timestamp.
    BadSignature,
    /// This exact signed request was accepted before.
    Replayed,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::MissingHeader(name) => write!(f, "missing {name} header"),
            Refusal::BadTimestamp => f.write_str("malformed request timestamp"),
            Refusal::Stale { age_secs } => {
                write!(
                    f,
                    "request timestamp is {age_secs} s from now (at most {MAX_AGE_SECS} s allowed)"
                )
            }
            Refusal::BadSignature => f.write_str("signature does not match"),
            Refusal::Replayed => f.write_str("request was already received (replay)"),
        }
    }
}

/// Verifies signed requests and remembers accepted signatures until they are too old to pass.
pub(crate) struct RequestVerifier {
    secret: Secret,
    seen: Mutex<Seen>,
}

/// A fresh, correctly signed request, not yet checked against replays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signed {
    /// Its `X-Slack-Signature`: one request's, since only Slack can make them.
    pub(crate) signature: String,
    /// When Slack sent it (seconds since the Unix epoch).
    pub(crate) sent: u64,
}

/// How far the clocks of gateways sharing a replay memory may disagree: a shared record
/// outlives the request's window by this much, so a gateway whose clock is behind still
/// finds it.
const CLOCK_SKEW_SECS: u64 = 60;

impl Signed {
    /// Its key in the replay memory the gateways share.
    pub(crate) fn replay_key(&self) -> String {
        format!("slack:{}", self.signature)
    }

    /// Until when it must be remembered: past every gateway's window for it.
    pub(crate) fn remember_until_ms(&self) -> u64 {
        self.sent
            .saturating_add(MAX_AGE_SECS + CLOCK_SKEW_SECS)
            .saturating_mul(1000)
    }
}

#[derive(Default)]
struct Seen {
    order: VecDeque<(u64, String)>,
    signatures: HashSet<String>,
}

impl RequestVerifier {
    pub(crate) fn new(secret: Secret) -> Self {
        Self {
            secret,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Accepts a request once: fresh, correctly signed, and not seen before by this gateway.
    pub(crate) fn verify(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now_secs: u64,
    ) -> Result<(), Refusal> {
        let signed = self.check(headers, body, now_secs)?;
        self.remember(&signed.signature, signed.sent, now_secs)
    }

    /// Checks that a request is fresh and correctly signed, remembering nothing: for a
    /// request whose replay is checked in the memory the gateways share instead.
    pub(crate) fn check(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now_secs: u64,
    ) -> Result<Signed, Refusal> {
        let header = |name: &'static str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .ok_or(Refusal::MissingHeader(name))
        };
        let timestamp = header(TIMESTAMP_HEADER)?;
        let signature = header(SIGNATURE_HEADER)?;
        let sent: u64 = timestamp.parse().map_err(|_| Refusal::BadTimestamp)?;
        let age_secs = now_secs.abs_diff(sent);
        if age_secs > MAX_AGE_SECS {
            return Err(Refusal::Stale { age_secs });
        }
        let expected = self.sign(timestamp, body);
        if !bool::from(expected.as_bytes().ct_eq(signature.as_bytes())) {
            return Err(Refusal::BadSignature);
        }
        Ok(Signed {
            signature: signature.to_owned(),
            sent,
        })
    }

    fn sign(&self, timestamp: &str, body: &[u8]) -> String {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(self.secret.expose().as_bytes()) else {
            // HMAC takes keys of any length; this branch cannot run, and if it did the
            // resulting empty signature would match nothing.
            return String::new();
        };
        mac.update(b"v0:");
        mac.update(timestamp.as_bytes());
        mac.update(b":");
        mac.update(body);
        format!("v0={}", hex::encode(mac.finalize().into_bytes()))
    }

    fn remember(&self, signature: &str, sent: u64, now_secs: u64) -> Result<(), Refusal> {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let horizon = now_secs.saturating_sub(MAX_AGE_SECS);
        while let Some((at, _)) = seen.order.front() {
            if *at >= horizon && seen.order.len() < REPLAY_CAPACITY {
                break;
            }
            if let Some((_, old)) = seen.order.pop_front() {
                seen.signatures.remove(&old);
            }
        }
        if !seen.signatures.insert(signature.to_owned()) {
            return Err(Refusal::Replayed);
        }
        seen.order.push_back((sent, signature.to_owned()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    const NOW: u64 = 1_795_000_000;

    fn signed(verifier: &RequestVerifier, ts: u64, body: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from(ts));
        let signature = verifier.sign(&ts.to_string(), body.as_bytes());
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(&signature).unwrap());
        headers
    }

    fn verifier() -> RequestVerifier {
        RequestVerifier::new(Secret::new("8f742231b10e8888abcd99yyyzzz85a5"))
    }

    #[test]
    fn matches_slacks_documented_example() {
        // https://docs.slack.dev/authentication/verifying-requests-from-slack
        let body = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        assert_eq!(
            verifier().sign("1531420618", body.as_bytes()),
            "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
        );
    }

    #[test]
    fn accepts_a_fresh_signed_request_once() {
        let verifier = verifier();
        let headers = signed(&verifier, NOW - 10, "payload=x");
        assert_eq!(verifier.verify(&headers, b"payload=x", NOW), Ok(()));
        assert_eq!(
            verifier.verify(&headers, b"payload=x", NOW),
            Err(Refusal::Replayed)
        );
    }

    #[test]
    fn denies_stale_future_and_tampered_requests() {
        let verifier = verifier();
        let stale = signed(&verifier, NOW - 301, "a");
        assert_eq!(
            verifier.verify(&stale, b"a", NOW),
            Err(Refusal::Stale { age_secs: 301 })
        );
        let future = signed(&verifier, NOW + 400, "a");
        assert!(matches!(
            verifier.verify(&future, b"a", NOW),
            Err(Refusal::Stale { .. })
        ));
        let tampered = signed(&verifier, NOW, "a");
        assert_eq!(
            verifier.verify(&tampered, b"b", NOW),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verifier.verify(&HeaderMap::new(), b"a", NOW),
            Err(Refusal::MissingHeader(TIMESTAMP_HEADER))
        );
    }

    #[test]
    fn forgets_signatures_older_than_the_window() {
        let verifier = verifier();
        for i in 0..10 {
            let body = format!("n={i}");
            let headers = signed(&verifier, NOW, &body);
            verifier.verify(&headers, body.as_bytes(), NOW).unwrap();
        }
        let later = signed(&verifier, NOW + 400, "n=late");
        verifier.verify(&later, b"n=late", NOW + 400).unwrap();
        let seen = verifier.seen.lock().unwrap();
        assert_eq!(seen.order.len(), 1);
        assert_eq!(seen.signatures.len(), 1);
    }
}
