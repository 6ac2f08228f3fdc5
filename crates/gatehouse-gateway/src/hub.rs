//! Event fan-out with one global sequence and a bounded queue per connection.
//!
//! Publishing never waits: each event is encoded once, numbered, and offered to every subscriber
//! allowed to see it with `try_send`. A subscriber whose queue is full is removed on the spot and
//! told why, so one slow client can neither block publishers nor make others miss events. Because
//! numbering and offering happen under one short lock, every subscriber sees `seq` strictly
//! increasing, and a gap tells a client it missed something.
//!
//! The last [`REPLAY_EVENTS`] frames are kept, so a client that reconnects (or connects after a
//! restart cancelled approvals at start-up) can ask for what it missed. The replay is queued under
//! the same lock that numbers live events, so replayed and live frames meet without a gap or a
//! duplicate. `seq` restarts at 1 with each server run; [`EventHub::instance`] names the run.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

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

/// Events kept for replay to clients that connect with `since`.
pub(crate) const REPLAY_EVENTS: usize = 1_024;

#[derive(Debug)]
struct Shared {
    capacity: usize,
    metrics: Arc<Metrics>,
    instance: String,
    started_at_ms: u64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    seq: u64,
    next_id: u64,
    subscribers: HashMap<u64, Subscriber>,
    recent: VecDeque<Recent>,
    /// Highest `seq` pushed out of `recent`; a replay from below it is incomplete.
    evicted: u64,
}

/// A published frame kept for replay, with who may see it.
#[derive(Debug)]
struct Recent {
    seq: u64,
    audience: Access,
    frame: Arc<str>,
}

/// Where a new subscriber starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Live events only.
    Live,
    /// Buffered events with a `seq` above this one first, then live ones.
    After(u64),
}

/// What a subscriber was given on top of live events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Replay {
    /// The last `seq` published before the subscription; live events start above it.
    pub(crate) last_seq: u64,
    /// Buffered frames queued ahead of live ones.
    pub(crate) replayed: usize,
    /// False when events the client asked for had already left the buffer.
    pub(crate) complete: bool,
}

#[derive(Debug)]
struct Subscriber {
    principal: Arc<Principal>,
    /// The name the client gave in `connect` (`control-ui`, …), for `gateway.status`.
    client: String,
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
        let started_at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        let shared = Shared {
            capacity: capacity.max(1),
            metrics,
            instance: Uuid::new_v4().to_string(),
            started_at_ms,
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
        if inner.recent.len() == REPLAY_EVENTS
            && let Some(oldest) = inner.recent.pop_front()
        {
            inner.evicted = oldest.seq;
        }
        inner.recent.push_back(Recent {
            seq,
            audience,
            frame: Arc::clone(&frame),
        });
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

    /// Names this server run, so a client holding a `seq` can tell whether it still applies.
    pub(crate) fn instance(&self) -> &str {
        &self.shared.instance
    }

    /// When this server run started, in Unix milliseconds.
    pub(crate) fn started_at_ms(&self) -> u64 {
        self.shared.started_at_ms
    }

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

    /// Every connected client that receives `audience`'s events, as (token name, client name),
    /// sorted: who can answer an approval right now, for `gateway.status`.
    pub(crate) fn clients(&self, audience: Access) -> Vec<(String, String)> {
        let mut clients: Vec<(String, String)> = self.shared.inner.lock().map_or_else(
            |_| Vec::new(),
            |inner| {
                inner
                    .subscribers
                    .values()
                    .filter(|subscriber| subscriber.principal.allows(audience))
                    .map(|subscriber| {
                        let token = subscriber.principal.name().to_owned();
                        (token, subscriber.client.clone())
                    })
                    .collect()
            },
        );
        clients.sort();
        clients
    }

    /// Registers a connection without a client name; see [`EventHub::subscribe_client`].
    #[cfg(test)]
    pub(crate) fn subscribe(
        &self,
        principal: Arc<Principal>,
        start: Start,
    ) -> (Subscription, Replay) {
        self.subscribe_client(principal, String::new(), start)
    }

    /// Registers a connection of the client named `client`; events published from now on reach
    /// it, preceded by the buffered ones after `start` that `principal` may see.
    pub(crate) fn subscribe_client(
        &self,
        principal: Arc<Principal>,
        client: String,
        start: Start,
    ) -> (Subscription, Replay) {
        let (dropped_tx, dropped) = oneshot::channel();
        let Ok(mut inner) = self.shared.inner.lock() else {
            let _ = dropped_tx.send(Error::Internal {
                reason: "event hub lock poisoned".into(),
            });
            let (_, events) = mpsc::channel(1);
            let subscription = Subscription {
                id: 0,
                hub: self.clone(),
                events,
                dropped,
            };
            let replay = Replay {
                last_seq: 0,
                replayed: 0,
                complete: false,
            };
            return (subscription, replay);
        };
        // A `seq` above any this run has published comes from an earlier run: replay it all.
        let start = match start {
            Start::After(since) if since > inner.seq => Start::After(0),
            start => start,
        };
        let backlog: Vec<Arc<str>> = match start {
            Start::Live => Vec::new(),
            Start::After(since) => inner
                .recent
                .iter()
                .filter(|recent| recent.seq > since && principal.allows(recent.audience))
                .map(|recent| Arc::clone(&recent.frame))
                .collect(),
        };
        let replay = Replay {
            last_seq: inner.seq,
            replayed: backlog.len(),
            complete: match start {
                Start::Live => true,
                Start::After(since) => inner.evicted <= since,
            },
        };
        // Room for the whole replay on top of the usual live allowance.
        let (queue, events) = mpsc::channel(self.shared.capacity + backlog.len());
        for frame in backlog {
            // Cannot fail: the channel was sized for the backlog and nobody reads it yet.
            let _ = queue.try_send(frame);
        }
        inner.next_id += 1;
        let id = inner.next_id;
        inner.subscribers.insert(
            id,
            Subscriber {
                principal,
                client,
                queue,
                dropped: dropped_tx,
            },
        );
        drop(inner);
        let subscription = Subscription {
            id,
            hub: self.clone(),
            events,
            dropped,
        };
        (subscription, replay)
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
                agents: None,
            },
            TokenSpec {
                name: "agent".into(),
                secret: Secret::new("agent-secret-0123456789"),
                scopes: vec![Scope::Agent],
                agents: None,
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
        let mut first = hub.subscribe(Arc::clone(&admin), Start::Live).0;
        let mut second = hub.subscribe(admin, Start::Live).0;
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
        let mut admin_sub = hub.subscribe(admin, Start::Live).0;
        let mut agent_sub = hub.subscribe(agent, Start::Live).0;
        hub.publish("approval", &json!({}), Access::Scope(Scope::Approvals));
        assert_eq!(seq_of(&admin_sub.events.try_recv().unwrap()), 1);
        assert!(agent_sub.events.try_recv().is_err());
    }

    #[test]
    fn drops_a_full_subscriber_with_a_reason_and_keeps_serving_others() {
        let metrics = Arc::new(Metrics::default());
        let hub = EventHub::new(2, Arc::clone(&metrics));
        let (admin, _) = principals();
        let mut slow = hub.subscribe(Arc::clone(&admin), Start::Live).0;
        let mut fast = hub.subscribe(admin, Start::Live).0;
        for _ in 0..3 {
            hub.publish("e", &json!({}), Access::AnyScope);
            let _ = fast.events.try_recv().unwrap();
        }
        assert_eq!(slow.dropped.try_recv().unwrap().code(), "slow_consumer");
        hub.publish("e", &json!({}), Access::AnyScope);
        assert_eq!(seq_of(&fast.events.try_recv().unwrap()), 4);
        assert!(
            metrics
                .render(0, None)
                .contains("gatehouse_slow_consumers_dropped_total 1\n")
        );
    }

    #[test]
    fn forgets_a_subscription_when_it_is_dropped() {
        let hub = EventHub::new(1, Arc::default());
        let (admin, _) = principals();
        drop(hub.subscribe(admin, Start::Live).0);
        hub.publish("e", &json!({}), Access::AnyScope);
        assert!(hub.shared.inner.lock().unwrap().subscribers.is_empty());
    }

    #[test]
    fn replays_missed_events_the_subscriber_may_see_before_live_ones_without_gaps() {
        let hub = EventHub::new(2, Arc::default());
        let (admin, agent) = principals();
        hub.publish("a", &json!({}), Access::AnyScope);
        hub.publish("b", &json!({}), Access::Scope(Scope::Approvals));
        hub.publish("c", &json!({}), Access::AnyScope);
        let (mut admin_sub, replay) = hub.subscribe(admin, Start::After(1));
        assert_eq!(
            replay,
            Replay {
                last_seq: 3,
                replayed: 2,
                complete: true
            }
        );
        let (mut agent_sub, _) = hub.subscribe(agent, Start::After(0));
        hub.publish("d", &json!({}), Access::AnyScope);
        let admin_seqs: Vec<u64> = (0..3)
            .map(|_| seq_of(&admin_sub.events.try_recv().unwrap()))
            .collect();
        assert_eq!(admin_seqs, [2, 3, 4]);
        let agent_seqs: Vec<u64> = (0..3)
            .map(|_| seq_of(&agent_sub.events.try_recv().unwrap()))
            .collect();
        assert_eq!(agent_seqs, [1, 3, 4]);
        assert!(admin_sub.events.try_recv().is_err());
    }

    #[test]
    fn replays_everything_kept_for_a_seq_from_an_earlier_run() {
        let hub = EventHub::new(8, Arc::default());
        let (admin, _) = principals();
        hub.publish("cancelled", &json!({}), Access::AnyScope);
        let (mut sub, replay) = hub.subscribe(admin, Start::After(500));
        assert_eq!((replay.replayed, replay.complete), (1, true));
        assert_eq!(seq_of(&sub.events.try_recv().unwrap()), 1);
    }

    #[test]
    fn reports_an_incomplete_replay_once_missed_events_left_the_buffer() {
        let hub = EventHub::new(8, Arc::default());
        let (admin, _) = principals();
        for _ in 0..=REPLAY_EVENTS {
            hub.publish("e", &json!({}), Access::AnyScope);
        }
        let (mut sub, replay) = hub.subscribe(Arc::clone(&admin), Start::After(0));
        assert_eq!((replay.replayed, replay.complete), (REPLAY_EVENTS, false));
        assert_eq!(seq_of(&sub.events.try_recv().unwrap()), 2);
        let (_, replay) = hub.subscribe(admin, Start::After(1));
        assert!(replay.complete);
    }

    #[test]
    fn sends_no_replay_to_a_live_only_subscriber() {
        let hub = EventHub::new(8, Arc::default());
        let (admin, _) = principals();
        hub.publish("e", &json!({}), Access::AnyScope);
        let (mut sub, replay) = hub.subscribe(admin, Start::Live);
        assert_eq!((replay.last_seq, replay.replayed), (1, 0));
        assert!(sub.events.try_recv().is_err());
    }
}
