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
//!
//! **On a store several gateways share** ([`EventHub::follow_shared_sequence`]), approval
//! events keep the number the database's event log gave them, the same on every gateway, and
//! [`EventHub::instance`] names the database's log instead of the run. A client reconnecting
//! to another gateway with `since` gets what this hub still holds, and what it does not (from
//! before it started, or evicted) read from the log by the caller ([`EventHub::missing_after`]).
//! Run events are in the log too, numbered among the approval events, and every gateway
//! publishes them in log order ([`Publisher::logged_run_event`](gatehouse_service::Publisher)).
//! Only a run event the log could not take (the database failing when it was appended) is
//! published unnumbered, as on one gateway: it carries the number of the last logged event
//! before it, without taking one of its own, reaches only this gateway's clients and is
//! replayed only from this hub's memory (to a `since` below its number; a replay from its
//! number itself cannot tell whether the client saw it, and answers `complete: false`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
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
    /// The shared event log's instance, once approval events are numbered by it.
    shared_instance: OnceLock<String>,
    started_at_ms: u64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    seq: u64,
    next_id: u64,
    subscribers: HashMap<u64, Subscriber>,
    recent: VecDeque<Recent>,
    /// Highest `seq` whose events `recent` no longer holds (pushed out, or, on a shared
    /// sequence, published before this hub started); a replay from below it needs the log.
    evicted: u64,
}

/// A frame kept for replay (or read back from the shared log), with who may see it.
#[derive(Debug)]
pub(crate) struct Recent {
    pub(crate) seq: u64,
    pub(crate) audience: Access,
    pub(crate) frame: Arc<str>,
    /// Published on a shared sequence without a number of its own (a run event the log could
    /// not take): it shares `seq` with the logged event before it.
    pub(crate) unnumbered: bool,
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
    /// Live events up to this `seq` were replayed already or seen elsewhere (a client ahead of
    /// this hub on a shared sequence); they are not sent again.
    seen: u64,
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
            shared_instance: OnceLock::new(),
            started_at_ms,
            inner: Mutex::default(),
        };
        Self {
            shared: Arc::new(shared),
        }
    }

    /// From now on, numbers approval events as the shared store's log did (see the module's
    /// doc): `instance` names the log, `start` is the last event logged before this gateway's
    /// manager started, after which it publishes every logged event here. Call before the
    /// first event is published.
    pub fn follow_shared_sequence(&self, instance: &str, start: u64) {
        if self
            .shared
            .shared_instance
            .set(instance.to_owned())
            .is_err()
        {
            return;
        }
        if let Ok(mut inner) = self.shared.inner.lock() {
            inner.seq = inner.seq.max(start);
            inner.evicted = inner.seq;
        }
    }

    /// Whether approval events are numbered by a shared store's log.
    pub(crate) fn is_shared(&self) -> bool {
        self.shared.shared_instance.get().is_some()
    }

    /// Sends `event` to every connection whose token passes `audience` and returns its `seq`:
    /// the next one, or on a shared sequence the last logged event's (see the module's doc).
    pub fn publish(&self, event: &str, payload: &Value, audience: Access) -> u64 {
        self.publish_numbered(event, payload, audience, None)
    }

    /// Sends an event (approval or run) the shared log numbered `seq`.
    pub(crate) fn publish_logged(
        &self,
        event: &str,
        payload: &Value,
        audience: Access,
        seq: u64,
    ) -> u64 {
        self.publish_numbered(event, payload, audience, Some(seq))
    }

    fn publish_numbered(
        &self,
        event: &str,
        payload: &Value,
        audience: Access,
        logged: Option<u64>,
    ) -> u64 {
        let Ok(mut inner) = self.shared.inner.lock() else {
            tracing::error!(event, "Event hub lock poisoned; event not published.");
            return 0;
        };
        inner.seq = match logged {
            Some(seq) => inner.seq.max(seq),
            None if self.is_shared() => inner.seq,
            None => inner.seq + 1,
        };
        let seq = logged.unwrap_or(inner.seq);
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
            unnumbered: logged.is_none() && self.is_shared(),
        });
        let mut overflowed = Vec::new();
        for (id, subscriber) in &inner.subscribers {
            if !subscriber.principal.allows(audience) || seq <= subscriber.seen {
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

    /// Names this server run, or the shared log, so a client holding a `seq` can tell whether
    /// it still applies.
    pub(crate) fn instance(&self) -> &str {
        self.shared
            .shared_instance
            .get()
            .unwrap_or(&self.shared.instance)
    }

    /// On a shared sequence, the `since` whose events this hub no longer holds in part (they
    /// must be read from the log and passed to [`EventHub::subscribe_client`]); `None` when
    /// memory has them all, or the sequence is this run's own.
    pub(crate) fn missing_after(&self, start: Start) -> Option<u64> {
        let Start::After(since) = start else {
            return None;
        };
        let evicted = self.shared.inner.lock().map_or(0, |inner| inner.evicted);
        (self.is_shared() && since < evicted).then_some(since)
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
        self.subscribe_client(principal, String::new(), start, Vec::new())
    }

    /// Registers a connection of the client named `client`; events published from now on reach
    /// it, preceded by the buffered ones after `start` that `principal` may see. On a shared
    /// sequence, `logged` holds the log's events after [`EventHub::missing_after`], oldest
    /// first, for those this hub no longer holds.
    pub(crate) fn subscribe_client(
        &self,
        principal: Arc<Principal>,
        client: String,
        start: Start,
        logged: Vec<Recent>,
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
        let shared = self.is_shared();
        // A `seq` above any this run has published comes from an earlier run: replay it all.
        // On a shared sequence it is one this hub has not published yet: it is not sent twice.
        let start = match start {
            Start::After(since) if since > inner.seq && !shared => Start::After(0),
            start => start,
        };
        let (backlog, complete, seen) = match start {
            Start::Live => (Vec::new(), true, 0),
            Start::After(since) => {
                // What memory no longer holds, from the log: complete if it is all there.
                let evicted = inner.evicted;
                let from_log: Vec<&Recent> = logged
                    .iter()
                    .filter(|event| shared && event.seq > since && event.seq <= evicted)
                    .collect();
                let complete = evicted <= since
                    || (shared
                        && from_log.len() as u64 == evicted - since
                        && from_log.iter().zip(since + 1..).all(|(e, n)| e.seq == n));
                // An unnumbered event sharing `since` may or may not have reached the client:
                // it is not sent again, and the replay cannot say it is whole.
                let unsure = inner.recent.iter().any(|recent| {
                    recent.unnumbered && recent.seq == since && principal.allows(recent.audience)
                });
                let complete = complete && !unsure;
                let backlog = from_log
                    .into_iter()
                    .chain(inner.recent.iter().filter(|recent| recent.seq > since))
                    .filter(|recent| principal.allows(recent.audience))
                    .map(|recent| Arc::clone(&recent.frame))
                    .collect();
                (backlog, complete, if shared { since } else { 0 })
            }
        };
        let replay = Replay {
            last_seq: inner.seq,
            replayed: backlog.len(),
            complete,
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
                seen,
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

    fn logged(seqs: &[u64]) -> Vec<Recent> {
        seqs.iter()
            .map(|&seq| Recent {
                seq,
                audience: Access::AnyScope,
                frame: EventFrame::new("logged", &json!({}), seq).to_text().into(),
                unnumbered: false,
            })
            .collect()
    }

    fn drain(sub: &mut Subscription) -> Vec<u64> {
        std::iter::from_fn(|| sub.events.try_recv().ok())
            .map(|frame| seq_of(&frame))
            .collect()
    }

    #[test]
    fn on_a_shared_sequence_approval_events_keep_the_logs_numbers_and_runs_take_none() {
        let hub = EventHub::new(8, Arc::default());
        hub.follow_shared_sequence("database-log", 10);
        assert_eq!(hub.instance(), "database-log");
        let (admin, _) = principals();
        let (mut sub, replay) = hub.subscribe(admin, Start::Live);
        assert_eq!(replay.last_seq, 10);
        hub.publish_logged("approval", &json!({}), Access::AnyScope, 11);
        assert_eq!(hub.publish("run", &json!({}), Access::AnyScope), 11);
        hub.publish_logged("approval", &json!({}), Access::AnyScope, 12);
        assert_eq!(drain(&mut sub), [11, 11, 12]);
    }

    #[test]
    fn a_replay_on_a_shared_sequence_reads_from_the_log_what_memory_lacks() {
        let hub = EventHub::new(8, Arc::default());
        hub.follow_shared_sequence("database-log", 10);
        let (admin, _) = principals();
        hub.publish_logged("approval", &json!({}), Access::AnyScope, 11);
        hub.publish_logged("approval", &json!({}), Access::AnyScope, 12);
        assert_eq!(hub.missing_after(Start::After(11)), None, "memory holds it");
        assert_eq!(hub.missing_after(Start::After(8)), Some(8));

        // The log's copy of what memory holds too is not sent twice.
        let (mut sub, replay) = hub.subscribe_client(
            Arc::clone(&admin),
            String::new(),
            Start::After(8),
            logged(&[9, 10, 11]),
        );
        assert_eq!((replay.replayed, replay.complete), (4, true));
        assert_eq!(drain(&mut sub), [9, 10, 11, 12]);

        // Event 9's approval was pruned: what is left is sent, and the replay says it is not all.
        let (mut sub, replay) = hub.subscribe_client(
            Arc::clone(&admin),
            String::new(),
            Start::After(8),
            logged(&[10]),
        );
        assert!(!replay.complete);
        assert_eq!(drain(&mut sub), [10, 11, 12]);

        // A client that saw more on another gateway than this one published yet gets nothing
        // twice: live events up to what it saw are skipped.
        let (mut ahead, replay) = hub.subscribe(admin, Start::After(14));
        assert_eq!((replay.replayed, replay.complete), (0, true));
        for seq in 13..=15 {
            hub.publish_logged("approval", &json!({}), Access::AnyScope, seq);
        }
        assert_eq!(drain(&mut ahead), [15]);
    }

    /// Property: whatever this hub published and evicted, a replay from any `since`, given the
    /// log's events after it as the connection reads them (at most [`REPLAY_EVENTS`]), holds
    /// every approval event after `since` once and in order whenever it says it is complete,
    /// and says so exactly when memory and that read cover the whole gap and memory holds no
    /// unnumbered event (a run the log could not take) sharing `since`.
    #[test]
    fn a_shared_replay_is_complete_exactly_when_memory_and_the_log_cover_the_gap() {
        use rand::Rng;
        let mut rng = rand::rng();
        let (admin, _) = principals();
        for _ in 0..40 {
            let hub = EventHub::new(8, Arc::default());
            let start: u64 = rng.random_range(0..50);
            hub.follow_shared_sequence("database-log", start);
            let last = start + rng.random_range(0..2_500u64);
            // Every frame published, as (seq, unnumbered), in order.
            let mut published = Vec::new();
            for seq in start + 1..=last {
                hub.publish_logged("approval", &json!({}), Access::AnyScope, seq);
                published.push((seq, false));
                if rng.random_bool(0.2) {
                    hub.publish("run", &json!({}), Access::AnyScope);
                    published.push((seq, true));
                }
            }
            let since = rng.random_range(0..=last + 3);
            let after: Vec<u64> = (since + 1..=last).take(REPLAY_EVENTS).collect();
            let (mut sub, replay) = hub.subscribe_client(
                Arc::clone(&admin),
                String::new(),
                Start::After(since),
                logged(&after),
            );
            let frames: Vec<Value> = std::iter::from_fn(|| sub.events.try_recv().ok())
                .map(|frame| serde_json::from_str(&frame).unwrap())
                .collect();
            let approvals: Vec<u64> = frames
                .iter()
                .filter(|frame| frame["event"] != "run")
                .map(|frame| frame["seq"].as_u64().unwrap())
                .collect();
            let evicted = hub.shared.inner.lock().unwrap().evicted;
            let covered = since >= evicted || evicted - since <= REPLAY_EVENTS as u64;
            let kept = &published[published.len().saturating_sub(REPLAY_EVENTS)..];
            let unsure = kept.contains(&(since, true));
            assert_eq!(
                replay.complete,
                covered && !unsure,
                "since {since}, evicted {evicted}"
            );
            if replay.complete {
                assert_eq!(approvals, (since + 1..=last).collect::<Vec<_>>());
            }
            let seqs: Vec<u64> = frames.iter().map(|f| f["seq"].as_u64().unwrap()).collect();
            assert!(seqs.windows(2).all(|pair| pair[0] <= pair[1]), "{seqs:?}");
        }
    }

    #[test]
    fn a_replay_from_the_number_an_unnumbered_event_shares_is_not_complete() {
        let hub = EventHub::new(8, Arc::default());
        hub.follow_shared_sequence("database-log", 10);
        let (admin, _) = principals();
        hub.publish_logged("approval", &json!({}), Access::AnyScope, 11);
        assert_eq!(hub.publish("run", &json!({}), Access::AnyScope), 11);
        hub.publish_logged("approval", &json!({}), Access::AnyScope, 12);
        // From 10: everything after it, the unnumbered event in its place.
        let (mut sub, replay) = hub.subscribe(Arc::clone(&admin), Start::After(10));
        assert_eq!((replay.replayed, replay.complete), (3, true));
        assert_eq!(drain(&mut sub), [11, 11, 12]);
        // From 11: the client may have seen the unnumbered event or not.
        let (mut sub, replay) = hub.subscribe(Arc::clone(&admin), Start::After(11));
        assert_eq!((replay.replayed, replay.complete), (1, false));
        assert_eq!(drain(&mut sub), [12]);
        let (_, replay) = hub.subscribe(admin, Start::After(12));
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
