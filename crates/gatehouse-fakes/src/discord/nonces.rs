//! Message nonces: with `enforce_nonce`, a second create with the same nonce within a few
//! minutes returns the first message instead of creating another (Discord's idempotency for
//! a create whose answer was lost).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::reply::DcError;

/// Discord's limit on a string nonce.
const MAX_NONCE_CHARS: usize = 25;

/// Discord says "the past few minutes"; tests shorten it through `/_fake/config`.
const DEFAULT_WINDOW: Duration = Duration::from_secs(5 * 60);

/// Nonces of the bot's recent messages (Discord keys them by author; the bot is the only
/// author creating messages here).
#[derive(Debug)]
pub(crate) struct Nonces {
    seen: HashMap<String, Seen>,
    /// How long a nonce is remembered.
    pub(crate) window: Duration,
}

#[derive(Debug)]
struct Seen {
    at: Instant,
    channel: u64,
    message: u64,
}

impl Default for Nonces {
    fn default() -> Self {
        Self {
            seen: HashMap::new(),
            window: DEFAULT_WINDOW,
        }
    }
}

impl Nonces {
    /// The nonce of a create body, as text (integers and strings alike), validated like
    /// Discord does.
    pub(crate) fn key(body: &Value) -> Result<Option<String>, DcError> {
        let invalid = |code, message| DcError::invalid_form(&["nonce".into()], code, message);
        match body.get("nonce") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.chars().count() > MAX_NONCE_CHARS => Err(invalid(
                "BASE_TYPE_MAX_LENGTH",
                "Must be 25 or fewer in length.",
            )),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Some(n.to_string())),
            Some(_) => Err(invalid(
                "BASE_TYPE_STRING",
                "Could not interpret as string.",
            )),
        }
    }

    /// The message an enforced `nonce` names, if one was created within the window.
    pub(crate) fn earlier(&self, nonce: &str) -> Option<(u64, u64)> {
        let seen = self.seen.get(nonce)?;
        (seen.at.elapsed() < self.window).then_some((seen.channel, seen.message))
    }

    /// Remembers the nonce of a created message; forgets expired ones on the way.
    pub(crate) fn remember(&mut self, nonce: String, channel: u64, message: u64) {
        let window = self.window;
        self.seen.retain(|_, seen| seen.at.elapsed() < window);
        self.seen.insert(
            nonce,
            Seen {
                at: Instant::now(),
                channel,
                message,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_string_and_integer_nonces_and_refuses_others() {
        assert_eq!(Nonces::key(&json!({})).unwrap(), None);
        assert_eq!(
            Nonces::key(&json!({"nonce": 42})).unwrap().as_deref(),
            Some("42")
        );
        assert_eq!(
            Nonces::key(&json!({"nonce": "a1"})).unwrap().as_deref(),
            Some("a1")
        );
        assert!(Nonces::key(&json!({"nonce": "x".repeat(26)})).is_err());
        assert!(Nonces::key(&json!({"nonce": true})).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn forgets_a_nonce_after_the_window() {
        let mut nonces = Nonces::default();
        nonces.remember("n".into(), 1, 2);
        assert_eq!(nonces.earlier("n"), Some((1, 2)));
        tokio::time::advance(DEFAULT_WINDOW).await;
        assert_eq!(nonces.earlier("n"), None);
    }
}
