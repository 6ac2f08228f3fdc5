//! Chat state that gateways sharing one store must share beyond the outbox: who holds the
//! chat platforms' connections (a lease), the button tokens on cards already sent, so a
//! press on a card sent by one gateway is honoured by the gateway that holds the connection
//! when it is pressed, and the signed requests already taken, so none is taken twice
//! (docs/high-availability.md, "Chat on replicas").
//!
//! Only a store several gateways share implements it; a gateway alone on its store keeps
//! tokens in memory (its restart cancels every pending approval anyway) and holds its
//! connections without asking anyone.

use std::future::Future;
use std::pin::Pin;

use crate::store::{Reading, Writing};

/// One issued button token, as the shared store keeps it. The secret is stored as issued:
/// anyone who can read the store can also write approvals' decisions outright, so hashing it
/// would protect nothing the database's own access rules do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredButton {
    /// The token's lookup key.
    pub key: String,
    /// Its secret half.
    pub secret: Vec<u8>,
    /// The approval it decides.
    pub approval_id: String,
    /// The decision it carries (`allow-once`, `allow-always`, `deny`).
    pub decision: String,
    /// The channel it was issued for.
    pub channel: String,
    /// When its approval expires (ms since the Unix epoch).
    pub expires_at_ms: u64,
    /// Where it was delivered: only then is a press on it honoured.
    pub delivered_in: Option<crate::DeliveredMessage>,
}

/// A held lease: `lost` resolves, with why, once this gateway may no longer act as its
/// holder (its connection to the store broke or stopped answering).
pub struct HeldLease {
    /// Resolves when the lease is lost.
    pub lost: Pin<Box<dyn Future<Output = String> + Send>>,
}

impl std::fmt::Debug for HeldLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldLease").finish_non_exhaustive()
    }
}

/// What gateways sharing a store share of chat; see the module docs.
pub trait SharedChat: Send + Sync {
    /// Records `button` (a newer record of the same key replaces it). Submitted when called,
    /// before any outbox step recorded after it: a card's tokens are durable before its send
    /// is claimed.
    fn save_button(&self, button: StoredButton) -> Writing<()>;

    /// Every stored button of an approval still pending: what a gateway taking the chat
    /// connections over honours.
    fn live_buttons(&self) -> Reading<Vec<StoredButton>>;

    /// The stored button `key`, while its approval is pending: what a gateway not holding the
    /// chat connections checks a press against, one row per press.
    fn live_button(&self, key: String) -> Reading<Option<StoredButton>>;

    /// The pending approval a copy delivered as `message` shows: what a gateway not holding
    /// the chat connections (which keeps no cards in memory) reads for a reply to a card.
    fn pending_card_approval(&self, message: crate::DeliveredMessage) -> Reading<Option<String>>;

    /// Waits until this gateway, `holder` (its name, as in outbox claims), holds the chat
    /// lease `name`, retrying while another holds it or the store is unreachable.
    fn acquire_lease(
        &self,
        name: String,
        holder: String,
    ) -> Pin<Box<dyn Future<Output = HeldLease> + Send>>;

    /// The gateway holding the lease `name` now, if any.
    fn lease_holder(&self, name: String) -> Reading<Option<String>>;

    /// Records a signed chat request's `key` until `expires_at_ms` (past the platform's own
    /// window for it): true only for the first gateway to record it, so a captured request
    /// replayed to another replica is refused there too. A key whose record expired by
    /// `now_ms` is recorded anew.
    fn first_delivery(&self, key: String, expires_at_ms: u64, now_ms: u64) -> Reading<bool>;
}
