//! One throttle for every call to a chat platform: the [`Deliverer`](crate::delivery::Deliverer)
//! paces each channel with it, and an adapter whose platform limits calls more finely (Slack's
//! per-method tiers) paces its own lanes with it too.
//!
//! A lane is anything counted apart: a channel, or a method in a conversation. Calls in a lane
//! go out in the order they asked, at least the lane's interval apart. A pause (a 429 with
//! `Retry-After`) holds the whole lane: calls already waiting for their turn are moved behind
//! its end, in their order and still spaced, not only the calls that ask later. A call that is
//! no longer waited for gives its place up.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};

/// Turns per lane; see the module docs.
#[derive(Debug)]
pub struct Throttle<K> {
    lanes: Mutex<HashMap<K, Lane>>,
}

impl<K> Default for Throttle<K> {
    fn default() -> Self {
        Self {
            lanes: Mutex::new(HashMap::new()),
        }
    }
}

/// One lane's schedule.
#[derive(Debug)]
struct Lane {
    /// The spacing its last caller asked for, which a pause keeps between the calls it moves.
    interval: Duration,
    /// The earliest time the next new call may go.
    next_at: Instant,
    /// The calls waiting for their turn, in the order they asked, with their turn.
    waiting: BTreeMap<u64, Instant>,
    next_ticket: u64,
    /// Wakes the waiting calls when a pause moved their turns.
    moved: Arc<Notify>,
}

impl Lane {
    fn new(now: Instant) -> Self {
        Lane {
            interval: Duration::ZERO,
            next_at: now,
            waiting: BTreeMap::new(),
            next_ticket: 0,
            moved: Arc::new(Notify::new()),
        }
    }
}

impl<K: Clone + Eq + Hash> Throttle<K> {
    /// A throttle with no lanes yet; a lane starts free.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits for this call's turn in `lane`: after every call that asked before it, at least
    /// `interval` after the one before, and never inside a pause.
    pub async fn wait(&self, lane: &K, interval: Duration) {
        let (ticket, moved) = {
            let mut lanes = self.lock();
            let now = Instant::now();
            let state = lanes.entry(lane.clone()).or_insert_with(|| Lane::new(now));
            state.interval = interval;
            let at = state.next_at.max(now);
            state.next_at = at + interval;
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.waiting.insert(ticket, at);
            (ticket, Arc::clone(&state.moved))
        };
        let mut place = Place {
            throttle: self,
            lane,
            ticket,
            taken: false,
        };
        loop {
            let notified = moved.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // The turn is read, and taken, under the lock a pause moves turns under: a call
            // either goes before the pause or is moved by it.
            let Some(at) = place.take_if_due() else {
                return;
            };
            tokio::select! {
                () = sleep_until(at) => {}
                () = notified => {}
            }
        }
    }

    /// Holds every call in `lane` until `duration` from now: those waiting keep their order
    /// and spacing behind the pause, and later ones queue behind them.
    pub fn pause(&self, lane: &K, duration: Duration) {
        let mut lanes = self.lock();
        let now = Instant::now();
        let state = lanes.entry(lane.clone()).or_insert_with(|| Lane::new(now));
        let mut turn = now + duration;
        for at in state.waiting.values_mut() {
            *at = (*at).max(turn);
            turn = *at + state.interval;
        }
        state.next_at = state.next_at.max(turn);
        state.moved.notify_waiters();
    }

    /// The lanes survive a panic unharmed: each change to them is made under one lock hold.
    fn lock(&self) -> MutexGuard<'_, HashMap<K, Lane>> {
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A waiting call's place in its lane, given up if the call is dropped before its turn.
struct Place<'a, K: Clone + Eq + Hash> {
    throttle: &'a Throttle<K>,
    lane: &'a K,
    ticket: u64,
    taken: bool,
}

impl<K: Clone + Eq + Hash> Place<'_, K> {
    /// Takes the turn if it has come (`None`), else says when it comes.
    fn take_if_due(&mut self) -> Option<Instant> {
        let mut lanes = self.throttle.lock();
        let waiting = &mut lanes.get_mut(self.lane)?.waiting;
        let at = *waiting.get(&self.ticket)?;
        if at > Instant::now() {
            return Some(at);
        }
        waiting.remove(&self.ticket);
        self.taken = true;
        None
    }
}

impl<K: Clone + Eq + Hash> Drop for Place<'_, K> {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        if let Some(lane) = self.throttle.lock().get_mut(self.lane) {
            lane.waiting.remove(&self.ticket);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Runs a call through `throttle` and reports when it went, from `start`.
    async fn turn(
        throttle: &Throttle<&'static str>,
        lane: &'static str,
        start: Instant,
    ) -> Duration {
        throttle.wait(&lane, secs(1.0)).await;
        start.elapsed()
    }

    #[tokio::test(start_paused = true)]
    async fn spaces_calls_in_a_lane_in_the_order_they_asked() {
        let throttle = Throttle::new();
        let start = Instant::now();
        let times = tokio::join!(
            turn(&throttle, "a", start),
            turn(&throttle, "a", start),
            turn(&throttle, "b", start),
            turn(&throttle, "a", start),
        );
        assert_eq!(times, (secs(0.0), secs(1.0), secs(0.0), secs(2.0)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_holds_the_calls_already_waiting_in_their_order() {
        let throttle = Throttle::new();
        let start = Instant::now();
        let paused = async {
            tokio::time::sleep(secs(0.5)).await;
            throttle.pause(&"a", secs(5.0));
        };
        let (first, second, third, other, ()) = tokio::join!(
            turn(&throttle, "a", start),
            turn(&throttle, "a", start),
            turn(&throttle, "a", start),
            turn(&throttle, "b", start),
            paused,
        );
        assert_eq!(first, secs(0.0));
        assert_eq!((second, third), (secs(5.5), secs(6.5)));
        assert_eq!(other, secs(0.0), "another lane does not pause");
        assert_eq!(turn(&throttle, "a", start).await, secs(7.5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_given_up_leaves_its_place_to_the_next() {
        let throttle = Throttle::new();
        let start = Instant::now();
        throttle.wait(&"a", secs(1.0)).await;
        let given_up = tokio::time::timeout(secs(0.1), throttle.wait(&"a", secs(1.0))).await;
        assert!(given_up.is_err());
        throttle.pause(&"a", secs(3.0));
        // The place given up is not held behind the pause: the next call comes right after it.
        assert_eq!(turn(&throttle, "a", start).await, secs(3.1));
    }
}
