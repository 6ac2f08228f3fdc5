//! The one pacer every call to a chat platform goes through: the platform's documented limits
//! kept before a call is made, a 429 honoured for exactly what it names, the most urgent call
//! first, and a bound on calls in flight (and so on connections).
//!
//! Each channel has one [`Pacer`]. A call asks for a turn with its conversation (its lane),
//! its kind and its [`Priority`], and gets a [`Permit`]; dropping the permit ends the call.
//! A turn is granted when:
//! - every sliding window that counts the call has room: the conversation's, a group's, the
//!   bot's, the edits' (see [`Pacing`]);
//! - no pause covers it: a 429 pauses what its [`RateScope`] names until `retry_after` is over,
//!   and holds the calls already waiting too;
//! - fewer than [`Pacing::max_in_flight`] calls are under way.
//!
//! Among the calls that may go, the most urgent goes first ([`Priority`]), then the one that
//! asked first.
//!
//! **Windows count calls by when they could have reached the platform.** A call may arrive
//! anywhere between its start and the moment its answer (or error) came back, so a window of `N`
//! calls per `W` lets a new call start only once `N` earlier calls are all known to have ended
//! more than `W` ago, or fewer are counted. That holds however the network delays each call:
//! no `W`-long span of arrivals ever holds more than `N` of them.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::{Instant, sleep_until};

use crate::error::RateScope;
use crate::route::Conversation;

/// At most `calls` per `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Calls allowed in any span of `per`; at least 1.
    pub calls: u32,
    /// The span.
    pub per: Duration,
}

impl Window {
    /// `calls` per second.
    pub const fn per_second(calls: u32) -> Window {
        Window {
            calls,
            per: Duration::from_secs(1),
        }
    }

    /// `calls` per minute.
    pub const fn per_minute(calls: u32) -> Window {
        Window {
            calls,
            per: Duration::from_secs(60),
        }
    }
}

/// Calls under way at once unless `channels.<name>.delivery.maxConnections` says otherwise:
/// at Telegram's 30 calls a second and a tenth of a second each, about three are under way.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 8;

/// A platform's limits, as the pacer keeps them. Each adapter states its platform's documented
/// limits; `channels.<name>.delivery` overrides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Calls into one conversation (Telegram asks for one message per second per chat).
    pub chat: Option<Window>,
    /// Calls into one group conversation, on top of `chat` (Telegram: 20 per minute).
    pub group: Option<Window>,
    /// Every call of the bot (Telegram about 30 per second, Discord 50).
    pub bot: Option<Window>,
    /// Edits and deletes across the bot (Slack's `chat.update` tier).
    pub edits: Option<Window>,
    /// Calls under way at once: each holds at most one connection, so this bounds the sockets
    /// open to the platform too. At least 1.
    pub max_in_flight: usize,
}

impl Default for Pacing {
    /// No limits but a bound on calls in flight.
    fn default() -> Pacing {
        Pacing {
            chat: None,
            group: None,
            bot: None,
            edits: None,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

/// The kinds of call the pacer tells apart (for [`RateScope::Route`] and
/// [`RateScope::Method`] pauses, and for the edits window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallKind {
    /// A new message.
    Send,
    /// An edit of a delivered message.
    Update,
    /// A delete of a delivered message.
    Delete,
    /// A private answer to an interaction.
    Answer,
}

impl CallKind {
    fn is_edit(self) -> bool {
        matches!(self, CallKind::Update | CallKind::Delete)
    }
}

/// How urgent a call is; the pacer grants the most urgent first. Answers to a person's press
/// come first (Discord refuses an interaction not answered within 3 seconds), then the edits
/// that take buttons off decided cards, then cards, then everything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Priority {
    /// A private answer to a button press or slash command.
    Answer,
    /// A card edited into its receipt (or deleted), or a digest kept current.
    Edit,
    /// An approval card, a forwarded prompt or a digest.
    Card,
    /// An origin notice or an `/approve` fallback.
    Notice,
    /// A reply to a command typed in a chat.
    Reply,
}

/// One call asking for its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The conversation it addresses; `None` for interaction answers, which go to the person
    /// who pressed, not into a conversation.
    pub lane: Option<Conversation>,
    /// Whether that conversation is a group (`Pacing::group` counts it too).
    pub group: bool,
    /// What it does.
    pub kind: CallKind,
    /// How urgent it is.
    pub priority: Priority,
}

/// Turns for every call of one channel; see the module docs.
#[derive(Debug)]
pub struct Pacer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the driver: a new call, a call ended, a pause, a call given up.
    wake: Notify,
}

impl Pacer {
    /// A pacer keeping `pacing`. Its scheduler runs as a task of the current tokio runtime
    /// from the first call on, and stops when the pacer is dropped.
    pub fn new(pacing: Pacing) -> Pacer {
        Pacer {
            shared: Arc::new(Shared {
                state: Mutex::new(State::new(pacing)),
                wake: Notify::new(),
            }),
        }
    }

    /// The limits kept.
    pub fn pacing(&self) -> Pacing {
        self.shared.lock().pacing
    }

    /// Waits for `call`'s turn. The returned permit is the call under way: drop it when the
    /// answer (or the error) came back. A call dropped while waiting gives its place up.
    pub async fn turn(&self, call: Call) -> Permit {
        let (grant, granted) = oneshot::channel();
        let ticket = {
            let mut state = self.shared.lock();
            if !state.driver_running {
                state.driver_running = true;
                tokio::spawn(drive(Arc::clone(&self.shared)));
            }
            state.enqueue(call, grant)
        };
        self.shared.wake.notify_one();
        let place = Place {
            shared: &self.shared,
            ticket,
        };
        let permit = granted.await;
        drop(place);
        // A waiter's sender is only dropped unsent by `give_up`, which only this call's own
        // place does, after this point.
        permit.unwrap_or(Permit {
            shared: None,
            id: CallId(u64::MAX),
        })
    }

    /// Holds what `scope` names, seen from a call of `kind` into `lane`, until `duration` from
    /// now; calls already waiting are held too. A shorter pause never shortens a longer one.
    pub fn pause(
        &self,
        lane: Option<&Conversation>,
        kind: CallKind,
        scope: RateScope,
        duration: Duration,
    ) {
        let until = Instant::now() + duration;
        self.shared.lock().pause(lane, kind, scope, until);
        self.shared.wake.notify_one();
    }

    /// Until when calls of `kind` into `lane` are paused, if they are.
    pub fn paused_until(&self, lane: Option<&Conversation>, kind: CallKind) -> Option<Instant> {
        let state = self.shared.lock();
        let now = Instant::now();
        state.pause_end(lane, kind).filter(|until| *until > now)
    }
}

impl Shared {
    /// The state survives a panic unharmed: each change is made under one lock hold.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A call under way; dropping it records when the call ended. A permit granted to a call that
/// was given up in the same instant is dropped unreceived, which ends that call too.
#[derive(Debug)]
pub struct Permit {
    /// `None` for a permit that counts nothing.
    shared: Option<Arc<Shared>>,
    id: CallId,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.lock().end(self.id, Instant::now());
            shared.wake.notify_one();
        }
    }
}

/// A waiting call's place, given up if the call is dropped before its turn.
struct Place<'a> {
    shared: &'a Shared,
    ticket: u64,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if self.shared.lock().give_up(self.ticket) {
            self.shared.wake.notify_one();
        }
    }
}

/// Grants turns until the pacer and every permit it granted are gone.
async fn drive(shared: Arc<Shared>) {
    loop {
        let notified = shared.wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        match State::grant_due(&shared, Instant::now()) {
            Some(at) => {
                tokio::select! {
                    () = sleep_until(at) => {}
                    () = notified => {}
                }
            }
            None => notified.await,
        }
        if Arc::strong_count(&shared) == 1 {
            return;
        }
    }
}

impl Drop for Pacer {
    /// Lets the scheduler see it is no longer needed.
    fn drop(&mut self) {
        self.shared.wake.notify_one();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CallId(u64);

/// A granted call, as the windows count it.
#[derive(Debug, Clone, Copy)]
struct Record {
    id: CallId,
    /// `None` while the call is under way.
    end: Option<Instant>,
}

/// One sliding window's recent calls, oldest first.
#[derive(Debug)]
struct Log {
    window: Window,
    records: VecDeque<Record>,
}

impl Log {
    fn new(window: Window) -> Log {
        Log {
            window,
            records: VecDeque::new(),
        }
    }

    /// When a new call may start: now if fewer than `calls` recent calls count, else once the
    /// `calls`-th latest end is `per` old; `None` while that many calls are still under way.
    fn free_at(&mut self, now: Instant) -> Option<Instant> {
        self.prune(now);
        let limit = usize::try_from(self.window.calls.max(1)).unwrap_or(usize::MAX);
        if self.records.len() < limit {
            return Some(now);
        }
        let running = self.records.iter().filter(|r| r.end.is_none()).count();
        if running >= limit {
            return None;
        }
        let per = self.window.per;
        let mut ends: Vec<Instant> = self.records.iter().filter_map(|r| r.end).collect();
        ends.sort_unstable_by(|a, b| b.cmp(a));
        // Of the `limit` latest-ending calls, the earliest must be `per` old.
        ends.get(limit - running - 1).map(|end| *end + per)
    }

    /// Forgets calls that ended longer than the window ago: they count no more.
    fn prune(&mut self, now: Instant) {
        let per = self.window.per;
        self.records
            .retain(|record| record.end.is_none_or(|end| end + per > now));
    }

    fn start(&mut self, id: CallId) {
        self.records.push_back(Record { id, end: None });
    }

    fn end(&mut self, id: CallId, at: Instant) {
        if let Some(record) = self.records.iter_mut().find(|r| r.id == id) {
            record.end = Some(at);
        }
    }
}

/// A waiting call.
#[derive(Debug)]
struct Waiter {
    call: Call,
    grant: oneshot::Sender<Permit>,
}

/// What one conversation keeps: its windows and pauses, and its waiting calls by urgency.
#[derive(Debug)]
struct Lane {
    chat: Option<Log>,
    group: Option<Log>,
    /// Every call into it is held until then.
    paused: Option<Instant>,
    /// Calls of one kind into it are held until then.
    paused_kind: HashMap<CallKind, Instant>,
    waiting: BTreeMap<(Priority, u64), Waiter>,
}

impl Lane {
    fn new(pacing: &Pacing) -> Lane {
        Lane {
            chat: pacing.chat.map(Log::new),
            group: pacing.group.map(Log::new),
            paused: None,
            paused_kind: HashMap::new(),
            waiting: BTreeMap::new(),
        }
    }

    /// Nothing to remember: no call waiting, none counted, no pause to keep.
    fn is_idle(&mut self, now: Instant) -> bool {
        for log in [self.chat.as_mut(), self.group.as_mut()]
            .into_iter()
            .flatten()
        {
            log.prune(now);
        }
        let empty = |log: &Option<Log>| log.as_ref().is_none_or(|l| l.records.is_empty());
        self.waiting.is_empty()
            && empty(&self.chat)
            && empty(&self.group)
            && self.paused.is_none_or(|until| until <= now)
            && self.paused_kind.values().all(|until| *until <= now)
    }
}

#[derive(Debug)]
struct State {
    pacing: Pacing,
    driver_running: bool,
    next_ticket: u64,
    next_call: u64,
    /// Keyed by conversation; interaction answers wait in the `None` lane, which no
    /// conversation window counts.
    lanes: HashMap<Option<Conversation>, Lane>,
    /// Where each waiting ticket is, so a call given up is found.
    tickets: HashMap<u64, (Option<Conversation>, Priority)>,
    /// Which lane each call under way was counted in.
    running: HashMap<CallId, (Option<Conversation>, CallKind)>,
    bot: Option<Log>,
    edits: Option<Log>,
    bot_paused: Option<Instant>,
    kind_paused: HashMap<CallKind, Instant>,
}

impl State {
    fn new(pacing: Pacing) -> State {
        State {
            pacing,
            driver_running: false,
            next_ticket: 0,
            next_call: 0,
            lanes: HashMap::new(),
            tickets: HashMap::new(),
            running: HashMap::new(),
            bot: pacing.bot.map(Log::new),
            edits: pacing.edits.map(Log::new),
            bot_paused: None,
            kind_paused: HashMap::new(),
        }
    }

    fn enqueue(&mut self, call: Call, grant: oneshot::Sender<Permit>) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let key = call.lane.clone();
        let priority = call.priority;
        let pacing = self.pacing;
        self.lanes
            .entry(key.clone())
            .or_insert_with(|| Lane::new(&pacing))
            .waiting
            .insert((priority, ticket), Waiter { call, grant });
        self.tickets.insert(ticket, (key, priority));
        ticket
    }

    /// Removes a ticket still waiting; whether it was.
    fn give_up(&mut self, ticket: u64) -> bool {
        let Some((key, priority)) = self.tickets.remove(&ticket) else {
            return false;
        };
        if let Some(lane) = self.lanes.get_mut(&key) {
            lane.waiting.remove(&(priority, ticket));
        }
        true
    }

    fn pause(
        &mut self,
        lane: Option<&Conversation>,
        kind: CallKind,
        scope: RateScope,
        until: Instant,
    ) {
        let later = |slot: &mut Option<Instant>| *slot = Some(slot.map_or(until, |t| t.max(until)));
        match scope {
            RateScope::Bot => later(&mut self.bot_paused),
            RateScope::Method => {
                let slot = self.kind_paused.entry(kind).or_insert(until);
                *slot = (*slot).max(until);
            }
            RateScope::Chat | RateScope::Route => {
                let pacing = self.pacing;
                let state = self
                    .lanes
                    .entry(lane.cloned())
                    .or_insert_with(|| Lane::new(&pacing));
                if scope == RateScope::Chat {
                    later(&mut state.paused);
                } else {
                    let slot = state.paused_kind.entry(kind).or_insert(until);
                    *slot = (*slot).max(until);
                }
            }
        }
    }

    /// The latest pause covering calls of `kind` into `lane`.
    fn pause_end(&self, lane: Option<&Conversation>, kind: CallKind) -> Option<Instant> {
        let lane = self.lanes.get(&lane.cloned());
        [
            self.bot_paused,
            self.kind_paused.get(&kind).copied(),
            lane.and_then(|l| l.paused),
            lane.and_then(|l| l.paused_kind.get(&kind).copied()),
        ]
        .into_iter()
        .flatten()
        .max()
    }

    fn end(&mut self, id: CallId, at: Instant) {
        let Some((key, kind)) = self.running.remove(&id) else {
            return;
        };
        for log in [
            self.bot.as_mut(),
            self.edits.as_mut().filter(|_| kind.is_edit()),
        ]
        .into_iter()
        .flatten()
        {
            log.end(id, at);
        }
        if let Some(lane) = self.lanes.get_mut(&key) {
            for log in [lane.chat.as_mut(), lane.group.as_mut()]
                .into_iter()
                .flatten()
            {
                log.end(id, at);
            }
        }
    }

    /// Grants every call that may go now, most urgent first; returns when the next one might.
    fn grant_due(shared: &Arc<Shared>, now: Instant) -> Option<Instant> {
        let mut state = shared.lock();
        loop {
            if state.running.len() >= state.pacing.max_in_flight.max(1) {
                return None;
            }
            let (best, next) = state.best_candidate(now);
            let Some((key, slot)) = best else {
                state.forget_idle_lanes(now);
                return next;
            };
            let Some(waiter) = state
                .lanes
                .get_mut(&key)
                .and_then(|lane| lane.waiting.remove(&slot))
            else {
                continue;
            };
            state.tickets.remove(&slot.1);
            let id = state.start(&key, &waiter.call);
            let permit = Permit {
                shared: Some(Arc::clone(shared)),
                id,
            };
            if let Err(mut unwanted) = waiter.grant.send(permit) {
                // Given up in the meantime: this call never happened. Ended here, under the
                // lock the permit's own drop would take.
                unwanted.shared = None;
                state.end(id, now);
            }
        }
    }

    /// The most urgent call that may go now, and otherwise the earliest time one might.
    #[allow(clippy::type_complexity)]
    fn best_candidate(
        &mut self,
        now: Instant,
    ) -> (
        Option<(Option<Conversation>, (Priority, u64))>,
        Option<Instant>,
    ) {
        let bot_free = self.bot.as_mut().map_or(Some(now), |log| log.free_at(now));
        let edits_free = self
            .edits
            .as_mut()
            .map_or(Some(now), |log| log.free_at(now));
        let bot_paused = self.bot_paused;
        let mut best: Option<(Option<Conversation>, (Priority, u64))> = None;
        let mut next: Option<Instant> = None;
        let mut consider =
            |at: Option<Instant>, key: &Option<Conversation>, slot: (Priority, u64)| {
                let Some(at) = at else {
                    return false;
                };
                if at <= now {
                    if best.as_ref().is_none_or(|(_, b)| slot < *b) {
                        best = Some((key.clone(), slot));
                    }
                    true
                } else {
                    next = Some(next.map_or(at, |n| n.min(at)));
                    false
                }
            };
        for (key, lane) in &mut self.lanes {
            if lane.waiting.is_empty() {
                continue;
            }
            let chat_free = lane.chat.as_mut().map_or(Some(now), |log| log.free_at(now));
            let group_free = lane
                .group
                .as_mut()
                .map_or(Some(now), |log| log.free_at(now));
            for (slot, waiter) in &lane.waiting {
                if waiter.grant.is_closed() {
                    continue;
                }
                let kind = waiter.call.kind;
                let counted_in_chat = key.is_some();
                let mut at = Some(now);
                let mut limit = |free: Option<Instant>| {
                    at = match (at, free) {
                        (Some(a), Some(f)) => Some(a.max(f)),
                        _ => None,
                    };
                };
                limit(bot_free);
                if kind.is_edit() {
                    limit(edits_free);
                }
                if counted_in_chat {
                    limit(chat_free);
                    if waiter.call.group {
                        limit(group_free);
                    }
                }
                for pause in [
                    bot_paused,
                    self.kind_paused.get(&kind).copied(),
                    lane.paused,
                    lane.paused_kind.get(&kind).copied(),
                ]
                .into_iter()
                .flatten()
                {
                    limit(Some(pause));
                }
                // The lane's waiting calls are in urgency order: the first that may go is its
                // candidate; a later one is only looked at when a pause or window of its own
                // kind holds the earlier ones.
                if consider(at, key, *slot) {
                    break;
                }
            }
        }
        (best, next)
    }

    /// Counts a granted call in every window that counts it.
    fn start(&mut self, key: &Option<Conversation>, call: &Call) -> CallId {
        let id = CallId(self.next_call);
        self.next_call += 1;
        let kind = call.kind;
        self.running.insert(id, (key.clone(), kind));
        if let Some(log) = self.bot.as_mut() {
            log.start(id);
        }
        if kind.is_edit()
            && let Some(log) = self.edits.as_mut()
        {
            log.start(id);
        }
        if key.is_some()
            && let Some(lane) = self.lanes.get_mut(key)
        {
            if let Some(log) = lane.chat.as_mut() {
                log.start(id);
            }
            if call.group
                && let Some(log) = lane.group.as_mut()
            {
                log.start(id);
            }
        }
        id
    }

    /// Drops lanes with nothing left to count, so memory follows the conversations in use.
    fn forget_idle_lanes(&mut self, now: Instant) {
        let running = &self.running;
        self.lanes
            .retain(|key, lane| !lane.is_idle(now) || running.values().any(|(k, _)| k == key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Destination;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn chat(id: &str) -> Conversation {
        Conversation {
            account_id: None,
            destination: Destination::Chat(id.into()),
        }
    }

    fn call(lane: &str, kind: CallKind, priority: Priority) -> Call {
        Call {
            lane: Some(chat(lane)),
            group: false,
            kind,
            priority,
        }
    }

    fn send(lane: &str) -> Call {
        call(lane, CallKind::Send, Priority::Card)
    }

    /// Runs a call that takes `takes` through `pacer`; when it started, from `start`.
    async fn run(pacer: &Pacer, call: Call, takes: Duration, start: Instant) -> Duration {
        let permit = pacer.turn(call).await;
        let began = start.elapsed();
        tokio::time::sleep(takes).await;
        drop(permit);
        began
    }

    fn per_chat(calls: u32, per: f64) -> Pacing {
        Pacing {
            chat: Some(Window {
                calls,
                per: secs(per),
            }),
            ..Pacing::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn spaces_a_conversation_from_the_end_of_its_last_call() {
        let pacer = Pacer::new(per_chat(1, 1.0));
        let start = Instant::now();
        let latency = secs(0.2);
        let times = tokio::join!(
            run(&pacer, send("a"), latency, start),
            run(&pacer, send("a"), latency, start),
            run(&pacer, send("b"), latency, start),
            run(&pacer, send("a"), latency, start),
        );
        // Each call in `a` waits for the one before to end, plus the window.
        assert_eq!(times, (secs(0.0), secs(1.2), secs(0.0), secs(2.4)));
    }

    #[tokio::test(start_paused = true)]
    async fn lets_a_window_fill_then_waits_for_its_oldest_call_to_age_out() {
        let pacer = Pacer::new(Pacing {
            bot: Some(Window::per_second(3)),
            ..Pacing::default()
        });
        let start = Instant::now();
        let quick = secs(0.1);
        let times = tokio::join!(
            run(&pacer, send("a"), quick, start),
            run(&pacer, send("b"), quick, start),
            run(&pacer, send("c"), quick, start),
            run(&pacer, send("d"), quick, start),
        );
        assert_eq!(times, (secs(0.0), secs(0.0), secs(0.0), secs(1.1)));
    }

    #[tokio::test(start_paused = true)]
    async fn grants_the_most_urgent_waiting_call_first() {
        let pacer = Pacer::new(per_chat(1, 1.0));
        let start = Instant::now();
        let first = pacer.turn(send("a")).await;
        let (reply, card, edit, ()) = tokio::join!(
            run(
                &pacer,
                call("a", CallKind::Send, Priority::Reply),
                secs(0.0),
                start
            ),
            run(&pacer, send("a"), secs(0.0), start),
            run(
                &pacer,
                call("a", CallKind::Update, Priority::Edit),
                secs(0.0),
                start
            ),
            async {
                tokio::time::sleep(secs(0.5)).await;
                drop(first);
            },
        );
        assert_eq!((edit, card, reply), (secs(1.5), secs(2.5), secs(3.5)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_chat_pause_holds_that_chat_and_calls_already_waiting_until_it_ends() {
        let pacer = Pacer::new(Pacing::default());
        let start = Instant::now();
        pacer.pause(Some(&chat("a")), CallKind::Send, RateScope::Chat, secs(5.0));
        let (held_send, held_edit, other) = tokio::join!(
            run(&pacer, send("a"), secs(0.0), start),
            run(
                &pacer,
                call("a", CallKind::Update, Priority::Edit),
                secs(0.0),
                start
            ),
            run(&pacer, send("b"), secs(0.0), start),
        );
        assert_eq!(
            (held_send, held_edit, other),
            (secs(5.0), secs(5.0), secs(0.0))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_route_pause_holds_one_kind_of_call_in_one_chat() {
        let pacer = Pacer::new(Pacing::default());
        let start = Instant::now();
        pacer.pause(
            Some(&chat("a")),
            CallKind::Send,
            RateScope::Route,
            secs(2.0),
        );
        let (send_a, edit_a, send_b) = tokio::join!(
            run(&pacer, send("a"), secs(0.0), start),
            run(
                &pacer,
                call("a", CallKind::Update, Priority::Edit),
                secs(0.0),
                start
            ),
            run(&pacer, send("b"), secs(0.0), start),
        );
        assert_eq!((send_a, edit_a, send_b), (secs(2.0), secs(0.0), secs(0.0)));
    }

    #[tokio::test(start_paused = true)]
    async fn method_and_bot_pauses_reach_every_chat() {
        let pacer = Pacer::new(Pacing::default());
        let start = Instant::now();
        pacer.pause(None, CallKind::Update, RateScope::Method, secs(1.0));
        pacer.pause(None, CallKind::Send, RateScope::Bot, secs(3.0));
        let (edit, send_b, answer) = tokio::join!(
            run(
                &pacer,
                call("a", CallKind::Update, Priority::Edit),
                secs(0.0),
                start
            ),
            run(&pacer, send("b"), secs(0.0), start),
            run(
                &pacer,
                Call {
                    lane: None,
                    group: false,
                    kind: CallKind::Answer,
                    priority: Priority::Answer
                },
                secs(0.0),
                start
            ),
        );
        assert_eq!((edit, send_b, answer), (secs(3.0), secs(3.0), secs(3.0)));
        assert_eq!(
            pacer.paused_until(Some(&chat("a")), CallKind::Send),
            None,
            "over"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn bounds_the_calls_in_flight() {
        let pacer = Pacer::new(Pacing {
            max_in_flight: 2,
            ..Pacing::default()
        });
        let start = Instant::now();
        let slow = secs(1.0);
        let times = tokio::join!(
            run(&pacer, send("a"), slow, start),
            run(&pacer, send("b"), slow, start),
            run(&pacer, send("c"), slow, start),
        );
        assert_eq!(times, (secs(0.0), secs(0.0), secs(1.0)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_given_up_leaves_its_place_to_the_next() {
        let pacer = Pacer::new(per_chat(1, 1.0));
        let start = Instant::now();
        drop(pacer.turn(send("a")).await);
        let given_up = tokio::time::timeout(secs(0.1), pacer.turn(send("a"))).await;
        assert!(given_up.is_err());
        assert_eq!(run(&pacer, send("a"), secs(0.0), start).await, secs(1.0));
    }

    #[tokio::test(start_paused = true)]
    async fn counts_groups_in_their_own_window_too() {
        let pacer = Pacer::new(Pacing {
            group: Some(Window {
                calls: 2,
                per: secs(10.0),
            }),
            ..Pacing::default()
        });
        let start = Instant::now();
        let group = Call {
            group: true,
            ..send("g")
        };
        let times = tokio::join!(
            run(&pacer, group.clone(), secs(0.0), start),
            run(&pacer, group.clone(), secs(0.0), start),
            run(&pacer, group, secs(0.0), start),
        );
        assert_eq!(times, (secs(0.0), secs(0.0), secs(10.0)));
    }
}
