//! Button payloads: opaque server-side tokens, so a button press carries no decision a client
//! could forge, and a payload copied to another chat or message is worthless.
//!
//! A token is `g1.<key>.<secret>` (40 ASCII characters: under Telegram's 64-byte and Discord's
//! 100-character limits). The key finds the record; the secret is compared in constant time. A
//! token is issued bound to (approval, decision, channel) and becomes usable only once
//! [`TokenRegistry::bind_delivery`] ties it to the chat and message it was delivered in.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gatehouse_policy::ApprovalDecision;
use rand::Rng;
use subtle::ConstantTimeEq;

use crate::error::ChatError;
use crate::route::MessageLocator;

const VERSION: &str = "g1";
const KEY_BYTES: usize = 9;
const SECRET_BYTES: usize = 18;

/// The length of every issued token, checked against platform limits in tests.
pub const TOKEN_LEN: usize = VERSION.len() + 1 + KEY_BYTES / 3 * 4 + 1 + SECRET_BYTES / 3 * 4;

/// What a token stands for and where it may be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    /// The secret half of the token.
    pub secret: Vec<u8>,
    /// The approval it decides.
    pub approval_id: String,
    /// The decision it carries.
    pub decision: ApprovalDecision,
    /// The channel it was issued for.
    pub channel: String,
    /// Expiry of the approval, in Unix milliseconds.
    pub expires_at_ms: u64,
    /// The message it was delivered in; `None` until delivery succeeded.
    pub delivered_in: Option<MessageLocator>,
}

/// Where token records live. The registry's logic stays here; the gateway may supply a durable
/// store so buttons keep working across a restart.
pub trait TokenStore: Send + Sync {
    /// Stores a record under `key`, replacing any previous one.
    fn put(&self, key: String, record: TokenRecord);
    /// The record under `key`, if any.
    fn get(&self, key: &str) -> Option<TokenRecord>;
    /// Removes every record whose `expires_at_ms` is before `cutoff_ms`; returns how many.
    fn remove_expired_before(&self, cutoff_ms: u64) -> usize;
    /// Removes every record of these approvals; returns how many.
    fn remove_approvals(&self, approval_ids: &HashSet<String>) -> usize;
}

/// The in-memory store: enough for a single gateway process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    records: Mutex<HashMap<String, TokenRecord>>,
}

impl TokenStore for MemoryTokenStore {
    fn put(&self, key: String, record: TokenRecord) {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records.insert(key, record);
    }

    fn get(&self, key: &str) -> Option<TokenRecord> {
        let records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records.get(key).cloned()
    }

    fn remove_expired_before(&self, cutoff_ms: u64) -> usize {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        let before = records.len();
        records.retain(|_, record| record.expires_at_ms >= cutoff_ms);
        before - records.len()
    }

    fn remove_approvals(&self, approval_ids: &HashSet<String>) -> usize {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        let before = records.len();
        records.retain(|_, record| !approval_ids.contains(&record.approval_id));
        before - records.len()
    }
}

/// What a verified token authorizes the presser to attempt (the approver check still follows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenClaim {
    /// The approval to resolve.
    pub approval_id: String,
    /// The decision to record.
    pub decision: ApprovalDecision,
}

/// Issues and verifies button tokens over a [`TokenStore`].
#[derive(Debug, Default)]
pub struct TokenRegistry<S = MemoryTokenStore> {
    store: S,
}

impl TokenRegistry<MemoryTokenStore> {
    /// A registry that forgets its tokens when the process exits.
    pub fn in_memory() -> Self {
        Self::new(MemoryTokenStore::default())
    }
}

impl<S: TokenStore> TokenRegistry<S> {
    /// A registry over `store`.
    pub fn new(store: S) -> Self {
        Self { store }
    }

    /// Issues one token per decision for a card about to be sent on `channel`.
    pub fn issue(
        &self,
        approval_id: &str,
        channel: &str,
        decisions: &[ApprovalDecision],
        expires_at_ms: u64,
    ) -> Vec<(ApprovalDecision, String)> {
        let mut rng = rand::rng();
        decisions
            .iter()
            .map(|&decision| {
                let mut key = [0u8; KEY_BYTES];
                let mut secret = [0u8; SECRET_BYTES];
                rng.fill(&mut key);
                rng.fill(&mut secret);
                let key = URL_SAFE_NO_PAD.encode(key);
                let token = format!("{VERSION}.{key}.{}", URL_SAFE_NO_PAD.encode(secret));
                self.store.put(
                    key,
                    TokenRecord {
                        secret: secret.to_vec(),
                        approval_id: approval_id.to_owned(),
                        decision,
                        channel: channel.to_owned(),
                        expires_at_ms,
                        delivered_in: None,
                    },
                );
                (decision, token)
            })
            .collect()
    }

    /// Binds issued tokens to the message they were delivered in; before this, they are refused.
    pub fn bind_delivery(
        &self,
        tokens: &[(ApprovalDecision, String)],
        locator: &MessageLocator,
    ) -> Result<(), ChatError> {
        for (_, token) in tokens {
            let (key, mut record) = self.lookup(token)?;
            record.delivered_in = Some(locator.clone());
            self.store.put(key, record);
        }
        Ok(())
    }

    /// Checks a pressed token against where it was pressed and the clock. Each refusal is its own
    /// error so the adapter can answer "no longer pending" apart from "not valid here".
    pub fn verify(
        &self,
        token: &str,
        pressed_on: &MessageLocator,
        now_ms: u64,
    ) -> Result<TokenClaim, ChatError> {
        let (_, record) = self.lookup(token)?;
        let approval_id = record.approval_id.clone();
        let Some(delivered) = &record.delivered_in else {
            return Err(ChatError::TokenWrongMessage { approval_id });
        };
        let same_chat = record.channel == pressed_on.channel
            && delivered.channel == pressed_on.channel
            && delivered.account_id == pressed_on.account_id
            && delivered.chat_id == pressed_on.chat_id;
        if !same_chat {
            return Err(ChatError::TokenWrongChat { approval_id });
        }
        if delivered.message_id != pressed_on.message_id {
            return Err(ChatError::TokenWrongMessage { approval_id });
        }
        if now_ms >= record.expires_at_ms {
            return Err(ChatError::TokenExpired { approval_id });
        }
        Ok(TokenClaim {
            approval_id,
            decision: record.decision,
        })
    }

    /// Forgets tokens whose approval expired more than `keep_ms` ago; until then a stale press
    /// can still be answered with the recorded result.
    pub fn purge(&self, now_ms: u64, keep_ms: u64) -> usize {
        self.store
            .remove_expired_before(now_ms.saturating_sub(keep_ms))
    }

    /// Forgets the tokens of these approvals (settled, their grace over), so memory follows
    /// the approvals that still need buttons.
    pub fn forget(&self, approval_ids: &HashSet<String>) -> usize {
        self.store.remove_approvals(approval_ids)
    }

    fn lookup(&self, token: &str) -> Result<(String, TokenRecord), ChatError> {
        let (key, secret) = split(token).ok_or(ChatError::TokenUnknown)?;
        let secret = URL_SAFE_NO_PAD
            .decode(secret)
            .map_err(|_| ChatError::TokenUnknown)?;
        let record = self.store.get(key).ok_or(ChatError::TokenUnknown)?;
        if !bool::from(record.secret.ct_eq(&secret)) {
            return Err(ChatError::TokenUnknown);
        }
        Ok((key.to_owned(), record))
    }
}
/// The lookup key of a pressed `token`, when it has a token's shape: what a gateway that keeps
/// no tokens itself reads from a shared store before checking the press. Says nothing about
/// whether the token is valid.
pub fn token_key(token: &str) -> Option<&str> {
    split(token).map(|(key, _)| key)
}

/// A token's key and encoded secret, when it is `g1.<key>.<secret>`.
fn split(token: &str) -> Option<(&str, &str)> {
    let mut parts = token.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(VERSION), Some(key), Some(secret), None) => Some((key, secret)),
        _ => None,
    }
}
