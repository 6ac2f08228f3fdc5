//! The approval manager's public face: create, resolve, expire, cancel, wait, consume, look up.
//!
//! The store is the single arbiter of every state change (see `state.rs`); this module checks
//! what callers ask for, finds the approval they name and hands the change to the shared state.

use std::sync::Arc;
use std::time::Duration;

use gatehouse_policy::ApprovalDecision;
use uuid::Uuid;

use crate::clock::{Clock, millis};
use crate::deadlines::Deadlines;
use crate::error::ApprovalError;
use crate::events::{ApprovalEvent, EventBus, EventSubscription, Numbering, Offered};
use crate::grants::{GrantBook, StoredGrant};
use crate::ids::{mint_approval_id, short_id};
use crate::index::{AllowAlwaysPlan, Entry, Index, Key, Status, Waiters};
use crate::record::{
    ApprovalRecord, ApprovalRequest, ApprovalState, ConsumeOutcome, DeliveredMessage, ListFilter,
    Resolution, ResolveOutcome, Retention,
};
use crate::replicas::{follow_log, logged_event};
use crate::short_ids::ShortIds;
use crate::state::{Announce, Inner, not_found_as_unknown, prune_periodically, run_timer};
use crate::store::{AddedEntry, AllowlistStore, ApprovalStore, RunNote};

/// Reason recorded when a pending approval times out.
pub const REASON_TIMEOUT: &str = "timeout";
/// Reason recorded when nobody could be asked.
pub const REASON_NO_ROUTE: &str = "no-approval-route";
/// Reason given when an approval announced before it was durable could not be stored.
pub const REASON_STORE_FAILED: &str = "store-failed";
/// Reason recorded for approvals left pending by an earlier run of the gateway.
pub const REASON_RESTART: &str = "gateway-restart";

/// How many fresh ids `create` tries for one approval before giving up. A fresh id's short id
/// is taken with the odds (approvals stored) / 2^32, about 1 in 43,000 with 100,000 stored, so
/// a second try is rare and a third practically never happens.
const MINT_ATTEMPTS: usize = 8;

/// The most ids an ambiguous prefix lists to a caller allowed to see them.
const MAX_CANDIDATES: usize = 50;

/// Tunables; the defaults are the documented ones.
#[derive(Debug, Clone)]
pub struct ManagerConfig {
    /// How long an approval waits when the request names no timeout (30 minutes).
    pub default_timeout: Duration,
    /// How long a settled approval still answers late resolvers with the winner (15 s).
    pub grace: Duration,
    /// How long terminal approvals are kept in the store for history (30 days).
    pub retention: Retention,
    /// How often history past `retention` is pruned while the manager runs (10 minutes); the
    /// first pass starts with the manager.
    pub prune_every: Duration,
}

impl Default for ManagerConfig {
    fn default() -> ManagerConfig {
        ManagerConfig {
            default_timeout: Duration::from_secs(30 * 60),
            grace: Duration::from_secs(15),
            retention: Retention::default(),
            prune_every: Duration::from_secs(10 * 60),
        }
    }
}

/// Whether a caller may learn the ids of approvals other than the one it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdDisclosure {
    /// An ambiguous prefix reports only how many approvals matched.
    Hidden,
    /// An ambiguous prefix lists the matching ids (operators with the approvals scope).
    Revealed,
}

/// A request to create an approval.
#[derive(Debug, Clone)]
pub struct CreateApproval {
    /// An id chosen by the requester (a UUID); minted with `mint_approval_id` when absent.
    /// Refused when it, or its short id, is already in use.
    pub id: Option<String>,
    /// What is asked, as stored and shown to approvers.
    pub request: ApprovalRequest,
    /// How long to wait, overriding the default.
    pub timeout: Option<Duration>,
    /// The allowlist patterns an allow-always decision would add to `request.agent_id`'s
    /// allowlist. Empty (or no agent id) means the command cannot be persisted, so
    /// allow-always is not offered.
    pub allow_always_patterns: Vec<String>,
}

/// The acknowledgement of a created approval; returned only once it is durably stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The approval's id.
    pub id: Uuid,
    /// When it was created, ms since the epoch.
    pub created_at_ms: u64,
    /// When it expires, ms since the epoch.
    pub expires_at_ms: u64,
    /// The decisions a person may give.
    pub offered: Offered,
}

/// What a resolve did, with the winning record and, for allow-always, the allowlist write.
#[derive(Debug)]
pub struct Resolved {
    /// Applied, repeated (idempotent success) or rejected (`applied: false`), with the winner.
    pub outcome: ResolveOutcome,
    /// What happened to the agent's allowlist.
    pub allowlist: AllowlistWrite,
}

/// The allowlist side of a resolve. The decision stands even when the write fails: the run is
/// allowed once, and the person is told the command will be asked about again next time.
#[derive(Debug)]
pub enum AllowlistWrite {
    /// Not an applied allow-always; the file was not touched.
    NotRequested,
    /// The derived patterns are in the agent's allowlist (new or already present).
    Added(Vec<AddedEntry>),
    /// Writing `exec-approvals.json` failed; nothing was persisted.
    Failed(ApprovalError),
}

/// The approval manager; cheap to clone, all clones share one state.
#[derive(Clone)]
pub struct ApprovalManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ApprovalManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalManager")
            .field("in_memory", &self.inner.index.len())
            .field("short_ids_in_use", &self.inner.short_ids.len())
            .finish_non_exhaustive()
    }
}

/// Where a shared store's event numbers come from; see [`ApprovalManager::shared_sequence`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedSequence {
    /// Names the log; a `seq` from a gateway reporting the same instance means the same event.
    pub instance: String,
    /// The last event appended before this manager started.
    pub start: u64,
}

/// A creator's claim on the decision of the approval it created (see
/// [`ApprovalManager::create_awaited`]); dropping it stops nothing.
pub struct PendingDecision {
    manager: ApprovalManager,
    id: Uuid,
    waiters: Arc<Waiters>,
}

impl std::fmt::Debug for PendingDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingDecision")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl PendingDecision {
    /// Waits until the approval leaves `Pending` and returns its final record, as
    /// [`ApprovalManager::await_decision`] does.
    pub async fn decided(self) -> Result<ApprovalRecord, ApprovalError> {
        match self.manager.settled_for(self.id, &self.waiters).await {
            Some(record) => Ok(record),
            None => self.manager.await_decision(self.id).await,
        }
    }
}

impl ApprovalManager {
    /// Starts the manager: cancels approvals left pending by an earlier run (reason
    /// `gateway-restart`; on a store other gateways share, adopts them instead, and follows
    /// the other gateways' writes from then on), reads the short ids in use from the store (every id in it: about
    /// 50 ms per 200,000 approvals), and starts the timer and the pruner, whose first pass
    /// deletes history older than the retention period in the background. The returned
    /// subscription already holds
    /// the restart cancellations, so the caller sees them although it could not subscribe
    /// earlier. Must run inside a tokio runtime.
    pub async fn start(
        store: Arc<dyn ApprovalStore>,
        allowlists: Arc<dyn AllowlistStore>,
        clock: Arc<dyn Clock>,
        config: ManagerConfig,
    ) -> Result<(ApprovalManager, EventSubscription), ApprovalError> {
        let changes = store.changes();
        // A shared store's log numbers the events; this manager announces those after the
        // last one appended before it started.
        let log_start = match store.event_log() {
            Some(log) if changes.is_some() => Some(log.head().await?),
            _ => None,
        };
        let events = EventBus::new(match log_start {
            Some(_) => Numbering::Log,
            None => Numbering::Local,
        });
        let subscription = events.subscribe();
        let inner = Arc::new(Inner {
            shared: changes.is_some(),
            log_start,
            log_written: Arc::default(),
            store,
            allowlists,
            clock,
            config,
            index: Index::default(),
            short_ids: ShortIds::default(),
            deadlines: Arc::new(Deadlines::default()),
            events,
            grants: GrantBook::default(),
            tasks: std::sync::OnceLock::new(),
        });
        if changes.is_none() {
            inner.cancel_left_pending().await?;
        }
        let stored = inner.read(|store| store.short_ids()).await?;
        inner.short_ids.load(stored);
        let grants = inner.read(|store| store.grants()).await?;
        inner.grants.load(grants);
        let timer = tokio::spawn(run_timer(
            Arc::downgrade(&inner),
            Arc::clone(&inner.deadlines),
            Arc::clone(&inner.clock),
        ));
        let pruner = tokio::spawn(prune_periodically(Arc::downgrade(&inner)));
        let mut tasks = vec![timer.abort_handle(), pruner.abort_handle()];
        if let Some(changes) = changes {
            // Other gateways' pending approvals are theirs to wait on and ours to answer and
            // expire too: adopted, not cancelled.
            inner.adopt_pending().await?;
            let after = inner.log_start.unwrap_or_default();
            let follower = tokio::spawn(follow_log(Arc::downgrade(&inner), changes, after));
            tasks.push(follower.abort_handle());
        }
        // The cell is fresh, so this set cannot fail; the handles are only used to stop the tasks.
        let _ = inner.tasks.set(tasks);
        Ok((ApprovalManager { inner }, subscription))
    }

    /// On a shared store, the event log events are numbered by: its instance (the same on
    /// every gateway using the database) and the number of its last event when this manager
    /// started, after which this manager announces every event. `None` on a store this
    /// gateway alone writes, whose events the manager numbers from 1.
    pub fn shared_sequence(&self) -> Option<SharedSequence> {
        let log = self.inner.store.event_log()?;
        Some(SharedSequence {
            instance: log.instance().to_owned(),
            start: self.inner.log_start?,
        })
    }

    /// On a shared store, the logged events numbered above `after`, oldest first, at most
    /// `limit`, as they were announced (for a client catching up on what it missed, perhaps
    /// on another gateway); `None` on a store without a log.
    pub async fn logged_events_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Option<Vec<ApprovalEvent>>, ApprovalError> {
        let Some(log) = self.inner.store.event_log() else {
            return Ok(None);
        };
        let page = log.events_after(after, limit).await?;
        Ok(Some(page.events.iter().filter_map(logged_event).collect()))
    }

    /// On a shared store, appends a run's event to the event log, behind every write this
    /// manager submitted before it; the log then announces it, in its place, on every gateway
    /// (as [`EventKind::Run`](crate::EventKind::Run)). The append is queued now and the
    /// returned future only tells how it went (its number once committed), so a caller that
    /// must not wait for the database need not. `None` on a store without a shared log: the
    /// caller announces the event itself.
    pub fn log_run(
        &self,
        note: RunNote,
    ) -> Option<impl Future<Output = Result<u64, ApprovalError>> + Send + 'static> {
        if !self.inner.shared {
            return None;
        }
        let log = self.inner.store.event_log()?;
        let appended = log.append_run(note, self.inner.clock.now_ms());
        let wake = Arc::clone(&self.inner.log_written);
        Some(async move {
            let seq = appended.await?;
            // This gateway announces its own run events from the log too, as the others do.
            wake.notify_one();
            Ok(seq)
        })
    }

    /// A new subscriber to approval events, starting with the next event. Its queue has no
    /// bound: keep receiving, or drop it.
    pub fn subscribe(&self) -> EventSubscription {
        self.inner.events.subscribe()
    }

    /// Registers a pending approval durably, then acknowledges it and announces it.
    pub async fn create(&self, create: CreateApproval) -> Result<Created, ApprovalError> {
        self.create_entry(create, None).await
    }

    /// Like [`create`](Self::create), for a creator that will wait for the decision: its place
    /// among the waiters is taken before the approval is announced, so a decision given at once
    /// is handed over instead of read back from the store.
    pub async fn create_awaited(
        &self,
        create: CreateApproval,
    ) -> Result<(Created, PendingDecision), ApprovalError> {
        let waiters = Arc::new(Waiters::default());
        let created = self
            .create_entry(create, Some(Arc::clone(&waiters)))
            .await?;
        let pending = PendingDecision {
            manager: self.clone(),
            id: created.id,
            waiters,
        };
        Ok((created, pending))
    }

    /// On a store other gateways share, a minted id's short id may be held by an approval
    /// this manager has not heard of yet: the store's constraint refuses it, and a fresh id is
    /// tried. Such ids are announced only once stored, so a refused one is never shown.
    async fn create_entry(
        &self,
        mut create: CreateApproval,
        waiters: Option<Arc<Waiters>>,
    ) -> Result<Created, ApprovalError> {
        let attempts = if create.id.is_none() && self.inner.shared {
            MINT_ATTEMPTS
        } else {
            1
        };
        let mut attempt = 1;
        loop {
            let request = if attempt < attempts {
                create.request.clone()
            } else {
                std::mem::take(&mut create.request)
            };
            match self.create_once(&create, request, waiters.clone()).await {
                Err(ApprovalError::ShortIdInUse { .. }) if attempt < attempts => attempt += 1,
                created => return created,
            }
        }
    }

    async fn create_once(
        &self,
        create: &CreateApproval,
        request: ApprovalRequest,
        waiters: Option<Arc<Waiters>>,
    ) -> Result<Created, ApprovalError> {
        let inner = &self.inner;
        let created_at_ms = inner.clock.now_ms();
        let (id, announce) = match &create.id {
            Some(text) => (self.claim_chosen(text)?, Announce::Durable),
            // 74 random bits beside the time cannot be taken, and its short id is claimed
            // here, so only a failing store (or a short id another gateway holds) can refuse
            // a fresh id.
            None if inner.shared => (self.claim_minted(created_at_ms)?, Announce::Durable),
            None => (self.claim_minted(created_at_ms)?, Announce::Early),
        };
        let plan = allow_always_plan_for(&request, &create.allow_always_patterns);
        let offered = Offered {
            allow_always: plan.is_some(),
        };
        let timeout = create.timeout.unwrap_or(inner.config.default_timeout);
        let expires_at_ms = created_at_ms.saturating_add(millis(timeout));
        let entry = Entry {
            status: Status::Pending,
            allow_always: plan.map(Box::new),
            waiters,
        };
        if !inner.index.insert_new(id, entry) {
            // Unreachable while the short ids are exact: the entry in memory holds this one's.
            return Err(ApprovalError::IdInUse { id });
        }
        let times = (created_at_ms, expires_at_ms);
        inner
            .register(id, request, offered, times, announce)
            .await?;
        Ok(Created {
            id,
            created_at_ms,
            expires_at_ms,
            offered,
        })
    }

    /// Parses a requester's id and claims its short id. An id still in memory is `IdInUse`, as
    /// ever; any other whose short id is taken (by a stored approval, perhaps this very id) is
    /// `ShortIdInUse`. Neither says whose approval holds it.
    fn claim_chosen(&self, text: &str) -> Result<Uuid, ApprovalError> {
        let id = Uuid::try_parse(text).map_err(|_| ApprovalError::InvalidId {
            id: text.to_owned(),
        })?;
        if self.inner.short_ids.claim(short_id(&id)) {
            Ok(id)
        } else if self.inner.index.status(&id).is_some() {
            Err(ApprovalError::IdInUse { id })
        } else {
            Err(ApprovalError::ShortIdInUse { id })
        }
    }

    /// Mints an id whose short id is not in use, and claims it.
    fn claim_minted(&self, created_at_ms: u64) -> Result<Uuid, ApprovalError> {
        self.inner
            .short_ids
            .claim_first(MINT_ATTEMPTS, || mint_approval_id(created_at_ms))
            .ok_or(ApprovalError::NoFreeShortId {
                attempts: MINT_ATTEMPTS,
            })
    }

    /// Answers an approval named by id or unique prefix. The first answer wins; the same answer
    /// again is an idempotent success; a different later answer reports the winner with
    /// `applied: false`. Answers to expired or cancelled approvals are errors.
    pub async fn resolve(
        &self,
        key: &str,
        decision: ApprovalDecision,
        resolved_by: &str,
        disclosure: IdDisclosure,
    ) -> Result<Resolved, ApprovalError> {
        self.resolve_because(key, decision, resolved_by, None, disclosure)
            .await
    }

    /// [`resolve`](Self::resolve) with the reason the person gave, which is stored as the
    /// approval's `reason` and carried by its `resolved` event when this answer wins.
    pub async fn resolve_because(
        &self,
        key: &str,
        decision: ApprovalDecision,
        resolved_by: &str,
        reason: Option<String>,
        disclosure: IdDisclosure,
    ) -> Result<Resolved, ApprovalError> {
        let inner = &self.inner;
        let id = self.find(key, disclosure).await?;
        let plan = match inner.index.get(&id) {
            Some(entry) if entry.status == Status::Pending => {
                let offered = Offered {
                    allow_always: entry.allow_always.is_some(),
                };
                if !offered.contains(decision) {
                    return Err(ApprovalError::DecisionNotOffered { id, decision });
                }
                entry.allow_always.clone()
            }
            // In the grace period the store reports the winner.
            Some(_) => None,
            None => return Err(self.settled_error(id).await?),
        };
        let resolution = Resolution::Decided {
            decision,
            resolved_by: Some(resolved_by.to_owned()),
            reason,
        };
        let patterns = plan.filter(|plan| {
            decision == ApprovalDecision::AllowAlways
                && matches!(**plan, AllowAlwaysPlan::Patterns { .. })
        });
        let (outcome, allowlist) = match patterns {
            None => (
                inner.transition(id, resolution).await?,
                AllowlistWrite::NotRequested,
            ),
            Some(plan) => {
                // One task for the swap and the allowlist write, so a caller that stops waiting
                // cannot leave an applied allow-always without its patterns.
                let inner = Arc::clone(inner);
                tokio::spawn(async move {
                    let outcome = inner.transition(id, resolution).await?;
                    let allowlist = match &outcome {
                        ResolveOutcome::Applied(record) => {
                            inner.persist_allow_always(record, *plan).await
                        }
                        _ => AllowlistWrite::NotRequested,
                    };
                    Ok::<_, ApprovalError>((outcome, allowlist))
                })
                .await??
            }
        };
        match outcome.winner().state {
            ApprovalState::Expired | ApprovalState::Cancelled if !outcome.applied() => {
                Err(terminal_error(id, outcome.winner()))
            }
            _ => Ok(Resolved { outcome, allowlist }),
        }
    }

    /// Expires a pending approval at once because no approver can be reached.
    pub async fn expire_no_route(&self, id: Uuid) -> Result<ResolveOutcome, ApprovalError> {
        self.transition(
            id,
            Resolution::Expired {
                reason: REASON_NO_ROUTE.to_owned(),
            },
        )
        .await
    }

    /// Withdraws a pending approval (the requester went away, the gateway shuts down).
    pub async fn cancel(&self, id: Uuid, reason: &str) -> Result<ResolveOutcome, ApprovalError> {
        self.transition(
            id,
            Resolution::Cancelled {
                reason: reason.to_owned(),
            },
        )
        .await
    }

    /// Waits until the approval leaves `Pending` and returns its final record: the one the
    /// settling change stored, handed over with the wake-up, or read from the store when it had
    /// already settled before the wait began.
    pub async fn await_decision(&self, id: Uuid) -> Result<ApprovalRecord, ApprovalError> {
        loop {
            let waiters = match self.inner.index.get_mut(&id) {
                Some(mut entry) if entry.status == Status::Pending => {
                    Arc::clone(entry.waiters.get_or_insert_with(Default::default))
                }
                _ => break,
            };
            if let Some(record) = self.settled_for(id, &waiters).await {
                return Ok(record);
            }
        }
        let record = self.record(id).await?;
        if record.state == ApprovalState::Pending {
            // In the store but not in this manager's memory: not ours to wait on.
            return Err(ApprovalError::Unknown { id });
        }
        Ok(record)
    }

    /// Waits on `waiters` while `id` is pending and returns the record its settling handed
    /// over; `None` when it left pending without handing one to these waiters.
    async fn settled_for(&self, id: Uuid, waiters: &Waiters) -> Option<ApprovalRecord> {
        let notified = waiters.wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        // Settling fills the record and then wakes, after changing the status under the
        // entry's lock, so a status read after `enable` cannot miss the wake-up.
        if waiters.settled.get().is_none() && self.inner.index.status(&id) == Some(Status::Pending)
        {
            notified.await;
        }
        waiters.settled.get().cloned()
    }

    /// Takes the single run an allow-once approval grants; a second call is a replay and fails.
    pub async fn consume_allow_once(&self, id: Uuid) -> Result<ApprovalRecord, ApprovalError> {
        let now = self.inner.clock.now_ms();
        let key = id.to_string();
        let outcome = self
            .inner
            .queued(
                |store, done| store.consume_allow_once(key, now, done),
                |_, _| {},
            )
            .await
            .map_err(|error| not_found_as_unknown(error, id))?;
        match outcome {
            ConsumeOutcome::Consumed(record) => Ok(record),
            ConsumeOutcome::AlreadyConsumed(_) => Err(ApprovalError::AlreadyConsumed { id }),
            ConsumeOutcome::NotAllowOnce(record) => Err(ApprovalError::NotAllowOnce {
                id,
                state: record.state,
                decision: record.decision,
            }),
        }
    }

    /// The stored record of an approval named by id or unique prefix.
    pub async fn get(
        &self,
        key: &str,
        disclosure: IdDisclosure,
    ) -> Result<ApprovalRecord, ApprovalError> {
        let id = self.find(key, disclosure).await?;
        self.record(id).await
    }

    /// Remembers a chat message that shows the approval, so it can be edited when the approval
    /// settles or is cancelled by a restart (`get` returns the messages with the record).
    pub async fn record_delivery(
        &self,
        id: Uuid,
        message: DeliveredMessage,
    ) -> Result<(), ApprovalError> {
        let key = id.to_string();
        self.inner
            .queued(
                |store, done| store.record_delivery(key, message, done),
                |_, _| {},
            )
            .await
            .map_err(|error| not_found_as_unknown(error, id))
    }

    /// Stored approvals matching the filter, oldest first.
    pub async fn list(&self, filter: ListFilter) -> Result<Vec<ApprovalRecord>, ApprovalError> {
        // An approval already announced may still be queued for the store; with nothing in
        // memory there is nothing to wait for.
        if self.in_memory() > 0 {
            self.after_queued_writes().await?;
        }
        self.inner.read(|store| store.list(filter)).await
    }

    /// The allow-always grants covering `agent_id`'s tool calls, from memory: cheap enough to
    /// ask on every call.
    pub fn grants_for(&self, agent_id: &str) -> Arc<[gatehouse_policy::tool_call::Grant]> {
        self.inner.grants.for_agent(agent_id)
    }

    /// The stored grants, oldest first, of one agent or of every agent.
    pub fn grants(&self, agent_id: Option<&str>) -> Vec<StoredGrant> {
        self.inner.grants.list(agent_id)
    }

    /// Revokes the grant named by its id or a unique prefix of it: deleted from the store,
    /// then forgotten, so no later call is covered by it. Returns the grant as it was.
    pub async fn revoke_grant(&self, key: &str) -> Result<StoredGrant, ApprovalError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(ApprovalError::UnknownGrant {
                key: key.to_owned(),
            });
        }
        let id = match self.inner.grants.matching(key).as_slice() {
            [] => {
                return Err(ApprovalError::UnknownGrant {
                    key: key.to_owned(),
                });
            }
            [only] => only.clone(),
            several => {
                return Err(ApprovalError::AmbiguousGrant {
                    key: key.to_owned(),
                    ids: several.to_vec(),
                });
            }
        };
        let revoked = self
            .inner
            .queued(
                |store, done| store.revoke_grant(id.clone(), done),
                |inner, result| {
                    if let Ok(Some(grant)) = result {
                        inner.grants.remove(&grant.id);
                    }
                },
            )
            .await?;
        // Gone from the store already (another gateway on the same database): forget it too.
        self.inner.grants.remove(&id);
        revoked.ok_or(ApprovalError::UnknownGrant {
            key: key.to_owned(),
        })
    }

    /// How many approvals this manager holds in memory (pending plus those in their grace).
    pub fn in_memory(&self) -> usize {
        self.inner.index.len()
    }

    /// Resolves a key to one id. A prefix must match exactly one approval among those in memory
    /// (pending, in their grace period, or announced while their insert is still queued) and
    /// those in the store, taken together: a prefix that is unique in memory may also match an
    /// older approval in the store, and a person who typed it may mean either.
    async fn find(&self, key: &str, disclosure: IdDisclosure) -> Result<Uuid, ApprovalError> {
        let reveal = disclosure == IdDisclosure::Revealed;
        let (text, value, digits) = match Key::parse(key)? {
            Key::Full(id) => return Ok(id),
            Key::Prefix {
                text,
                value,
                digits,
            } => (text, value, digits),
        };
        let mut matches = self.inner.index.matching(value, digits);
        // Only a count is needed unless the caller may see the ids.
        let limit = if reveal { MAX_CANDIDATES } else { 2 };
        let stored = self
            .inner
            .read(|store| store.find_by_prefix(text, limit))
            .await?;
        for record in &stored {
            matches.push(parse_id(&record.id)?);
        }
        matches.sort_unstable();
        matches.dedup();
        match matches.as_slice() {
            [] => Err(ApprovalError::UnknownPrefix),
            [only] => Ok(*only),
            several => Err(ApprovalError::AmbiguousPrefix {
                count: several.len(),
                candidates: reveal.then(|| several.iter().take(MAX_CANDIDATES).copied().collect()),
            }),
        }
    }

    async fn record(&self, id: Uuid) -> Result<ApprovalRecord, ApprovalError> {
        if let Some(record) = self.stored(id).await? {
            return Ok(record);
        }
        // Announced, but its insert may still be queued: read again once it has committed.
        if self.inner.index.status(&id).is_some() {
            self.after_queued_writes().await?;
            if let Some(record) = self.stored(id).await? {
                return Ok(record);
            }
        }
        Err(ApprovalError::Unknown { id })
    }

    async fn stored(&self, id: Uuid) -> Result<Option<ApprovalRecord>, ApprovalError> {
        let key = id.to_string();
        self.inner.read(|store| store.get(key)).await
    }

    /// Returns once every write queued so far has committed, so a read sees them.
    async fn after_queued_writes(&self) -> Result<(), ApprovalError> {
        let written = self
            .inner
            .queued(|store, done| store.after_submitted_writes(done), |_, _| {});
        written.await
    }

    /// The error for answering an approval that has left memory: its grace period is over.
    async fn settled_error(&self, id: Uuid) -> Result<ApprovalError, ApprovalError> {
        let record = self.record(id).await?;
        Ok(match record.state {
            ApprovalState::Pending => ApprovalError::Unknown { id },
            _ => terminal_error(id, &record),
        })
    }

    /// Applies a resolution through the store's compare-and-swap (see [`Inner::transition`]).
    async fn transition(
        &self,
        id: Uuid,
        resolution: Resolution,
    ) -> Result<ResolveOutcome, ApprovalError> {
        self.inner.transition(id, resolution).await
    }
}

/// Allow-always is offered only when it can be persisted and would change something: the
/// effective ask is not `always` (which asks every time regardless), patterns exist, and the
/// request names the agent whose allowlist they belong in.
/// What allow-always would persist for `request`, given the allowlist patterns it would add.
pub(crate) fn allow_always_plan_for(
    request: &ApprovalRequest,
    patterns: &[String],
) -> Option<AllowAlwaysPlan> {
    // A tool call's allow-always stores its grant, for the agent that asked.
    if let Some(tool) = &request.tool {
        return (tool.grant.is_some() && request.agent_id.is_some())
            .then_some(AllowAlwaysPlan::Grant);
    }
    if request.ask == Some(gatehouse_policy::Ask::Always) || patterns.is_empty() {
        return None;
    }
    Some(AllowAlwaysPlan::Patterns {
        agent_id: request.agent_id.clone()?,
        patterns: patterns.to_vec(),
    })
}

fn terminal_error(id: Uuid, record: &ApprovalRecord) -> ApprovalError {
    let reason = record.reason.clone().unwrap_or_default();
    match (record.state, record.decision) {
        (ApprovalState::Expired, _) => ApprovalError::Expired { id, reason },
        (ApprovalState::Cancelled, _) => ApprovalError::Cancelled { id, reason },
        (_, Some(decision)) => ApprovalError::AlreadyResolved {
            id,
            decision,
            resolved_by: record.resolved_by.clone(),
        },
        (_, None) => ApprovalError::Unknown { id },
    }
}

pub(crate) fn parse_id(text: &str) -> Result<Uuid, ApprovalError> {
    Uuid::try_parse(text).map_err(|_| ApprovalError::CorruptId {
        id: text.to_owned(),
    })
}
