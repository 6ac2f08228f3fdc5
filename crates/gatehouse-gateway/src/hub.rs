//! Event fan-out with one global sequence and a bounded queue per connection.
//!
//! Publishing never waits: each event is encoded once, numbered, and offered to every subscriber
//! allowed to see it with `try_send`. A subscriber whose queue is full is removed on the spot and
//! told why, so one slow client can neither block publishers nor make others miss events. Because
//! numbering and offering happen under one short lock, every subscriber sees `seq` strictly
//! increasing, and a gap tells a client it missed something.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::auth::Principal;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::scope::Access;
use crate::wire::EventFrame;

/// The broadcast point for everything clients are told without asking.
#[derive(Debug, Clone)]
pub struct EventHub {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    capacity: usize,
    metrics: Arc<Metrics>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    seq: u64,
    next_id: u64,
    subscribers: HashMap<u64, Subscriber>,
}

#[derive(Debug)]
struct Subscriber {
    principal: Arc<Principal>,
    queue: mpsc::Sender<Arc<str>>,
    dropped: oneshot::Sender<Error>,
}

/// One connection's view of the hub; unsubscribes when dropped.
#[derive(Debug)]
pub(crate) struct Subscription {
    id: u64,
    hub: EventHub,
    /// Encoded event frames, in `seq` order.
    pub(crate) events: mpsc::Receiver<Arc<str>>,
    /// Fires once if the hub dropped this subscriber, with the reason to close with.
    pub(crate) dropped: oneshot::Receiver<Error>,
}

impl EventHub {
    pub(crate) fn new(capacity: usize, metrics: Arc<Metrics>) -> Self {
        let shared = Shared {
            capacity: capacity.max(1),
            metrics,
            inner: Mutex::default(),
        };
        Self {
            shared: Arc::new(shared),
        }
    }

    /// Sends `event` to every connection whose token passes `audience` and returns its `seq`.
    pub fn publish(&self, event: &str, payload: &Value, audience: Access) -> u64 {
        let Ok(mut inner) = self.shared.inner.lock() else {
            tracing::error!(event, "Event hub lock poisoned; event not published.");
            return 0;
        };
        inner.seq += 1;
        let seq = inner.seq;
        let frame: Arc<str> = EventFrame::new(event, payload, seq).to_text().into();
        let mut overflowed = Vec::new();
        for (id, subscriber) in &inner.subscribers {
            if !subscriber.principal.allows(audience) {
                continue;
            }
            if let Err(mpsc::error::TrySendError::Full(_)) =
                subscriber.queue.try_send(Arc::clone(&frame))
            {
                overflowed.push(*id);
            }
        }
        for id in overflowed {
            if let Some(subscriber) = inner.subscribers.remove(&id) {
                tracing::warn!(
                    token = subscriber.principal.name(),
                    capacity = self.shared.capacity,
                    "Dropping slow event consumer."
                );
                self.shared.metrics.record_slow_consumer();
                let _ = subscriber.dropped.send(Error::SlowConsumer {
                    capacity: self.shared.capacity,
                });
            }
        }
        drop(inner);
        self.shared.metrics.record_event_published();
        seq
    }

    /// Registers a connection; events published from now on reach it.
    /// Whether a connected client would receive an event for `audience`; tells the approval
    /// flow whether anyone can be asked at all.
    pub(crate) fn has_subscriber(&self, audience: Access) -> bool {
        self.shared.inner.lock().is_ok_and(|inner| {
            inner
                .subscribers
                .values()
                .any(|subscriber| subscriber.principal.allows(audience))
        })
    }

    pub(crate) fn subscribe(&self, principal: Arc<Principal>) -> Subscription {
        let (queue, events) = mpsc::channel(self.shared.capacity);
        let (dropped_tx, dropped) = oneshot::channel();
        let id = match self.shared.inner.lock() {
            Ok(mut inner) => {
                inner.next_id += 1;
                let id = inner.next_id;
                inner.subscribers.insert(
                    id,
                    Subscriber {
                        principal,
                        queue,
                        dropped: dropped_tx,
                    },
                );
                id
            }
            Err(_) => {
                let _ = dropped_tx.send(Error::Internal {
                    reason: "event hub lock poisoned".into(),
                });
                0
            }
        };
        Subscription {
            id,
            hub: self.clone(),
            events,
            dropped,
        }
    }

    fn unsubscribe(&self, id: u64) {
        if let Ok(mut inner) = self.shared.inner.lock() {
            inner.subscribers.remove(&id);
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.unsubscribe(self.id);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::auth::Authenticator;
    use crate::scope::Scope;
    use crate::settings::{Secret, TokenSpec};

    fn principals() -> (Arc<Principal>, Arc<Principal>) {
        let auth = Authenticator::new(&[
            TokenSpec {
                name: "admin".into(),
                secret: Secret::new("admin-secret-0123456789"),
                scopes: vec![Scope::Admin],
            },
            TokenSpec {
                name: "agent".into(),
                secret: Secret::new("agent-secret-0123456789"),
                scopes: vec![Scope::Agent],
            },
        ])
        .unwrap();
        (
            auth.authenticate("admin-secret-0123456789").unwrap(),
            auth.authenticate("agent-secret-0123456789").unwrap(),
        )
    }

    fn seq_of(frame: &str) -> u64 {
        serde_json::from_str::<Value>(frame).unwrap()["seq"]
            .as_u64()
            .unwrap()
    }

    #[test]
    fn numbers_events_with_one_increasing_sequence_for_all_subscribers() {
        let hub = EventHub::new(8, Arc::default());
        let (admin, _) = principals();
        let mut first = hub.subscribe(Arc::clone(&admin));
        let mut second = hub.subscribe(admin);
        let seqs: Vec<u64> = (0..3)
            .map(|i| hub.publish("e", &json!({"i": i}), Access::AnyScope))
            .collect();
        assert_eq!(seqs, [1, 2, 3]);
        for sub in [&mut first, &mut second] {
            let got: Vec<u64> = (0..3)
                .map(|_| seq_of(&sub.events.try_recv().unwrap()))
                .collect();
            assert_eq!(got, [1, 2, 3]);
        }
    }

    #[test]
    fn delivers_only_to_subscribers_allowed_to_see_the_event() {
        let hub = EventHub::new(8, Arc::default());
        let (admin, agent) = principals();
        let mut admin_sub = hub.subscribe(admin);
        let mut agent_sub = hub.subscribe(agent);
        hub.publish("approval", &json!({}), Access::Scope(Scope::Approvals));
        assert_eq!(seq_of(&admin_sub.events.try_recv().unwrap()), 1);
        assert!(agent_sub.events.try_recv().is_err());
    }

    #[test]
    fn drops_a_full_subscriber_with_a_reason_and_keeps_serving_others() {
        let metrics = Arc::new(Metrics::default());
        let hub = EventHub::new(2, Arc::clone(&metrics));
        let (admin, _) = principals();
        let mut slow = hub.subscribe(Arc::clone(&admin));
        let mut fast = hub.subscribe(admin);
        for _ in 0..3 {
            hub.publish("e", &json!({}), Access::AnyScope);
            let _ = fast.events.try_recv().unwrap();
        }
        assert_eq!(slow.dropped.try_recv().unwrap().code(), "slow_consumer");
        hub.publish("e", &json!({}), Access::AnyScope);
        assert_eq!(seq_of(&fast.events.try_recv().unwrap()), 4);
        assert!(
            metrics
                .render(0)
                .contains("gatehouse_slow_consumers_dropped_total 1\n")
        );
    }

    #[test]
    fn forgets_a_subscription_when_it_is_dropped() {
        let hub = EventHub::new(1, Arc::default());
        let (admin, _) = principals();
        drop(hub.subscribe(admin));
        hub.publish("e", &json!({}), Access::AnyScope);
        assert!(hub.shared.inner.lock().unwrap().subscribers.is_empty());
    }
}
