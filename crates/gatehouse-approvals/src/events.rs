//! Approval events for the gateway's own consumers (the event forwarder, chat), each on its own
//! queue that never makes the manager wait.
//!
//! Every event carries a sequence number that increases by one per event, in send order. Each
//! subscriber receives every event from the moment it subscribed until it drops its
//! subscription: the queues have no bound, because what consumes them frees pending-cap places,
//! writes the audit log and edits chat cards, and an event dropped there would leave a place
//! taken, a record missing or a card live. (A bounded broadcast used to drop a subscriber that
//! fell behind: at 2,000 approvals a second, a runtime stalled for one second lost events.) A subscriber must therefore keep receiving, and do no slow work per event
//! before taking the next; clients outside the process get events through the gateway's hub,
//! whose per-connection queues are bounded.

use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_policy::ApprovalDecision;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::record::ApprovalRequest;

/// One thing that happened to an approval (or, on a shared store, a run event its log carries
/// in its place among them: [`EventKind::Run`]).
#[derive(Debug, Clone)]
pub struct ApprovalEvent {
    /// Position in the event stream, increasing by one per event: the manager's own count,
    /// from 1, on a store it alone writes; the store's [`crate::EventLog`] number, the same on
    /// every gateway, on a shared one.
    pub seq: u64,
    /// The approval it concerns (the run, for [`EventKind::Run`]).
    pub id: Uuid,
    /// What happened.
    pub kind: EventKind,
}

/// What happened to an approval; one variant per `exec.approval.*` event, and one for the run
/// events a shared store's log carries.
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
    /// Only on a shared store: a run event some gateway logged ([`crate::EventLog::append_run`]),
    /// announced here in its place in the log so every gateway announces one order. The
    /// manager neither reads nor acts on it; approval consumers skip it.
    Run {
        /// The event as its writer encoded it.
        body: Arc<str>,
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

/// The sending half: numbers each event and queues it for every live subscriber.
#[derive(Debug, Default)]
pub(crate) struct EventBus {
    /// Who numbers the events.
    numbering: Numbering,
    /// Held across numbering and queuing, so every subscriber receives events in `seq` order.
    state: Mutex<BusState>,
}

/// Where events and their numbers come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Numbering {
    /// The manager announces each transition it sees and numbers it (a store it alone writes).
    #[default]
    Local,
    /// Only the shared store's event log announces, with its numbers ([`EventBus::emit_logged`]);
    /// the manager's own announcements are dropped, since the log will carry them, in the
    /// order every gateway agrees on.
    Log,
}

#[derive(Debug, Default)]
struct BusState {
    last_seq: u64,
    subscribers: Vec<mpsc::UnboundedSender<ApprovalEvent>>,
}

impl EventBus {
    pub(crate) fn new(numbering: Numbering) -> Self {
        EventBus {
            numbering,
            state: Mutex::default(),
        }
    }

    /// Announces a transition this manager saw; with [`Numbering::Log`], left to the log.
    pub(crate) fn emit(&self, id: Uuid, kind: EventKind) {
        if self.numbering == Numbering::Log {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = state.last_seq + 1;
        state.send(ApprovalEvent { seq, id, kind });
    }

    /// Announces an event as the shared store's log numbered it; called in log order.
    pub(crate) fn emit_logged(&self, event: ApprovalEvent) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(event);
    }

    pub(crate) fn subscribe(&self) -> EventSubscription {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .subscribers
            .push(sender);
        EventSubscription { receiver }
    }
}

impl BusState {
    fn send(&mut self, event: ApprovalEvent) {
        self.last_seq = event.seq;
        // A send fails only once the subscription was dropped; it is forgotten here.
        self.subscribers
            .retain(|subscriber| subscriber.send(event.clone()).is_ok());
    }
}

/// One subscriber's queue of events; dropping it unsubscribes.
#[derive(Debug)]
pub struct EventSubscription {
    receiver: mpsc::UnboundedReceiver<ApprovalEvent>,
}

impl EventSubscription {
    /// The next event; `None` once the manager is gone and every queued event was taken.
    pub async fn recv(&mut self) -> Option<ApprovalEvent> {
        self.receiver.recv().await
    }

    /// The next event if one is already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<ApprovalEvent> {
        self.receiver.try_recv().ok()
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
        let bus = EventBus::default();
        let mut events = bus.subscribe();
        for _ in 0..3 {
            bus.emit(Uuid::nil(), cancelled());
        }
        let seqs: Vec<u64> = std::iter::from_fn(|| events.try_recv())
            .map(|event| event.seq)
            .collect();
        assert_eq!(seqs, vec![1, 2, 3]);
    }

    /// Regression: a bounded broadcast dropped a subscriber this far behind, and the forwarder
    /// then never freed the pending-cap places of the events it missed.
    #[tokio::test]
    async fn a_subscriber_that_reads_late_still_receives_every_event_in_order() {
        let bus = EventBus::default();
        let mut late = bus.subscribe();
        for _ in 0..10_000 {
            bus.emit(Uuid::nil(), cancelled());
        }
        let seqs: Vec<u64> = std::iter::from_fn(|| late.try_recv())
            .map(|event| event.seq)
            .collect();
        assert_eq!(seqs, (1..=10_000).collect::<Vec<u64>>());
    }

    #[tokio::test]
    async fn forgets_a_dropped_subscription_and_ends_others_when_the_bus_goes() {
        let bus = EventBus::default();
        let mut kept = bus.subscribe();
        drop(bus.subscribe());
        bus.emit(Uuid::nil(), cancelled());
        assert_eq!(bus.state.lock().unwrap().subscribers.len(), 1);
        drop(bus);
        assert_eq!(kept.recv().await.map(|event| event.seq), Some(1));
        assert!(kept.recv().await.is_none(), "the manager is gone");
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
