//! Chat on a store several gateways share (docs/high-availability.md, "Chat on replicas"):
//! the button tokens of every card are kept in the store as well as in memory, so the gateway
//! holding the chat lease after a failover honours presses on cards another gateway sent.
//!
//! A token is submitted to the store when it is issued and again when it is bound to the
//! message it was delivered in; the store runs writes in order, so a card's tokens are
//! durable before its send is claimed, and its binding before its delivery is recorded.
//!
//! The signed requests adapters have taken are remembered in the store too
//! ([`StoreReplays`]), so a captured one is refused at every gateway.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use gatehouse_approvals::{Clock, SharedChat, StoreError, StoredButton};
use gatehouse_chat::token::{MemoryTokenStore, TokenRecord, TokenRegistry, TokenStore, token_key};
use gatehouse_chat::{ReplayMemory, ReplayMemoryError};

use super::view::{locator, stored};

/// The name of the lease a gateway holds while it runs the chat platforms' connections: one
/// for all of them, so every platform's cards and presses go through the same gateway.
pub(super) const CHAT_LEASE: &str = "chat";

/// Button tokens in memory, and in the shared store when there is one.
#[derive(Clone)]
pub(super) struct SharedTokens {
    memory: Arc<MemoryTokenStore>,
    shared: Option<Arc<dyn SharedChat>>,
}

impl SharedTokens {
    pub(super) fn new(shared: Option<Arc<dyn SharedChat>>) -> Self {
        SharedTokens {
            memory: Arc::default(),
            shared,
        }
    }

    /// Takes on the buttons another gateway issued (read from the shared store), without
    /// writing them back.
    pub(super) fn adopt(&self, buttons: Vec<StoredButton>) -> usize {
        records(buttons)
            .map(|(key, record)| self.memory.put(key, record))
            .count()
    }
}

/// The button `token` names, read from the shared store now if its approval is pending, for
/// one press on a gateway that does not hold the chat connections (it issues no tokens and
/// keeps none: a registry per press holds nothing past it). A token of no known shape reads
/// nothing and is refused by the check as unknown.
pub(super) async fn live_tokens(
    shared: &dyn SharedChat,
    token: &str,
) -> Result<TokenRegistry<MemoryTokenStore>, StoreError> {
    let memory = MemoryTokenStore::default();
    if let Some(key) = token_key(token) {
        let stored = shared.live_button(key.to_owned()).await?;
        for (key, record) in records(stored.into_iter().collect()) {
            memory.put(key, record);
        }
    }
    Ok(TokenRegistry::new(memory))
}

/// Stored buttons as token records; one carrying a decision this build does not know is left
/// out (a press on it is refused as unknown).
fn records(buttons: Vec<StoredButton>) -> impl Iterator<Item = (String, TokenRecord)> {
    buttons.into_iter().filter_map(|button| {
        let Ok(decision) = button.decision.parse() else {
            tracing::warn!(key = %button.key, "A stored button carries a decision this build does not know; ignored.");
            return None;
        };
        let record = TokenRecord {
            secret: button.secret,
            approval_id: button.approval_id,
            decision,
            channel: button.channel,
            expires_at_ms: button.expires_at_ms,
            delivered_in: button.delivered_in.as_ref().map(locator),
        };
        Some((button.key, record))
    })
}

impl TokenStore for SharedTokens {
    fn put(&self, key: String, record: TokenRecord) {
        if let Some(shared) = &self.shared {
            let saved = shared.save_button(button(&key, &record));
            // Submitted already; waited for only to report a failure.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = saved.await {
                        tracing::error!(%error, "Cannot record a card's buttons in the shared store: after a failover, presses on it are refused.");
                    }
                });
            }
        }
        self.memory.put(key, record);
    }

    fn get(&self, key: &str) -> Option<TokenRecord> {
        self.memory.get(key)
    }

    fn remove_expired_before(&self, cutoff_ms: u64) -> usize {
        self.memory.remove_expired_before(cutoff_ms)
    }

    fn remove_approvals(&self, approval_ids: &HashSet<String>) -> usize {
        self.memory.remove_approvals(approval_ids)
    }
}

fn button(key: &str, record: &TokenRecord) -> StoredButton {
    StoredButton {
        key: key.to_owned(),
        secret: record.secret.clone(),
        approval_id: record.approval_id.clone(),
        decision: record.decision.as_str().to_owned(),
        channel: record.channel.clone(),
        expires_at_ms: record.expires_at_ms,
        delivered_in: record.delivered_in.as_ref().map(stored),
    }
}

/// The adapters' [`ReplayMemory`] in the shared store, dated by this gateway's clock (which
/// prunes keys past their expiry).
pub(super) struct StoreReplays {
    pub(super) shared: Arc<dyn SharedChat>,
    pub(super) clock: Arc<dyn Clock>,
}

#[async_trait]
impl ReplayMemory for StoreReplays {
    async fn first_delivery(
        &self,
        key: String,
        expires_at_ms: u64,
    ) -> Result<bool, ReplayMemoryError> {
        self.shared
            .first_delivery(key, expires_at_ms, self.clock.now_ms())
            .await
            .map_err(|error| ReplayMemoryError {
                reason: error.to_string(),
            })
    }
}
