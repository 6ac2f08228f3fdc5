//! Approval routes held by other gateways sharing the store (docs/high-availability.md,
//! "Approval routes"). A request nobody can answer is expired at once (`no-approval-route`);
//! with replicas, an operator connected to another replica can answer it, so each replica
//! heartbeats whether it can reach an approver and remembers whether another live one can.
//!
//! **Fail closed.** What another replica said counts only while it is fresh: a heartbeat that
//! fails (the database unreachable) leaves the last answer to age out after [`TRUSTED_FOR`],
//! and from then on only this replica's own routes count. Staleness: a route that went away on
//! a live replica is believed for at most two heartbeats; on a replica that died, for at most
//! [`LIVE_FOR`] plus one heartbeat. A request accepted in that window waits for its timeout,
//! as one does today when its last operator disconnects after it was created.

use std::sync::{Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use gatehouse_approvals::RoutePresence;

/// How often a replica records its reachability and reads the others'.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(2);
/// How long a replica's record counts without being renewed: three heartbeats, so one slow
/// round trip does not drop a live replica's route.
pub(crate) const LIVE_FOR: Duration = Duration::from_secs(6);
/// How long this replica trusts the last answer it read: two heartbeats.
pub(crate) const TRUSTED_FOR: Duration = Duration::from_secs(4);

/// When another replica was last read to have a route.
#[derive(Debug, Default)]
pub(crate) struct RoutesElsewhere {
    seen: Mutex<Option<Instant>>,
}

impl RoutesElsewhere {
    /// Whether another live replica can reach an approver, as last read, if still trusted.
    pub(crate) fn any(&self) -> bool {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < TRUSTED_FOR)
    }

    fn record(&self, elsewhere: bool) {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = elsewhere.then(Instant::now);
    }
}

/// Heartbeats through `presence` every [`HEARTBEAT`] while `reachable` can be called (it
/// answers `None` once the service is gone, which ends the task), recording the answers in
/// `elsewhere`. Must run inside a tokio runtime.
pub(crate) fn spawn_heartbeat(
    presence: std::sync::Arc<dyn RoutePresence>,
    elsewhere: Weak<RoutesElsewhere>,
    reachable: impl Fn() -> Option<bool> + Send + 'static,
) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(HEARTBEAT);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tick.tick().await;
            let Some(here) = reachable() else { return };
            let answer = presence.heartbeat(here, LIVE_FOR).await;
            let Some(elsewhere) = elsewhere.upgrade() else {
                return;
            };
            match answer {
                Ok(answer) => {
                    if failing {
                        tracing::info!("Approval routes heartbeat recovered.");
                    }
                    failing = false;
                    elsewhere.record(answer);
                }
                Err(error) => {
                    // Logged once per outage; the last answer ages out on its own.
                    if !failing {
                        tracing::warn!(%error, "Approval routes heartbeat failed; only this replica's routes count until it recovers.");
                    }
                    failing = true;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_counts_only_while_trusted_and_a_negative_one_clears_it() {
        let elsewhere = RoutesElsewhere::default();
        assert!(!elsewhere.any());
        elsewhere.record(true);
        assert!(elsewhere.any());
        *elsewhere.seen.lock().unwrap() = Instant::now().checked_sub(TRUSTED_FOR);
        assert!(!elsewhere.any(), "an old answer is not trusted");
        elsewhere.record(true);
        elsewhere.record(false);
        assert!(!elsewhere.any());
    }
}
