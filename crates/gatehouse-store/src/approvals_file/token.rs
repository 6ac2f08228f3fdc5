//! The socket token: a secret that must never reach a log or a client.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use subtle::ConstantTimeEq as _;

/// What clients see instead of the token; a write that carries it back keeps the stored token.
pub const REDACTED_TOKEN: &str = "__GATEHOUSE_REDACTED__";

/// The shared secret of the exec-approvals socket.
///
/// `Debug` and `Display` print a placeholder so the token cannot leak through logging; only
/// [`SocketToken::expose`] and serialization to the file reveal it.
#[derive(Clone, PartialEq, Eq)]
pub struct SocketToken(String);

impl SocketToken {
    /// A fresh token: 24 random bytes, base64url without padding, as OpenClaw generates it.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 24];
        rand::rng().fill_bytes(&mut bytes);
        SocketToken(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// Wraps a token read from elsewhere (tests, migration tools).
    pub fn new(value: impl Into<String>) -> Self {
        SocketToken(value.into())
    }

    /// The secret itself, for the socket handshake only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Compares in constant time, so a client cannot learn the token byte by byte from timing.
    pub fn matches(&self, candidate: &str) -> bool {
        self.0.as_bytes().ct_eq(candidate.as_bytes()).into()
    }

    /// True when this is the placeholder a client got from a redacted read.
    pub(crate) fn is_redaction_marker(&self) -> bool {
        self.0 == REDACTED_TOKEN
    }

    pub(crate) fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl fmt::Debug for SocketToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SocketToken(**REDACTED**)")
    }
}

impl fmt::Display for SocketToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("**REDACTED**")
    }
}

impl Serialize for SocketToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SocketToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|s| SocketToken(s.trim().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_24_bytes_base64url() {
        let token = SocketToken::generate();
        let decoded = URL_SAFE_NO_PAD.decode(token.expose()).unwrap();
        assert_eq!(decoded.len(), 24);
        assert_ne!(token, SocketToken::generate());
    }

    #[test]
    fn debug_and_display_hide_the_secret() {
        let token = SocketToken::new("s3cret");
        assert!(!format!("{token:?} {token}").contains("s3cret"));
        assert!(token.matches("s3cret"));
        assert!(!token.matches("s3cre"));
    }
}
