//! Carrying approvals to chats and keeping every copy true: each planned message is recorded
//! in the [`Journal`] before it is sent, sent through the channel's pacer by the worker of its
//! conversation, retried with backoff and jitter until it is delivered or its approval settles,
//! and edited into its final card once it does; after a restart the journal's open messages
//! are picked up where they were ([`Dispatcher::resume`]).
//!
//! **One worker per conversation.** Every conversation with work has one task that does it one
//! call at a time, most urgent first: recording steps, edits of settled cards, cards and
//! prompts, then notices. The channel's [`Pacer`](crate::throttle::Pacer) orders the workers'
//! calls against each other and against replies.
//!
//! **Digests.** When more approval messages wait in one conversation than the channel's
//! `digest_after`, they are held back and one digest stands for them all ("12 approvals
//! waiting…"), edited as approvals come and go; once no more than half that many wait, the
//! digest says so and the rest go out as cards. A message whose approval settled before it was
//! sent is never sent.
//!
//! **Memory.** An approval's state lives while it has messages in flight or waiting; its button
//! tokens and the index of its cards (for replies to a card) are forgotten [`GRACE`] after it
//! settles. Nothing here grows with the history of approvals.

mod digest;
mod state;
mod work;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::time::Instant;

use crate::channel::Channel;
use crate::delivery::Deliverer;
use crate::journal::{EntryKind, Journal, JournalEntry};
use crate::plan::DeliveryPlan;
use crate::render::{
    ApprovalView, Card, ResolveOutcome, render_cancelled, render_expired, render_receipt,
};
use crate::route::{MessageLocator, Route, SendKey};
use crate::token::{TokenRegistry, TokenStore};

use state::{LaneId, Phase, State};

/// The connected channels, by name.
pub type Channels = HashMap<String, Arc<dyn Channel>>;

/// Milliseconds since the Unix epoch, from the caller's clock (the journal's times, card expiry
/// text and token checks use it).
pub type WallClock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// How long an approval's button tokens and card index outlive its settling, so a press or a
/// reply racing the final edit is still answered with what happened.
pub const GRACE: Duration = Duration::from_secs(60);

/// How long the final edit of a card is retried before it is given up as lost.
pub const FINISH_HORIZON: Duration = Duration::from_secs(24 * 60 * 60);

/// What the copies of a settled approval become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// The receipt, expiry or cancellation card.
    pub card: Card,
    /// Channels whose copies are deleted instead (`cleanupAfterResolve` on a decision).
    pub delete_on: HashSet<String>,
}

/// How an approval ended, for [`Dispatcher::close`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closing {
    /// A person decided.
    Decided(ResolveOutcome),
    /// Nobody decided in time.
    Expired,
    /// Withdrawn, with why.
    Cancelled(String),
}

/// An approval as a resumed message needs it.
#[derive(Debug, Clone)]
pub enum ResumedApproval {
    /// Still pending (another gateway's, or a store that keeps approvals across restarts):
    /// what its card shows.
    Pending(ApprovalView),
    /// Settled: what its copies become.
    Settled(Settlement),
}

/// Where a journalled message was when the last process stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumedPhase {
    /// Not sent yet (perhaps tried and refused).
    Queued,
    /// An attempt was under way: it may or may not have landed.
    InFlight,
    /// Delivered here.
    Delivered(MessageLocator),
}

/// One open message of the journal, for [`Dispatcher::resume`].
#[derive(Debug, Clone)]
pub struct Resumed {
    /// The message.
    pub entry: JournalEntry,
    /// Attempts made so far.
    pub attempts: u32,
    /// Where it was.
    pub phase: ResumedPhase,
    /// Its approval; `None` for a digest.
    pub approval: Option<ResumedApproval>,
}

/// A conversation with messages waiting, as `gateway.status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueStatus {
    /// The channel.
    pub channel: String,
    /// The conversation.
    pub conversation: String,
    /// Approval messages waiting to be sent.
    pub waiting: usize,
    /// Copies of settled approvals waiting for their final edit.
    pub to_edit: usize,
    /// Whether a digest stands for the waiting messages.
    pub digest: bool,
    /// How much longer the platform holds sends here (a 429), if it does.
    pub paused_for: Option<Duration>,
}

/// Delivery of every approval to every chat; see the module docs.
pub struct Dispatcher<S: TokenStore> {
    /// The connected channels.
    pub channels: Channels,
    /// Pacing, settings and the records of replies and answers.
    pub deliverer: Deliverer,
    /// Button tokens.
    pub tokens: TokenRegistry<S>,
    /// The longest command shown in a card.
    pub max_command_chars: usize,
    journal: Arc<dyn Journal>,
    clock: WallClock,
    state: Mutex<State>,
}

impl<S: TokenStore> std::fmt::Debug for Dispatcher<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.channels.keys().collect();
        names.sort_unstable();
        f.debug_struct("Dispatcher")
            .field("channels", &names)
            .finish_non_exhaustive()
    }
}

impl<S: TokenStore + 'static> Dispatcher<S> {
    /// A dispatcher over `channels`, recording in `journal`. Call [`Dispatcher::start`] inside
    /// a tokio runtime before anything else.
    pub fn new(
        channels: Channels,
        deliverer: Deliverer,
        tokens: TokenRegistry<S>,
        journal: Arc<dyn Journal>,
        clock: WallClock,
    ) -> Self {
        Dispatcher {
            channels,
            deliverer,
            tokens,
            max_command_chars: crate::render::DEFAULT_MAX_COMMAND_CHARS,
            journal,
            clock,
            state: Mutex::new(State::default()),
        }
    }

    /// Starts forgetting the tokens and cards of settled approvals once their grace is over.
    pub fn start(self: &Arc<Self>) {
        tokio::spawn(forget_periodically(Arc::downgrade(self)));
    }

    /// An approval was requested: registers one message per planned route at once (so a
    /// [`Dispatcher::settle`] that follows finds them), records them in the journal in the
    /// background, then queues them. Cards get their button tokens here, issued once for every
    /// attempt. Must run inside a tokio runtime.
    pub fn request(self: &Arc<Self>, view: ApprovalView, plan: &DeliveryPlan) {
        if plan.messages.is_empty() {
            return;
        }
        let view = Arc::new(view);
        let entries: Vec<JournalEntry> = plan
            .messages
            .iter()
            .map(|message| JournalEntry {
                key: SendKey::random(),
                approval_id: Some(view.id.clone()),
                kind: message.kind.into(),
                route: message.route.clone(),
            })
            .collect();
        {
            let mut state = self.lock();
            state.add_approval(Arc::clone(&view), plan.fallback_route.clone());
            for entry in &entries {
                let tokens = if entry.kind == EntryKind::Card {
                    self.tokens.issue(
                        &view.id,
                        &entry.route.channel,
                        &view.offered_decisions(),
                        view.expires_at_ms,
                    )
                } else {
                    Vec::new()
                };
                let group = self.is_group(&entry.route);
                state.add_entry(entry.clone(), group, tokens, Phase::Planning);
            }
        }
        let dispatcher = Arc::clone(self);
        tokio::spawn(async move {
            let planned = dispatcher.journal.plan(&entries).await;
            if let Err(error) = &planned {
                tracing::error!(approval_id = %view.id, error = %error, "Cannot record chat messages; trying again before sending.");
            }
            let next = if planned.is_ok() {
                Phase::Queued
            } else {
                Phase::Unplanned
            };
            let mut state = dispatcher.lock();
            for entry in &entries {
                state.planned(&entry.key, next.clone());
                dispatcher.wake(&mut state, &entry.key);
            }
        });
    }

    /// An approval was decided, expired or cancelled: its copies become `closing`, rendered
    /// from what they showed (see [`Dispatcher::settle`]). Nothing happens for an approval
    /// this dispatcher has no messages of.
    pub fn close(
        self: &Arc<Self>,
        approval_id: &str,
        closing: Closing,
        delete_on: HashSet<String>,
    ) {
        let Some(view) = self.lock().view_of(approval_id) else {
            return;
        };
        let max = self.max_command_chars;
        let card = match closing {
            Closing::Decided(outcome) => render_receipt(&view, &outcome, max),
            Closing::Expired => render_expired(&view, max),
            Closing::Cancelled(reason) => render_cancelled(&view, &reason, max),
        };
        self.settle(approval_id, Settlement { card, delete_on });
    }

    /// An approval settled: its waiting messages are dropped, and every delivered copy is
    /// edited into `settlement` (or deleted), also those still on their way.
    pub fn settle(self: &Arc<Self>, approval_id: &str, settlement: Settlement) {
        let mut state = self.lock();
        let now = Instant::now();
        let keys = state.settle(approval_id, Arc::new(settlement), now);
        for key in keys {
            self.wake(&mut state, &key);
        }
    }

    /// Picks up the journal's open messages after a restart: copies of settled approvals are
    /// edited, messages of settled approvals never sent are dropped, an attempt that was under
    /// way is found again by its key where the platform keeps one (else reported lost), and
    /// the messages of approvals still pending are sent.
    pub fn resume(self: &Arc<Self>, open: Vec<Resumed>) {
        let mut state = self.lock();
        let now = Instant::now();
        for resumed in open {
            let key = resumed.entry.key.clone();
            let group = self.is_group(&resumed.entry.route);
            let idempotent = self
                .channels
                .get(&resumed.entry.route.channel)
                .is_some_and(|channel| finds_earlier_attempts(channel.as_ref()));
            // A card of a pending approval sent from here on carries tokens this process
            // knows; one delivered before the restart keeps buttons that no longer work.
            let tokens = match (&resumed.approval, resumed.entry.kind) {
                (Some(ResumedApproval::Pending(view)), EntryKind::Card) => self.tokens.issue(
                    &view.id,
                    &resumed.entry.route.channel,
                    &view.offered_decisions(),
                    view.expires_at_ms,
                ),
                _ => Vec::new(),
            };
            state.resume(resumed, group, idempotent, tokens, now);
            self.wake(&mut state, &key);
        }
    }

    /// The approval a delivered message shows, while it or its grace lasts: a reply to a card
    /// names its approval.
    pub fn card_approval(&self, message: &MessageLocator) -> Option<String> {
        self.lock().card_approval(message)
    }

    /// Every conversation with messages waiting or copies to edit.
    pub fn queues(&self) -> Vec<QueueStatus> {
        let state = self.lock();
        let mut queues = state.queues();
        for queue in &mut queues {
            queue.paused_for = self.paused_for(&state, &queue.channel, &queue.conversation);
        }
        queues
    }

    /// How many approvals the dispatcher holds state for (pending, or settled with copies
    /// still to edit), and how many messages: for the soak bench's memory figures.
    pub fn in_memory(&self) -> (usize, usize) {
        self.lock().sizes()
    }

    fn paused_for(&self, state: &State, channel: &str, conversation: &str) -> Option<Duration> {
        let lane = state.lane_by_name(channel, conversation)?;
        let until = self
            .deliverer
            .pacer(channel)
            .paused_until(Some(&lane.conversation), crate::throttle::CallKind::Send)?;
        Some(until.saturating_duration_since(Instant::now()))
    }

    fn is_group(&self, route: &Route) -> bool {
        self.channels
            .get(&route.channel)
            .is_some_and(|channel| channel.is_group(&route.destination))
    }

    /// Wakes the worker of `key`'s conversation, starting one if it has none.
    fn wake(self: &Arc<Self>, state: &mut State, key: &SendKey) {
        let Some(lane) = state.lane_of(key) else {
            return;
        };
        self.wake_lane(state, &lane);
    }

    fn wake_lane(self: &Arc<Self>, state: &mut State, lane: &LaneId) {
        if let Some(start) = state.wake(lane) {
            tokio::spawn(work::run_lane(Arc::clone(self), start));
        }
    }

    fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// The state survives a panic unharmed: each change is made under one lock hold.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets the tokens and card index of approvals whose grace ended.
    fn forget_due(&self) {
        let due = self.lock().take_forgettable(Instant::now());
        if !due.is_empty() {
            self.tokens.forget(&due);
        }
    }
}

/// Whether a message an earlier attempt may have left on `channel` can be found again: by
/// sending under the same key (Discord) or by looking it up (Slack).
pub(crate) fn finds_earlier_attempts(channel: &dyn Channel) -> bool {
    channel.idempotent_sends() || channel.finds_sent()
}

/// How often settled approvals are looked at for forgetting.
const FORGET_EVERY: Duration = Duration::from_secs(5);

async fn forget_periodically<S: TokenStore + 'static>(dispatcher: Weak<Dispatcher<S>>) {
    loop {
        tokio::time::sleep(FORGET_EVERY).await;
        let Some(dispatcher) = dispatcher.upgrade() else {
            return;
        };
        dispatcher.forget_due();
    }
}
