//! Approval routes across gateways sharing one store: a gateway expires a request at once when
//! nobody can be asked (`no-approval-route`), and on a shared store an operator connected to
//! another gateway can be asked too. Each gateway records whether it can reach an approver and
//! reads whether another live gateway can.

use std::time::Duration;

use crate::store::Reading;

/// The routes other gateways sharing the store report. Only a store several gateways share
/// implements it; one gateway alone knows its own routes.
pub trait RoutePresence: Send + Sync {
    /// Records whether this gateway can reach an approver now, and answers whether another
    /// gateway recorded within the last `live_for` that it can. A gateway that stopped
    /// recording (dead, or cut off from the store) stops counting once `live_for` passed.
    fn heartbeat(&self, reachable: bool, live_for: Duration) -> Reading<bool>;
}
