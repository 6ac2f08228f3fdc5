//! The dispatcher's memory: approvals with messages open, each message's phase, and each
//! conversation's queue; and the one decision every worker asks for, what to do next
//! ([`State::next_job`]). Everything here runs under the dispatcher's lock, without awaiting.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use gatehouse_policy::ApprovalDecision;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::digest::render_digest;
use super::{GRACE, QueueStatus, Resumed, ResumedApproval, ResumedPhase, Settlement};
use crate::error::ChatError;
use crate::journal::{EntryKind, JournalEntry};
use crate::render::{ApprovalView, Card};
use crate::route::{Conversation, MessageLocator, Route, SendKey};
use crate::throttle::Priority;

/// A conversation on a channel: one queue, one worker.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct LaneId {
    pub(super) channel: String,
    pub(super) conversation: Conversation,
}

impl LaneId {
    pub(super) fn of(route: &Route) -> LaneId {
        LaneId {
            channel: route.channel.clone(),
            conversation: route.conversation(),
        }
    }
}

/// Where a message is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Phase {
    /// Its intent is being recorded with its approval's.
    Planning,
    /// Its intent still has to be recorded (a digest, a fallback, or a batch that failed).
    Unplanned,
    /// Waiting to be sent (or sent again).
    Queued,
    /// Its worker is sending it.
    Sending,
    /// An attempt may have landed without our knowing where: it was under way when the last
    /// process died, or its answer was lost on a platform that finds a message by its key. Sent
    /// again under its key, also once its approval settled, so the copy is found and edited.
    InDoubt,
    /// Delivered; edited when its approval settles.
    Delivered(MessageLocator),
    /// Its worker is editing it.
    Editing(MessageLocator),
    /// To be recorded as never sent.
    Skip,
    /// To be recorded as lost, with why.
    Lose(String),
}

/// One message.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) journal: JournalEntry,
    pub(super) lane: LaneId,
    pub(super) group: bool,
    /// A card's button tokens: the same for every attempt, so a copy an attempt left behind
    /// carries the buttons that work.
    pub(super) tokens: Vec<(ApprovalDecision, String)>,
    pub(super) phase: Phase,
    pub(super) attempts: u32,
    /// Failures in a row, for the backoff.
    pub(super) failures: u32,
    pub(super) due: Instant,
    /// Its last failure was a refusal, not a hiccup: counts towards the `/approve` fallback.
    pub(super) refused: bool,
    seq: u64,
}

/// An approval with messages open.
#[derive(Debug)]
pub(super) struct Slot {
    /// What its cards show; `None` for one resumed already settled.
    pub(super) view: Option<Arc<ApprovalView>>,
    pub(super) settled: Option<(Arc<Settlement>, Instant)>,
    pub(super) entries: Vec<SendKey>,
    /// Where the `/approve` commands go if no prompt arrives anywhere.
    fallback: Option<Route>,
    fallback_planned: bool,
    delivered_prompt: bool,
}

/// A digest standing for the messages held in its conversation.
#[derive(Debug)]
pub(super) struct DigestState {
    pub(super) key: SendKey,
    /// What the delivered digest shows now.
    pub(super) shown: Option<Card>,
    /// Few enough wait again: its last edit says so and the rest go out as cards.
    pub(super) closing: bool,
}

/// One conversation's queue.
#[derive(Debug)]
pub(super) struct Lane {
    pub(super) conversation: Conversation,
    /// A route into it, for its digest.
    route: Route,
    group: bool,
    /// Its messages, in the order they were queued.
    keys: BTreeMap<u64, SendKey>,
    pub(super) digest: Option<DigestState>,
    worker: bool,
    pub(super) wake: Arc<Notify>,
}

/// What a worker does next.
#[derive(Debug)]
pub(super) enum Next {
    Job(Box<Job>),
    /// Nothing due; look again at this time, or when woken.
    Wait(Option<Instant>),
    /// The conversation has nothing left: the worker ends (its lane is gone).
    Exit,
}

/// One step of a worker.
#[derive(Debug)]
pub(super) enum Job {
    /// Record a message's intent.
    Plan(JournalEntry),
    /// Record that a message was never sent.
    Skip(SendKey),
    /// Record that a message is lost, with why.
    Lose(SendKey, String),
    /// Send a message.
    Send(SendJob),
    /// Edit (or delete) a delivered message.
    Edit(EditJob),
}

#[derive(Debug)]
pub(super) struct SendJob {
    pub(super) key: SendKey,
    pub(super) lane: LaneId,
    pub(super) route: Route,
    pub(super) group: bool,
    pub(super) content: Content,
    pub(super) priority: Priority,
    pub(super) attempt: u32,
    /// Sent again after a crash to find the copy an earlier attempt may have left.
    pub(super) reconcile: bool,
}

/// What a send shows, rendered when its turn comes (so a card's expiry text is current).
#[derive(Debug)]
pub(super) enum Content {
    Approval {
        view: Arc<ApprovalView>,
        kind: EntryKind,
        tokens: Vec<(ApprovalDecision, String)>,
    },
    Fixed(Card),
}

#[derive(Debug)]
pub(super) struct EditJob {
    pub(super) key: SendKey,
    pub(super) lane: LaneId,
    pub(super) group: bool,
    pub(super) locator: MessageLocator,
    pub(super) card: Card,
    pub(super) delete: bool,
    /// Edits a digest (which stays open unless it is closing).
    pub(super) digest: bool,
}

/// (channel, chat, message id) of a delivered message.
type CardKey = (String, String, String);

fn card_key(locator: &MessageLocator) -> CardKey {
    (
        locator.channel.clone(),
        locator.chat_id.clone(),
        locator.message_id.clone(),
    )
}

#[derive(Debug, Default)]
pub(super) struct State {
    approvals: HashMap<String, Slot>,
    entries: HashMap<SendKey, Entry>,
    lanes: HashMap<LaneId, Lane>,
    /// Which approval each delivered message shows.
    cards: HashMap<CardKey, String>,
    /// Settled approvals whose tokens and cards are forgotten at the given time.
    forget: VecDeque<(Instant, String)>,
    next_seq: u64,
}

/// The urgency of a worker's jobs: bookkeeping first, then the platform calls by priority.
fn rank(job: &Candidate) -> (u8, Option<Priority>) {
    match job {
        Candidate::Bookkeeping => (0, None),
        Candidate::Call(priority) => (1, Some(*priority)),
    }
}

/// The job a worker picks: the most urgent, then the one due first, then the oldest.
struct Choice {
    order: ((u8, Option<Priority>), Instant, u64),
    key: SendKey,
}

#[derive(Debug, Clone, Copy)]
enum Candidate {
    Bookkeeping,
    Call(Priority),
}

impl State {
    pub(super) fn add_approval(&mut self, view: Arc<ApprovalView>, fallback: Option<Route>) {
        self.approvals.insert(
            view.id.clone(),
            Slot {
                view: Some(view),
                settled: None,
                entries: Vec::new(),
                fallback,
                fallback_planned: false,
                delivered_prompt: false,
            },
        );
    }

    pub(super) fn add_entry(
        &mut self,
        journal: JournalEntry,
        group: bool,
        tokens: Vec<(ApprovalDecision, String)>,
        phase: Phase,
    ) {
        let lane_id = LaneId::of(&journal.route);
        let seq = self.next_seq;
        self.next_seq += 1;
        let lane = self.lanes.entry(lane_id.clone()).or_insert_with(|| Lane {
            conversation: lane_id.conversation.clone(),
            route: journal.route.clone(),
            group,
            keys: BTreeMap::new(),
            digest: None,
            worker: false,
            wake: Arc::new(Notify::new()),
        });
        lane.keys.insert(seq, journal.key.clone());
        if let Some(slot) = journal
            .approval_id
            .as_ref()
            .and_then(|id| self.approvals.get_mut(id))
        {
            slot.entries.push(journal.key.clone());
        }
        self.entries.insert(
            journal.key.clone(),
            Entry {
                journal,
                lane: lane_id,
                group,
                tokens,
                phase,
                attempts: 0,
                failures: 0,
                due: Instant::now(),
                refused: false,
                seq,
            },
        );
    }

    /// The intent of `key` was recorded (`Queued`) or could not be (`Unplanned`). A message
    /// whose approval settled meanwhile is never sent: recorded as such, or simply forgotten
    /// when nothing was recorded.
    pub(super) fn planned(&mut self, key: &SendKey, next: Phase) {
        let settled = self.settled_of(key).is_some();
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        if entry.phase != Phase::Planning {
            return;
        }
        match next {
            Phase::Unplanned if settled => self.remove(key),
            Phase::Queued if settled => entry.phase = Phase::Skip,
            other => entry.phase = other,
        }
    }

    /// Whether `key`'s conversation is a group, which the caller knows from its channel.
    pub(super) fn set_group(&mut self, key: &SendKey, group: bool) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.group = group;
        }
    }

    pub(super) fn route_of(&self, key: &SendKey) -> Option<Route> {
        self.entries
            .get(key)
            .map(|entry| entry.journal.route.clone())
    }

    /// What `approval_id`'s cards show, while it has messages here.
    pub(super) fn view_of(&self, approval_id: &str) -> Option<Arc<ApprovalView>> {
        self.approvals.get(approval_id)?.view.clone()
    }

    pub(super) fn lane_of(&self, key: &SendKey) -> Option<LaneId> {
        self.entries.get(key).map(|entry| entry.lane.clone())
    }

    pub(super) fn lane_by_name(&self, channel: &str, conversation: &str) -> Option<&Lane> {
        self.lanes
            .iter()
            .find(|(id, _)| id.channel == channel && id.conversation.to_string() == conversation)
            .map(|(_, lane)| lane)
    }

    /// Wakes `lane`'s worker; returns the lane when it has none yet, for the caller to start.
    pub(super) fn wake(&mut self, lane: &LaneId) -> Option<LaneId> {
        let state = self.lanes.get_mut(lane)?;
        if state.worker {
            state.wake.notify_one();
            None
        } else {
            state.worker = true;
            Some(lane.clone())
        }
    }

    pub(super) fn settled_of(&self, key: &SendKey) -> Option<Arc<Settlement>> {
        let entry = self.entries.get(key)?;
        let id = entry.journal.approval_id.as_ref()?;
        self.approvals
            .get(id)?
            .settled
            .as_ref()
            .map(|(settlement, _)| Arc::clone(settlement))
    }

    /// Marks an approval settled; the keys whose workers must look again.
    pub(super) fn settle(
        &mut self,
        approval_id: &str,
        settlement: Arc<Settlement>,
        now: Instant,
    ) -> Vec<SendKey> {
        let Some(slot) = self.approvals.get_mut(approval_id) else {
            return Vec::new();
        };
        if slot.settled.is_some() {
            return Vec::new();
        }
        slot.settled = Some((settlement, now));
        self.forget.push_back((now + GRACE, approval_id.to_owned()));
        let keys = slot.entries.clone();
        let mut forgotten = Vec::new();
        for key in &keys {
            let Some(entry) = self.entries.get_mut(key) else {
                continue;
            };
            match entry.phase {
                // Dropped at once, not at its next try: until then it would still be listed as
                // undelivered.
                Phase::Queued => {
                    entry.phase = Phase::Skip;
                    entry.due = now;
                }
                // Never recorded: nothing to undo anywhere.
                Phase::Unplanned => forgotten.push(key.clone()),
                Phase::Delivered(_) => entry.due = now,
                _ => {}
            }
        }
        for key in forgotten {
            self.remove(&key);
        }
        keys
    }

    /// Takes an open message of the journal back; see [`super::Dispatcher::resume`].
    pub(super) fn resume(
        &mut self,
        resumed: Resumed,
        group: bool,
        idempotent: bool,
        tokens: Vec<(ApprovalDecision, String)>,
        now: Instant,
    ) {
        let Resumed {
            entry,
            attempts,
            phase,
            approval,
        } = resumed;
        let settled = match (&approval, &entry.approval_id) {
            (Some(ResumedApproval::Pending(view)), Some(id)) => {
                if !self.approvals.contains_key(id) {
                    self.add_approval(Arc::new(view.clone()), None);
                }
                false
            }
            (Some(ResumedApproval::Settled(settlement)), Some(id)) => {
                if !self.approvals.contains_key(id) {
                    self.approvals.insert(
                        id.clone(),
                        Slot {
                            view: None,
                            settled: Some((Arc::new(settlement.clone()), now)),
                            entries: Vec::new(),
                            fallback: None,
                            fallback_planned: true,
                            delivered_prompt: true,
                        },
                    );
                    self.forget.push_back((now + GRACE, id.clone()));
                }
                true
            }
            // A digest, always closed after a restart: its count is not known any more.
            _ => true,
        };
        let is_digest = entry.kind == EntryKind::Digest;
        let next = match phase {
            // Tried before: a failed attempt may have landed (a lost answer), and the platform
            // finds it by its key, so it is looked up and edited rather than left live.
            ResumedPhase::Queued if settled && idempotent && attempts > 0 => Phase::InDoubt,
            ResumedPhase::Queued if settled => Phase::Skip,
            ResumedPhase::Queued => Phase::Queued,
            ResumedPhase::InFlight if idempotent => Phase::InDoubt,
            // Pending, on a platform that cannot say whether it landed: sending again may
            // duplicate it, but not sending may leave the approval without a card.
            ResumedPhase::InFlight if !settled => Phase::Queued,
            ResumedPhase::InFlight => Phase::Lose(
                "an attempt to send it was under way when the gateway stopped, and the \
                 platform offers no way to find it: the chat may show a stale card"
                    .to_owned(),
            ),
            ResumedPhase::Delivered(locator) => {
                if let Some(id) = &entry.approval_id {
                    self.cards.insert(card_key(&locator), id.clone());
                }
                Phase::Delivered(locator)
            }
        };
        let key = entry.key.clone();
        let lane = LaneId::of(&entry.route);
        self.add_entry(entry, group, tokens, next);
        if let Some(resumed) = self.entries.get_mut(&key) {
            resumed.attempts = attempts;
            resumed.due = now;
        }
        if is_digest && let Some(lane) = self.lanes.get_mut(&lane) {
            lane.digest = Some(DigestState {
                key,
                shown: None,
                closing: true,
            });
        }
    }

    /// The next thing `lane`'s worker does; see [`Next`].
    pub(super) fn next_job(&mut self, lane_id: &LaneId, now: Instant, digest_after: usize) -> Next {
        self.keep_digest(lane_id, digest_after);
        let Some(lane) = self.lanes.get(lane_id) else {
            return Next::Exit;
        };
        if lane.keys.is_empty() && lane.digest.is_none() {
            self.lanes.remove(lane_id);
            return Next::Exit;
        }
        let holding = lane.digest.as_ref().is_some_and(|digest| !digest.closing);
        let mut best: Option<Choice> = None;
        let mut later: Option<Instant> = None;
        for key in lane.keys.values() {
            let Some(entry) = self.entries.get(key) else {
                continue;
            };
            let Some(candidate) = self.candidate(entry, lane, holding) else {
                continue;
            };
            if entry.due > now {
                later = Some(later.map_or(entry.due, |l| l.min(entry.due)));
                continue;
            }
            let order = (rank(&candidate), entry.due, entry.seq);
            if best.as_ref().is_none_or(|b| order < b.order) {
                best = Some(Choice {
                    order,
                    key: key.clone(),
                });
            }
        }
        match best {
            Some(choice) => self
                .take(&choice.key, lane_id)
                .map_or(Next::Wait(later), |job| Next::Job(Box::new(job))),
            None => Next::Wait(later),
        }
    }

    /// What `entry` would be now, if anything.
    fn candidate(&self, entry: &Entry, lane: &Lane, holding: bool) -> Option<Candidate> {
        let kind = entry.journal.kind;
        match &entry.phase {
            Phase::Unplanned | Phase::Skip | Phase::Lose(_) => Some(Candidate::Bookkeeping),
            Phase::Queued => {
                let held = holding && is_held(kind);
                let closing_digest =
                    kind == EntryKind::Digest && lane.digest.as_ref().is_some_and(|d| d.closing);
                if closing_digest {
                    // Never sent and no longer needed.
                    return Some(Candidate::Bookkeeping);
                }
                (!held).then(|| Candidate::Call(send_priority(kind)))
            }
            Phase::InDoubt => Some(Candidate::Call(Priority::Card)),
            Phase::Delivered(_) if kind == EntryKind::Digest => {
                let digest = lane.digest.as_ref()?;
                (digest.shown.as_ref() != Some(&self.digest_card(lane, digest.closing)))
                    .then_some(Candidate::Call(Priority::Edit))
            }
            Phase::Delivered(_) => self
                .settled_of(&entry.journal.key)
                .map(|_| Candidate::Call(Priority::Edit)),
            Phase::Planning | Phase::Sending | Phase::Editing(_) => None,
        }
    }

    /// Turns the chosen entry into its job, marking it taken.
    fn take(&mut self, key: &SendKey, lane_id: &LaneId) -> Option<Job> {
        let settled = self.settled_of(key);
        let lane = self.lanes.get(lane_id)?;
        let closing = lane.digest.as_ref().is_some_and(|d| d.closing);
        let digest_card = self.digest_card(lane, closing);
        let entry = self.entries.get(key)?;
        let kind = entry.journal.kind;
        let view = entry
            .journal
            .approval_id
            .as_ref()
            .and_then(|id| self.approvals.get(id))
            .and_then(|slot| slot.view.clone());
        let phase = entry.phase.clone();
        let job = match phase {
            Phase::Unplanned => {
                let journal = entry.journal.clone();
                self.set_phase(key, Phase::Planning);
                return Some(Job::Plan(journal));
            }
            Phase::Skip => return Some(Job::Skip(key.clone())),
            Phase::Queued if kind == EntryKind::Digest && closing => {
                return Some(Job::Skip(key.clone()));
            }
            Phase::Lose(reason) => return Some(Job::Lose(key.clone(), reason)),
            Phase::Queued | Phase::InDoubt => {
                // Sent again under its key to find the copy an attempt under way at a crash
                // may have left; for a settled approval it shows the final card at once.
                let reconcile = phase == Phase::InDoubt;
                let settled = settled.filter(|_| reconcile);
                let content = self.content(entry, view, &digest_card, settled.as_deref())?;
                Job::Send(self.send_job(entry, content, reconcile))
            }
            Phase::Delivered(locator) => {
                let (card, delete) = if kind == EntryKind::Digest {
                    (digest_card, false)
                } else {
                    let settlement = settled?;
                    let delete = settlement.delete_on.contains(&locator.channel);
                    (settlement.card.clone(), delete)
                };
                Job::Edit(EditJob {
                    key: key.clone(),
                    lane: entry.lane.clone(),
                    group: entry.group,
                    locator,
                    card,
                    delete,
                    digest: kind == EntryKind::Digest,
                })
            }
            Phase::Planning | Phase::Sending | Phase::Editing(_) => return None,
        };
        let taken = match &job {
            Job::Edit(edit) => Phase::Editing(edit.locator.clone()),
            _ => Phase::Sending,
        };
        self.set_phase(key, taken);
        Some(job)
    }

    /// What a send of `entry` shows: its approval's prompt, notice or fallback; the digest;
    /// or, sent again to find a copy of a settled approval, its final card.
    fn content(
        &self,
        entry: &Entry,
        view: Option<Arc<ApprovalView>>,
        digest_card: &Card,
        settled: Option<&Settlement>,
    ) -> Option<Content> {
        if entry.journal.kind == EntryKind::Digest {
            return Some(Content::Fixed(digest_card.clone()));
        }
        if let Some(settlement) = settled {
            return Some(Content::Fixed(settlement.card.clone()));
        }
        Some(Content::Approval {
            view: view?,
            kind: entry.journal.kind,
            tokens: entry.tokens.clone(),
        })
    }

    fn send_job(&self, entry: &Entry, content: Content, reconcile: bool) -> SendJob {
        SendJob {
            key: entry.journal.key.clone(),
            lane: entry.lane.clone(),
            route: entry.journal.route.clone(),
            group: entry.group,
            content,
            priority: send_priority(entry.journal.kind),
            attempt: entry.attempts + 1,
            reconcile,
        }
    }

    /// A step of `key` could not be recorded: tried again after `delay`, as it was.
    pub(super) fn retry_later(
        &mut self,
        key: &SendKey,
        delay: std::time::Duration,
        reconcile: bool,
    ) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        entry.due = Instant::now() + delay;
        if entry.phase == Phase::Sending {
            entry.attempts = entry.attempts.saturating_sub(1);
            entry.phase = if reconcile {
                Phase::InDoubt
            } else {
                Phase::Queued
            };
        }
    }

    pub(super) fn is_digest(&self, key: &SendKey) -> bool {
        self.entries
            .get(key)
            .is_some_and(|entry| entry.journal.kind == EntryKind::Digest)
    }

    pub(super) fn set_phase(&mut self, key: &SendKey, phase: Phase) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.phase = phase;
        }
    }

    /// Whether a send of `key` that got its turn should still be made: its approval may have
    /// settled while it waited (then it is never sent), or its conversation may have started
    /// a digest.
    pub(super) fn still_wanted(&mut self, key: &SendKey, reconcile: bool) -> bool {
        let settled = self.settled_of(key).is_some();
        let Some(entry) = self.entries.get_mut(key) else {
            return false;
        };
        if entry.phase != Phase::Sending {
            return false;
        }
        let kind = entry.journal.kind;
        if settled && !reconcile && kind != EntryKind::Digest {
            entry.phase = Phase::Skip;
            return false;
        }
        let holding = self
            .lanes
            .get(&entry.lane)
            .and_then(|lane| lane.digest.as_ref())
            .is_some_and(|digest| !digest.closing);
        if holding && is_held(kind) {
            entry.phase = Phase::Queued;
            return false;
        }
        entry.attempts += 1;
        true
    }

    /// A send delivered `key` at `locator`.
    pub(super) fn delivered(&mut self, key: &SendKey, locator: &MessageLocator, now: Instant) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        entry.phase = Phase::Delivered(locator.clone());
        entry.failures = 0;
        entry.refused = false;
        entry.due = now;
        let kind = entry.journal.kind;
        if let Some(id) = entry.journal.approval_id.clone() {
            self.cards.insert(card_key(locator), id.clone());
            if kind.is_prompt()
                && let Some(slot) = self.approvals.get_mut(&id)
            {
                slot.delivered_prompt = true;
            }
        }
    }

    /// The digest `key` now shows `card`; returns whether it was its closing form, which
    /// ends it.
    pub(super) fn digest_shown(&mut self, key: &SendKey, card: Card) -> bool {
        let Some(lane_id) = self.entries.get(key).map(|entry| entry.lane.clone()) else {
            return false;
        };
        if let Some(entry) = self.entries.get_mut(key)
            && let Phase::Editing(locator) = &entry.phase
        {
            entry.phase = Phase::Delivered(locator.clone());
        }
        let Some(digest) = self.lanes.get_mut(&lane_id).and_then(|l| l.digest.as_mut()) else {
            return false;
        };
        let closed = digest.closing && card.state == crate::render::CardState::Notice;
        digest.shown = Some(card);
        closed
    }

    /// A send or edit of `key` failed with `error`; the next try is due after `delay`.
    /// Returns whether an `/approve` fallback was just queued.
    pub(super) fn failed(
        &mut self,
        key: &SendKey,
        error: &ChatError,
        delay: std::time::Duration,
        now: Instant,
        reconcile: bool,
        in_doubt: bool,
    ) -> Failed {
        let settled = self.settled_of(key).is_some();
        let settled_at = self
            .entries
            .get(key)
            .and_then(|e| e.journal.approval_id.as_ref())
            .and_then(|id| self.approvals.get(id))
            .and_then(|slot| slot.settled.as_ref().map(|(_, at)| *at));
        let Some(entry) = self.entries.get_mut(key) else {
            return Failed::Gone;
        };
        entry.failures += 1;
        entry.refused = !error.is_retryable();
        entry.due = now + delay;
        let digest = entry.journal.kind == EntryKind::Digest;
        entry.phase = match std::mem::replace(&mut entry.phase, Phase::Queued) {
            Phase::Editing(locator) => {
                if settled_at.is_some_and(|at| now.duration_since(at) > super::FINISH_HORIZON) {
                    return self.lose_after_horizon(key, error);
                }
                Phase::Delivered(locator)
            }
            Phase::Sending if reconcile || in_doubt => Phase::InDoubt,
            // Its approval settled while it was tried: it is never sent now.
            Phase::Sending if settled && !digest => Phase::Skip,
            _ => Phase::Queued,
        };
        if entry.phase == Phase::Skip {
            entry.due = now;
        }
        let kind = entry.journal.kind;
        let approval = entry.journal.approval_id.clone();
        if kind.is_prompt()
            && let Some(id) = approval
            && self.fallback_due(&id)
        {
            return Failed::Fallback(self.queue_fallback(&id));
        }
        Failed::Retry
    }

    fn lose_after_horizon(&mut self, key: &SendKey, error: &ChatError) -> Failed {
        let reason = format!("its final edit was refused for a day: {error}");
        self.set_phase(key, Phase::Lose(reason));
        Failed::Retry
    }

    /// Every prompt of the approval was refused (not merely delayed), none arrived, and it has
    /// an origin to send the `/approve` commands to.
    fn fallback_due(&self, approval_id: &str) -> bool {
        let Some(slot) = self.approvals.get(approval_id) else {
            return false;
        };
        if slot.settled.is_some()
            || slot.fallback_planned
            || slot.delivered_prompt
            || slot.fallback.is_none()
        {
            return false;
        }
        let mut prompts = slot
            .entries
            .iter()
            .filter_map(|key| self.entries.get(key))
            .filter(|entry| entry.journal.kind.is_prompt())
            .peekable();
        prompts.peek().is_some() && prompts.all(|entry| entry.refused)
    }

    fn queue_fallback(&mut self, approval_id: &str) -> SendKey {
        let key = SendKey::random();
        let Some(slot) = self.approvals.get_mut(approval_id) else {
            return key;
        };
        slot.fallback_planned = true;
        let Some(route) = slot.fallback.clone() else {
            return key;
        };
        let entry = JournalEntry {
            key: key.clone(),
            approval_id: Some(approval_id.to_owned()),
            kind: EntryKind::Fallback,
            route,
        };
        // A group origin is counted as one when its first message was planned.
        let group = self
            .lanes
            .get(&LaneId::of(&entry.route))
            .is_some_and(|lane| lane.group);
        self.add_entry(entry, group, Vec::new(), Phase::Unplanned);
        key
    }

    /// `key` needs nothing more: forgotten here.
    pub(super) fn remove(&mut self, key: &SendKey) {
        let Some(entry) = self.entries.remove(key) else {
            return;
        };
        if let Some(lane) = self.lanes.get_mut(&entry.lane) {
            lane.keys.remove(&entry.seq);
            if lane.digest.as_ref().is_some_and(|d| d.key == *key) {
                lane.digest = None;
            }
        }
        if let Some(id) = &entry.journal.approval_id
            && let Some(slot) = self.approvals.get_mut(id)
        {
            slot.entries.retain(|k| k != key);
            if slot.entries.is_empty() && slot.settled.is_some() {
                self.approvals.remove(id);
            }
        }
    }

    /// Starts, closes or reopens `lane`'s digest from how many approval messages it holds.
    fn keep_digest(&mut self, lane_id: &LaneId, digest_after: usize) {
        let waiting = self.held_views(lane_id).len();
        let Some(lane) = self.lanes.get_mut(lane_id) else {
            return;
        };
        match &mut lane.digest {
            None if waiting > digest_after => {
                let key = SendKey::random();
                lane.digest = Some(DigestState {
                    key: key.clone(),
                    shown: None,
                    closing: false,
                });
                let entry = JournalEntry {
                    key,
                    approval_id: None,
                    kind: EntryKind::Digest,
                    route: lane.route.clone(),
                };
                let group = lane.group;
                self.add_entry(entry, group, Vec::new(), Phase::Unplanned);
            }
            Some(digest) if !digest.closing && waiting <= digest_after / 2 => digest.closing = true,
            Some(digest) if digest.closing && waiting > digest_after => digest.closing = false,
            _ => {}
        }
    }

    /// The approvals whose messages wait in `lane` to be sent, oldest first.
    fn held_views(&self, lane_id: &LaneId) -> Vec<&ApprovalView> {
        let Some(lane) = self.lanes.get(lane_id) else {
            return Vec::new();
        };
        lane.keys
            .values()
            .filter_map(|key| self.entries.get(key))
            .filter(|entry| is_held(entry.journal.kind) && entry.phase == Phase::Queued)
            .filter_map(|entry| entry.journal.approval_id.as_ref())
            .filter_map(|id| self.approvals.get(id))
            .filter(|slot| slot.settled.is_none())
            .filter_map(|slot| slot.view.as_deref())
            .collect()
    }

    fn digest_card(&self, lane: &Lane, closing: bool) -> Card {
        let id = LaneId {
            channel: lane.route.channel.clone(),
            conversation: lane.conversation.clone(),
        };
        self.digest_card_for(&id, closing)
    }

    fn digest_card_for(&self, lane: &LaneId, closing: bool) -> Card {
        render_digest(&self.held_views(lane), closing)
    }

    pub(super) fn card_approval(&self, message: &MessageLocator) -> Option<String> {
        self.cards.get(&card_key(message)).cloned()
    }

    /// Approvals whose grace is over: their cards are forgotten here, their tokens by the caller.
    pub(super) fn take_forgettable(&mut self, now: Instant) -> HashSet<String> {
        let mut due = HashSet::new();
        while self.forget.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, id)) = self.forget.pop_front() {
                due.insert(id);
            }
        }
        if !due.is_empty() {
            self.cards.retain(|_, approval| !due.contains(approval));
        }
        due
    }

    pub(super) fn queues(&self) -> Vec<QueueStatus> {
        let mut queues: Vec<QueueStatus> = self
            .lanes
            .iter()
            .map(|(id, lane)| {
                let mut waiting = 0;
                let mut to_edit = 0;
                for entry in lane.keys.values().filter_map(|key| self.entries.get(key)) {
                    if entry.journal.kind == EntryKind::Digest {
                        continue;
                    }
                    match entry.phase {
                        Phase::Planning
                        | Phase::Unplanned
                        | Phase::Queued
                        | Phase::Sending
                        | Phase::InDoubt => waiting += 1,
                        Phase::Editing(_) => to_edit += 1,
                        Phase::Delivered(_) if self.settled_of(&entry.journal.key).is_some() => {
                            to_edit += 1;
                        }
                        _ => {}
                    }
                }
                QueueStatus {
                    channel: id.channel.clone(),
                    conversation: id.conversation.to_string(),
                    waiting,
                    to_edit,
                    digest: lane.digest.is_some(),
                    paused_for: None,
                }
            })
            .filter(|queue| queue.waiting > 0 || queue.to_edit > 0 || queue.digest)
            .collect();
        queues.sort_by(|a, b| (&a.channel, &a.conversation).cmp(&(&b.channel, &b.conversation)));
        queues
    }

    pub(super) fn sizes(&self) -> (usize, usize) {
        (self.approvals.len(), self.entries.len())
    }

    /// The entry's lane's wake-up, and whether the lane is still there.
    pub(super) fn lane_wake(&self, lane: &LaneId) -> Option<Arc<Notify>> {
        self.lanes.get(lane).map(|l| Arc::clone(&l.wake))
    }

    pub(super) fn entry_tokens(&self, key: &SendKey) -> Vec<(ApprovalDecision, String)> {
        self.entries
            .get(key)
            .map(|entry| entry.tokens.clone())
            .unwrap_or_default()
    }

    /// Failures in a row so far.
    pub(super) fn failures_of(&self, key: &SendKey) -> u32 {
        self.entries.get(key).map_or(0, |entry| entry.failures)
    }

    /// A job given back before its call (something more urgent came up): as it was.
    pub(super) fn put_back(&mut self, key: &SendKey, reconcile: bool) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        entry.phase = match std::mem::replace(&mut entry.phase, Phase::Queued) {
            Phase::Editing(locator) => Phase::Delivered(locator),
            Phase::Sending if reconcile => Phase::InDoubt,
            Phase::Sending => Phase::Queued,
            other => other,
        };
    }

    /// Whether `lane` has a call more urgent than `priority` due now: a worker waiting for the
    /// turn of a less urgent one gives it up for it.
    pub(super) fn more_urgent(&self, lane_id: &LaneId, priority: Priority, now: Instant) -> bool {
        let Some(lane) = self.lanes.get(lane_id) else {
            return false;
        };
        let holding = lane.digest.as_ref().is_some_and(|digest| !digest.closing);
        lane.keys
            .values()
            .filter_map(|key| self.entries.get(key))
            .filter(|entry| entry.due <= now)
            .any(|entry| {
                matches!(self.candidate(entry, lane, holding),
                    Some(Candidate::Call(other)) if other < priority)
            })
    }
}

/// The outcome of [`State::failed`].
#[derive(Debug)]
pub(super) enum Failed {
    Retry,
    /// Every prompt was refused: the fallback with this key was queued.
    Fallback(SendKey),
    Gone,
}

/// Messages a digest stands for while it holds them back.
fn is_held(kind: EntryKind) -> bool {
    matches!(
        kind,
        EntryKind::Card | EntryKind::TextPrompt | EntryKind::OriginNotice
    )
}

fn send_priority(kind: EntryKind) -> Priority {
    match kind {
        EntryKind::Card | EntryKind::TextPrompt | EntryKind::Digest => Priority::Card,
        EntryKind::OriginNotice | EntryKind::Fallback => Priority::Notice,
    }
}
