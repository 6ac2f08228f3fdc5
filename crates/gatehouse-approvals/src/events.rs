//! Approval events for surfaces (Control UI, chat, CLI), on a broadcast channel that never waits
//! for a subscriber.
//!
//! Every event carries a sequence number that increases by one per event, in send order, so a
//! subscriber can tell whether it missed something. A subscriber that falls more than the
//! channel's capacity behind is dropped: its next receive reports the lag and the subscription
//! ends, and it must re-read state (`list`) before subscribing again.

use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_policy::ApprovalDecision;
use tokio::sync::broadcast;
use uuid::Uuid;

use gatehouse_store::approvals_db::ApprovalRequest;

/// One thing that happened to an approval.
#[derive(Debug, Clone)]
pub struct ApprovalEvent {
    /// Position in the manager's event stream, starting at 1, increasing by one per event.
    pub seq: u64,
    /// The approval it concerns.
    pub id: Uuid,
    /// What happened.
    pub kind: EventKind,
}

/// What happened to an approval; one variant per `exec.approval.*` event.
#[derive(Debug, Clone)]
pub enum EventKind {
    /// A new approval waits for a decision; surfaces render it from here.
    Requested {
        /// The request as created.
        request: Arc<ApprovalRequest>,
        /// Decisions a person may give (allow-always only when it can be persisted).
        offered: Offered,
        /// When it was created, ms since the epoch.
        created_at_ms: u64,
        /// When it expires, ms since the epoch.
        expires_at_ms: u64,
    },
    /// A person decided.
    Resolved {
        /// The winning decision.
        decision: ApprovalDecision,
        /// Who decided, as the surface identified them.
        resolved_by: String,
        /// The reason they gave, if any.
        reason: Option<String>,
    },
    /// Nobody decided in time, or nobody could be asked.
    Expired {
        /// `timeout` or `no-approval-route`.
        reason: String,
    },
    /// The approval was withdrawn (requester gone, `gateway-restart`).
    Cancelled {
        /// Why it was cancelled.
        reason: String,
    },
}

/// The set of decisions offered for an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offered {
    /// Whether allow-always is offered; allow-once and deny always are.
    pub allow_always: bool,
}

impl Offered {
    /// Whether a person may give this decision.
    pub fn contains(self, decision: ApprovalDecision) -> bool {
        match decision {
            ApprovalDecision::AllowOnce | ApprovalDecision::Deny => true,
            ApprovalDecision::AllowAlways => self.allow_always,
        }
    }

    /// The offered decisions in display order.
    pub fn decisions(self) -> Vec<ApprovalDecision> {
        let mut all = vec![ApprovalDecision::AllowOnce];
        if self.allow_always {
            all.push(ApprovalDecision::AllowAlways);
        }
        all.push(ApprovalDecision::Deny);
        all
    }
}

/// The sending half: assigns sequence numbers and broadcasts without ever waiting.
#[derive(Debug)]
pub(crate) struct EventBus {
    sender: broadcast::Sender<ApprovalEvent>,
    /// The last sequence number sent; held across `send` so numbers reach the channel in order.
    last_seq: Mutex<u64>,
}

impl EventBus {
    pub(crate) fn new(capacity: usize) -> EventBus {
        let (sender, _) = broadcast::channel(capacity.max(1));
        EventBus {
            sender,
            last_seq: Mutex::new(0),
        }
    }

    pub(crate) fn emit(&self, id: Uuid, kind: EventKind) {
        let mut last = self.last_seq.lock().unwrap_or_else(PoisonError::into_inner);
        *last += 1;
        // Sending fails only when nobody subscribes, which is not an error for the manager.
        let _ = self.sender.send(ApprovalEvent {
            seq: *last,
            id,
            kind,
        });
    }

    pub(crate) fn subscribe(&self) -> EventSubscription {
        EventSubscription {
            state: Ok(self.sender.subscribe()),
        }
    }
}

/// One subscriber's view of the event stream.
#[derive(Debug)]
pub struct EventSubscription {
    /// The receiver while the subscription lives, then why it ended.
    state: Result<broadcast::Receiver<ApprovalEvent>, SubscriptionEnded>,
}

/// Why a subscription ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscriptionEnded {
    /// The subscriber fell behind by this many events and was dropped.
    #[error("subscriber dropped after falling {missed} events behind")]
    Lagged {
        /// How many events it missed.
        missed: u64,
    },
    /// The manager is gone.
    #[error("approval manager closed")]
    Closed,
}

impl EventSubscription {
    /// The next event. Once the subscription ended (lag or close), every call reports why.
    pub async fn recv(&mut self) -> Result<ApprovalEvent, SubscriptionEnded> {
        let receiver = self.state.as_mut().map_err(|ended| ended.clone())?;
        let received = receiver.recv().await;
        self.settle(received.map_err(|error| match error {
            broadcast::error::RecvError::Lagged(missed) => SubscriptionEnded::Lagged { missed },
            broadcast::error::RecvError::Closed => SubscriptionEnded::Closed,
        }))
    }

    /// The next event if one is already queued (`Ok(None)` when none is), without waiting.
    /// Once the subscription ended, every call reports why, so a drain loop terminates.
    pub fn try_recv(&mut self) -> Result<Option<ApprovalEvent>, SubscriptionEnded> {
        let receiver = self.state.as_mut().map_err(|ended| ended.clone())?;
        let received = match receiver.try_recv() {
            Ok(event) => Ok(event),
            Err(broadcast::error::TryRecvError::Empty) => return Ok(None),
            Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                Err(SubscriptionEnded::Lagged { missed })
            }
            Err(broadcast::error::TryRecvError::Closed) => Err(SubscriptionEnded::Closed),
        };
        self.settle(received).map(Some)
    }

    /// Ends the subscription on the first error, so a lagging subscriber stays dropped.
    fn settle(
        &mut self,
        received: Result<ApprovalEvent, SubscriptionEnded>,
    ) -> Result<ApprovalEvent, SubscriptionEnded> {
        if let Err(ended) = &received {
            self.state = Err(ended.clone());
        }
        received
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cancelled() -> EventKind {
        EventKind::Cancelled {
            reason: "test".to_owned(),
        }
    }

    #[tokio::test]
    async fn numbers_events_consecutively() {
        let bus = EventBus::new(8);
        let mut events = bus.subscribe();
        for _ in 0..3 {
            bus.emit(Uuid::nil(), cancelled());
        }
        let seqs: Vec<u64> = [(); 3]
            .iter()
            .map(|()| events.try_recv().unwrap().unwrap().seq)
            .collect();
        assert_eq!(seqs, vec![1, 2, 3]);
    }

    #[tokio::test]
    async fn drops_a_subscriber_that_lags() {
        let bus = EventBus::new(2);
        let mut slow = bus.subscribe();
        for _ in 0..5 {
            bus.emit(Uuid::nil(), cancelled());
        }
        assert_eq!(
            slow.recv().await.unwrap_err(),
            SubscriptionEnded::Lagged { missed: 3 }
        );
        bus.emit(Uuid::nil(), cancelled());
        assert_eq!(
            slow.recv().await.unwrap_err(),
            SubscriptionEnded::Lagged { missed: 3 }
        );
    }

    #[test]
    fn deny_is_always_offered() {
        let narrow = Offered {
            allow_always: false,
        };
        assert!(narrow.contains(ApprovalDecision::Deny));
        assert!(!narrow.contains(ApprovalDecision::AllowAlways));
        assert_eq!(
            narrow.decisions(),
            vec![ApprovalDecision::AllowOnce, ApprovalDecision::Deny]
        );
    }
}
