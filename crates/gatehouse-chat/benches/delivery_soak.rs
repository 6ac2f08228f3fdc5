//! Delivery under sustained and bursty traffic, on tokio's paused clock (minutes of traffic run
//! in seconds, with every pacing window, backoff and grace period as in production):
//!
//! - **Soak:** approvals arrive steadily, each to three approvers' DMs, and are decided two
//!   seconds later, for nine minutes at Telegram's limits. After each minute the bench records
//!   the bytes the delivery layer (dispatcher, pacer, button tokens, card index) still holds,
//!   counted by a global allocator; memory that is flat in the traffic shows as a ratio to the
//!   first minute near 1.
//! - **Burst:** 300 approvals in ten seconds to the same three approvers. The bench reports the
//!   highest per-chat and per-bot rates seen (as a ratio to the configured limit), the calls
//!   made (digests instead of 900 cards), and how long until every copy is settled.
//!
//! The platform is a stand-in answering every call after a fixed latency, as the fakes do: the
//! figures are of Gatehouse's own delivery layer. The outbox lives in the database (SQLite
//! allocates outside Rust's allocator), so the bench's journal keeps nothing. Figures go to
//! `docs/performance.md` ("Chat delivery").

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::alloc::System;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use gatehouse_chat::channel::{Channel, Inbound, InteractionRef};
use gatehouse_chat::delivery::{Deliverer, DeliverySettings, RetryPolicy};
use gatehouse_chat::dispatch::{Channels, Closing, Dispatcher};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::journal::{Journal, JournalEntry, JournalError, Recorded, Transition};
use gatehouse_chat::plan::{DeliveryPlan, MessageKind, PlannedMessage};
use gatehouse_chat::render::{ApprovalView, Card};
use gatehouse_chat::route::{Destination, MessageLocator, Route, SendKey};
use gatehouse_chat::throttle::{Pacing, Window};
use gatehouse_chat::token::{MemoryTokenStore, TokenRegistry};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio::sync::mpsc;
use tokio::time::Instant;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const CHANNEL: &str = "telegram";

/// How long each platform call takes.
const LATENCY: Duration = Duration::from_millis(60);

/// Telegram's documented limits, as its adapter states them.
fn telegram_pacing() -> Pacing {
    Pacing {
        chat: Some(Window::per_second(1)),
        group: Some(Window::per_minute(20)),
        bot: Some(Window::per_second(30)),
        edits: None,
        max_in_flight: 8,
    }
}

/// A platform that takes every call after [`LATENCY`]; in the burst it also records when each
/// call arrived and where.
struct Platform {
    next_id: AtomicU64,
    calls: Option<Mutex<Vec<(Instant, String)>>>,
}

impl Platform {
    fn new(record: bool) -> Platform {
        Platform {
            next_id: AtomicU64::new(1),
            calls: record.then(|| Mutex::new(Vec::new())),
        }
    }

    fn arrive(&self, chat: &str) {
        if let Some(calls) = &self.calls {
            calls
                .lock()
                .unwrap()
                .push((Instant::now(), chat.to_owned()));
        }
    }
}

#[async_trait]
impl Channel for Platform {
    fn name(&self) -> &str {
        CHANNEL
    }

    fn pacing(&self) -> Pacing {
        telegram_pacing()
    }

    async fn send(
        &self,
        route: &Route,
        _card: &Card,
        _key: &SendKey,
    ) -> Result<MessageLocator, ChatError> {
        let chat = match &route.destination {
            Destination::Dm(user) | Destination::Chat(user) => user.clone(),
        };
        self.arrive(&chat);
        tokio::time::sleep(LATENCY).await;
        Ok(MessageLocator {
            channel: CHANNEL.to_owned(),
            account_id: None,
            chat_id: chat,
            message_id: self.next_id.fetch_add(1, Ordering::Relaxed).to_string(),
            thread_id: None,
        })
    }

    async fn update(&self, message: &MessageLocator, _card: &Card) -> Result<(), ChatError> {
        self.arrive(&message.chat_id);
        tokio::time::sleep(LATENCY).await;
        Ok(())
    }

    async fn delete(&self, message: &MessageLocator) -> Result<(), ChatError> {
        self.update(message, &empty_card()).await
    }

    async fn answer(&self, _interaction: &InteractionRef, _text: &str) -> Result<(), ChatError> {
        Ok(())
    }

    async fn run(&self, _inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        Ok(())
    }
}

fn empty_card() -> Card {
    gatehouse_chat::render::render_expired(&view(0), 200)
}

/// The outbox is in the database; the bench's journal accepts every record and keeps nothing.
struct DatabaseElsewhere;

#[async_trait]
impl Journal for DatabaseElsewhere {
    async fn plan(&self, _entries: &[JournalEntry]) -> Result<(), JournalError> {
        Ok(())
    }

    async fn record(
        &self,
        _key: &SendKey,
        _transition: Transition<'_>,
        _at_ms: u64,
    ) -> Result<Recorded, JournalError> {
        Ok(Recorded::Applied)
    }
}

fn view(n: u64) -> ApprovalView {
    ApprovalView {
        id: format!("{n:08x}-7b2d-4c1a-9e55-1234567890ab"),
        command: format!("make deploy TARGET=host-{n}"),
        cwd: Some("/srv/projects/website".into()),
        agent_id: Some("main".into()),
        host: None,
        resolved_path: Some("/usr/bin/make".into()),
        env_keys: vec!["DEPLOY_TOKEN".into()],
        expires_at_ms: u64::MAX / 2,
        allow_always_offered: true,
        chain: None,
        tool: None,
    }
}

/// Cards to `approvers`' DMs.
fn plan(approvers: &[u64]) -> DeliveryPlan {
    DeliveryPlan {
        messages: approvers
            .iter()
            .map(|user| PlannedMessage {
                route: Route {
                    channel: CHANNEL.to_owned(),
                    account_id: None,
                    destination: Destination::Dm(user.to_string()),
                    thread_id: None,
                },
                kind: MessageKind::Card,
            })
            .collect(),
        fallback_route: None,
    }
}

fn dispatcher(platform: Arc<Platform>) -> Arc<Dispatcher<MemoryTokenStore>> {
    let channel: Arc<dyn Channel> = platform;
    let channels: Channels = [(CHANNEL.to_owned(), channel)].into();
    let settings = DeliverySettings {
        pacing: telegram_pacing(),
        ..DeliverySettings::default()
    };
    let started = Instant::now();
    let dispatcher = Arc::new(Dispatcher::new(
        channels,
        Deliverer::new(RetryPolicy::default()).with_settings(CHANNEL, settings),
        TokenRegistry::in_memory(),
        Arc::new(DatabaseElsewhere),
        Arc::new(move || 1_800_000_000_000 + millis(started.elapsed())),
    ));
    dispatcher.start();
    dispatcher
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Bytes allocated and not freed since `region` began (a realloc counts its growth as
/// allocated and its shrinking as freed already).
fn held(region: &Region<'_, System>) -> i64 {
    let change = region.change();
    i64::try_from(change.bytes_allocated).unwrap_or(i64::MAX)
        - i64::try_from(change.bytes_deallocated).unwrap_or(i64::MAX)
}

/// Approvals per second in the soak, each to [`SOAK_FANOUT`] of [`SOAK_APPROVERS`] approvers,
/// decided [`SOAK_DECIDE_AFTER`] later: 24 calls a second, under Telegram's 30 per bot, and
/// about 0.5 a second per DM, under its 1 per chat.
const SOAK_PER_SECOND: u64 = 4;
const SOAK_APPROVERS: u64 = 48;
const SOAK_FANOUT: u64 = 3;
const SOAK_DECIDE_AFTER: Duration = Duration::from_secs(2);
const SOAK_MINUTES: u64 = 9;

async fn soak() {
    let region = Region::new(GLOBAL);
    let dispatcher = dispatcher(Arc::new(Platform::new(false)));
    let mut pending: std::collections::VecDeque<(Instant, String)> = Default::default();
    let mut created = 0u64;
    let mut first_minute = None;
    println!(
        "soak: {SOAK_PER_SECOND} approvals/s, {SOAK_FANOUT} DMs each, decided after {SOAK_DECIDE_AFTER:?}"
    );
    println!(
        "| minute | approvals so far | held by delivery | bytes per approval so far | ratio to minute 1 | approvals / messages in memory |"
    );
    println!("|---|---|---|---|---|---|");
    let tick = Duration::from_millis(1000 / SOAK_PER_SECOND);
    for minute in 1..=SOAK_MINUTES {
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            let first = (created * SOAK_FANOUT) % SOAK_APPROVERS;
            let approvers: Vec<u64> = (0..SOAK_FANOUT)
                .map(|i| 1000 + (first + i) % SOAK_APPROVERS)
                .collect();
            let view = view(created);
            pending.push_back((Instant::now() + SOAK_DECIDE_AFTER, view.id.clone()));
            dispatcher.request(view, &plan(&approvers));
            created += 1;
            while pending
                .front()
                .is_some_and(|(due, _)| *due <= Instant::now())
            {
                let (_, id) = pending.pop_front().unwrap();
                dispatcher.close(&id, Closing::Expired, Default::default());
            }
            tokio::time::sleep(tick).await;
        }
        let bytes = held(&region);
        let baseline = *first_minute.get_or_insert(bytes);
        let (approvals, messages) = dispatcher.in_memory();
        println!(
            "| {minute} | {created} | {bytes} B | {:.1} B | {:.2} | {approvals} / {messages} |",
            bytes as f64 / created as f64,
            bytes as f64 / baseline as f64,
        );
    }
}

/// The burst: approvals requested 30 a second (ten seconds) to the same approvers.
const BURST: u64 = 300;
const BURST_SPACING: Duration = Duration::from_millis(33);
const BURST_APPROVERS: [u64; 3] = [4242, 4343, 4444];

async fn burst() {
    let platform = Arc::new(Platform::new(true));
    let dispatcher = dispatcher(Arc::clone(&platform));
    let start = Instant::now();
    let views: Vec<ApprovalView> = (0..BURST).map(view).collect();
    for view in &views {
        dispatcher.request(view.clone(), &plan(&BURST_APPROVERS));
        tokio::time::sleep(BURST_SPACING).await;
    }
    let shown = until_quiet(&platform, start).await;
    let before_decisions = platform.calls.as_ref().unwrap().lock().unwrap().len();
    let digests = dispatcher
        .queues()
        .iter()
        .filter(|queue| queue.digest)
        .count();
    let decided = Instant::now();
    for view in &views {
        dispatcher.close(&view.id, Closing::Expired, Default::default());
    }
    let settled = until_quiet(&platform, decided).await;
    let busy = dispatcher
        .queues()
        .iter()
        .any(|queue| queue.waiting > 0 || queue.to_edit > 0);
    assert!(!busy, "quiet, but work is left: {:?}", dispatcher.queues());
    let calls = platform.calls.as_ref().unwrap().lock().unwrap().clone();
    let per_chat = max_within(&calls, Duration::from_secs(1), |chat| Some(chat.to_owned()));
    let per_bot = max_within(&calls, Duration::from_secs(1), |_| Some(String::new()));
    println!();
    println!(
        "burst: {BURST} approvals in 10 s to {} approvers' DMs (Telegram limits: 1/s per chat, 30/s per bot)",
        BURST_APPROVERS.len()
    );
    println!("| figure | value |");
    println!("|---|---|");
    println!(
        "| calls until every approval was shown (card or digest) | {before_decisions} (instead of {} cards) |",
        BURST * 3
    );
    println!(
        "| chats showing a digest | {digests} of {} |",
        BURST_APPROVERS.len()
    );
    println!(
        "| time until every approval was shown | {:.1} s |",
        shown.as_secs_f64()
    );
    println!(
        "| calls in all, after all {BURST} expired | {} |",
        calls.len()
    );
    println!(
        "| time from the expiries until every copy was settled | {:.1} s |",
        settled.as_secs_f64()
    );
    println!(
        "| busiest chat, calls in any 1 s / limit | {per_chat} / 1 = {:.2} |",
        per_chat as f64
    );
    println!(
        "| whole bot, calls in any 1 s / limit | {per_bot} / 30 = {:.2} |",
        per_bot as f64 / 30.0
    );
}

/// How long without a platform call counts as quiet: longer than any pacing window or backoff
/// that could still be running.
const QUIET: Duration = Duration::from_secs(70);

/// Waits until the platform has had no call for [`QUIET`]; the time from `start` to the last
/// call.
async fn until_quiet(platform: &Platform, start: Instant) -> Duration {
    let last_call = || {
        platform
            .calls
            .as_ref()
            .and_then(|calls| calls.lock().unwrap().last().map(|(at, _)| *at))
            .unwrap_or(start)
    };
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let last = last_call();
        if last.elapsed() >= QUIET {
            return last.max(start) - start;
        }
    }
}

/// The most calls grouped by `group` that arrived within any `window`.
fn max_within(
    calls: &[(Instant, String)],
    window: Duration,
    group: impl Fn(&str) -> Option<String>,
) -> usize {
    let mut by_group: HashMap<String, Vec<Instant>> = HashMap::new();
    for (at, chat) in calls {
        if let Some(key) = group(chat) {
            by_group.entry(key).or_default().push(*at);
        }
    }
    by_group
        .values()
        .map(|times| {
            let mut best = 0;
            let mut first = 0;
            for (last, at) in times.iter().enumerate() {
                while *at - times[first] >= window {
                    first += 1;
                }
                best = best.max(last + 1 - first);
            }
            best
        })
        .max()
        .unwrap_or(0)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(soak());
    runtime.block_on(burst());
}
