//! The manager's shared state and the transitions that change it.
//!
//! Every transition is a compare-and-swap in the store; memory only follows the store's winner.
//! Only the call whose swap applied updates memory, wakes waiters and emits the event, so two
//! resolvers racing, or a resolver racing the timeout, produce one outcome and one event.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::AbortHandle;
use uuid::Uuid;

use crate::clock::{Clock, millis};
use crate::deadlines::{Deadlines, Due};
use crate::error::ApprovalError;
use crate::events::{EventBus, EventKind, Offered};
use crate::grants::{GrantBook, StoredGrant};
use crate::ids::short_id;
use crate::index::{AllowAlwaysPlan, Index, Status};
use crate::manager::{AllowlistWrite, ManagerConfig, REASON_STORE_FAILED, REASON_TIMEOUT};
use crate::record::{
    ApprovalRecord, ApprovalRequest, ApprovalState, NewApproval, Resolution, ResolveOutcome,
};
use crate::replicas::outcome_event;
use crate::short_ids::ShortIds;
use crate::store::{AllowlistStore, ApprovalStore, Completion, Reading, StoreError};

/// When an approval is announced: as soon as its insert is queued, or once it is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Announce {
    /// As soon as the insert is queued; for ids the manager minted, which cannot be taken.
    Early,
    /// Once the row is committed; for ids the requester chose.
    Durable,
}

/// How far an early announcement got, so that a failed insert's `cancelled` event never
/// precedes its `requested` event, whichever thread gets there first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Queued,
    Announced,
    Failed,
}

/// How long to wait before retrying an expiry the store refused.
const EXPIRY_RETRY_MS: u64 = 1_000;

/// Everything the manager's clones and its timer task share.
pub(crate) struct Inner {
    /// Whether other gateways write the store too (it has a change feed).
    pub(crate) shared: bool,
    pub(crate) store: Arc<dyn ApprovalStore>,
    pub(crate) allowlists: Arc<dyn AllowlistStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) config: ManagerConfig,
    pub(crate) index: Index,
    /// The short id of every approval in memory or in the store.
    pub(crate) short_ids: ShortIds,
    pub(crate) deadlines: Arc<Deadlines>,
    pub(crate) events: EventBus,
    /// Every allow-always grant of a tool call, as the store holds them.
    pub(crate) grants: GrantBook,
    /// The timer task and the pruning task, stopped with the manager.
    pub(crate) tasks: OnceLock<Vec<AbortHandle>>,
    /// On a shared store: where the log's follower starts (the log's last event when the
    /// manager started), and its wake-up for this manager's own writes, whose events it
    /// announces once it reads them back from the log.
    pub(crate) log_start: Option<u64>,
    pub(crate) log_written: Arc<Notify>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in self.tasks.get().into_iter().flatten() {
            task.abort();
        }
    }
}

/// Settled approvals deleted per write. Each chunk is one job on the store's writer, and every
/// approval write queued behind it waits for it: on the bench machine's disk 100 rows take about
/// 1 ms, 500 rows about 2.3 ms (performance.md, "Tenth round").
const PRUNE_CHUNK: usize = 100;

/// Rest between two full chunks, so a large pruning takes a small share of the writer (about a
/// twentieth) and still deletes over 4,000 rows a second, more than the budget rate inserts.
const PRUNE_PAUSE: Duration = Duration::from_millis(20);

/// How often a long pruning reports its progress, in rows deleted.
const PRUNE_PROGRESS_EVERY: usize = 10_000;

impl Inner {
    /// Adds the derived patterns to the agent's allowlist. A failure is reported, not raised:
    /// the decision it follows is already recorded.
    pub(crate) async fn persist_allow_always(
        &self,
        record: &ApprovalRecord,
        plan: AllowAlwaysPlan,
    ) -> AllowlistWrite {
        let (agent_id, patterns) = match plan {
            AllowAlwaysPlan::Patterns { agent_id, patterns } => (agent_id, patterns),
            AllowAlwaysPlan::Grant => return AllowlistWrite::NotRequested,
        };
        let allowlists = Arc::clone(&self.allowlists);
        let now_ms = self.clock.now_ms();
        let written = tokio::task::spawn_blocking(move || {
            patterns
                .iter()
                .map(|pattern| allowlists.add_allow_always(&agent_id, pattern, now_ms))
                .collect::<Result<Vec<_>, StoreError>>()
        })
        .await;
        match written {
            Ok(Ok(added)) => AllowlistWrite::Added(added),
            Ok(Err(error)) => self.allowlist_failed(record, error.into()),
            Err(error) => self.allowlist_failed(record, error.into()),
        }
    }

    fn allowlist_failed(&self, record: &ApprovalRecord, error: ApprovalError) -> AllowlistWrite {
        tracing::error!(approval_id = %record.id, error = %error, "Allow-always patterns were not persisted.");
        AllowlistWrite::Failed(error)
    }

    /// Stores a pending approval whose entry is already in memory and whose short id is
    /// claimed, then arms its timer; on failure the entry is removed again and the short id
    /// given back (unless the store holds the id already). Returns once the row is durable.
    ///
    /// With [`Announce::Early`] the `requested` event goes out as soon as the insert is queued,
    /// so approvers see it while the row is being committed: every later write (a decision, a
    /// cancellation) queues behind the insert and cannot overtake it, and nobody is told of a
    /// decision before that write is durable. Should the insert fail, a `cancelled` event
    /// (reason `store-failed`) follows. [`Announce::Durable`] waits for the commit instead,
    /// for ids the requester chose, which may turn out to be taken.
    ///
    /// Cancel-safe without a task of its own: everything after the insert is queued runs in
    /// the store's completion, so a caller that stops waiting leaves nothing half done.
    pub(crate) async fn register(
        self: &Arc<Self>,
        id: Uuid,
        request: ApprovalRequest,
        offered: Offered,
        (created_at_ms, expires_at_ms): (u64, u64),
        announce: Announce,
    ) -> Result<(), ApprovalError> {
        let request = Arc::new(request);
        let new = NewApproval {
            id: id.to_string(),
            request: ApprovalRequest::clone(&request),
            created_at_ms,
            expires_at_ms,
        };
        let requested = EventKind::Requested {
            request,
            offered,
            created_at_ms,
            expires_at_ms,
        };
        let (early, on_durable) = match announce {
            Announce::Early => (Some(requested), None),
            Announce::Durable => (None, Some(requested)),
        };
        let stage = Arc::new(Mutex::new(Stage::Queued));
        let failure_stage = Arc::clone(&stage);
        let stored = self.queued(
            |store, done| store.insert(new, done),
            move |inner, result| match result {
                Ok(_) => {
                    inner.deadlines.push(expires_at_ms, id, Due::Expire);
                    inner.wake_log_follower();
                    if let Some(requested) = on_durable {
                        inner.events.emit(id, requested);
                    }
                }
                Err(error) => {
                    inner.index.remove(&id);
                    // Refused because another approval holds it: it stays in use.
                    if !matches!(
                        error,
                        StoreError::DuplicateId { .. } | StoreError::ShortIdInUse { .. }
                    ) {
                        inner.short_ids.release(short_id(&id));
                    }
                    let mut stage = lock(&failure_stage);
                    if *stage == Stage::Announced {
                        let reason = REASON_STORE_FAILED.to_owned();
                        inner.events.emit(id, EventKind::Cancelled { reason });
                    }
                    *stage = Stage::Failed;
                }
            },
        );
        if let Some(requested) = early {
            let mut stage = lock(&stage);
            if *stage == Stage::Queued {
                self.events.emit(id, requested);
                *stage = Stage::Announced;
            }
        }
        stored.await.map(drop).map_err(|error| match error {
            ApprovalError::Store(StoreError::DuplicateId { .. }) => ApprovalError::IdInUse { id },
            ApprovalError::Store(StoreError::ShortIdInUse { .. }) => {
                ApprovalError::ShortIdInUse { id }
            }
            other => other,
        })
    }

    /// Queues one of the store's writes and returns a future of its answer. The write is
    /// queued before this returns; `then` runs on whichever thread finishes it, before the
    /// answer is handed over, and runs whether or not anyone still waits. The returned future
    /// holds no thread: the store's writer wakes it once the write is durable.
    pub(crate) fn queued<T: Send + 'static>(
        self: &Arc<Self>,
        submit: impl FnOnce(&dyn ApprovalStore, Completion<T>),
        then: impl FnOnce(&Inner, &Result<T, StoreError>) + Send + 'static,
    ) -> impl Future<Output = Result<T, ApprovalError>> + Send + 'static {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let inner = Arc::downgrade(self);
        let done: Completion<T> = Box::new(move |result| {
            if let Some(inner) = inner.upgrade() {
                then(&inner, &result);
            }
            // A caller that stopped waiting has nothing left to learn.
            let _ = answer.send(result);
        });
        submit(self.store.as_ref(), done);
        async move { Ok(answered.await.map_err(|_| ApprovalError::Unanswered)??) }
    }

    /// Waits for one of the store's reads.
    pub(crate) async fn read<T>(
        &self,
        read: impl FnOnce(&dyn ApprovalStore) -> Reading<T>,
    ) -> Result<T, ApprovalError> {
        Ok(read(self.store.as_ref()).await?)
    }

    fn retention_cutoff(&self) -> u64 {
        self.config.retention.cutoff(self.clock.now_ms())
    }

    /// One write of a pruning, whose short ids are free again: fewer than [`PRUNE_CHUNK`]
    /// deleted means none are left.
    async fn prune_chunk(self: &Arc<Self>, cutoff_ms: u64) -> Result<usize, ApprovalError> {
        let pruned = self
            .queued(
                |store, done| store.prune_terminal_before(cutoff_ms, PRUNE_CHUNK, done),
                |_, _| {},
            )
            .await?;
        for id in &pruned {
            if let Ok(id) = Uuid::try_parse(id) {
                self.short_ids.release(short_id(&id));
            }
        }
        Ok(pruned.len())
    }

    /// Applies a resolution through the store's compare-and-swap. The change that wins updates
    /// memory, wakes waiters, schedules eviction and emits the event, in the store's completion:
    /// queued before this returns, done even if the caller stops waiting.
    pub(crate) fn transition(
        self: &Arc<Self>,
        id: Uuid,
        resolution: Resolution,
    ) -> impl Future<Output = Result<ResolveOutcome, ApprovalError>> + Send + 'static {
        let now = self.clock.now_ms();
        let key = id.to_string();
        let stored = resolution.clone();
        let applied = self.queued(
            move |store, done| store.resolve(key, stored, now, done),
            move |inner, result| {
                if let Ok(outcome) = result {
                    inner.follow(id, resolution, outcome, now);
                    inner.wake_log_follower();
                }
            },
        );
        async move {
            applied
                .await
                .map_err(|error| not_found_as_unknown(error, id))
        }
    }

    /// Brings memory in line with the store's answer to a resolution.
    fn follow(&self, id: Uuid, resolution: Resolution, outcome: &ResolveOutcome, now: u64) {
        if let ResolveOutcome::Applied(record) = outcome {
            // The store made the grant durable with the decision; the requester's next call
            // must find it, so it is known before anyone hears of the decision.
            if let Some(grant) = granted(record) {
                self.grants.add(grant);
            }
            let (status, event) = match resolution {
                Resolution::Decided {
                    decision,
                    resolved_by,
                    reason,
                } => (
                    Status::Decided(decision),
                    EventKind::Resolved {
                        decision,
                        resolved_by: resolved_by.unwrap_or_default(),
                        reason,
                    },
                ),
                Resolution::Expired { reason } => (Status::Expired, EventKind::Expired { reason }),
                Resolution::Cancelled { reason } => {
                    (Status::Cancelled, EventKind::Cancelled { reason })
                }
            };
            // The event first, so whoever a settling wakes finds it already published.
            self.events.emit(id, event);
            self.index.settle(&id, status, record);
            self.evict_after_grace(id, now);
        } else if let Some(status) = settled_status(outcome.winner())
            && self.index.settle(&id, status, outcome.winner())
        {
            // Another manager on the same database settled it, and this one's subscribers have
            // not heard: the winner's outcome is announced here, once.
            if let Some(event) = outcome_event(outcome.winner()) {
                self.events.emit(id, event);
            }
            self.evict_after_grace(id, now);
        }
    }

    /// On a shared store, has the log's follower read (and announce) what this manager just
    /// wrote; nothing on a store it alone writes, whose events it announces itself.
    fn wake_log_follower(&self) {
        if self.log_start.is_some() {
            self.log_written.notify_one();
        }
    }

    pub(crate) fn evict_after_grace(&self, id: Uuid, now_ms: u64) {
        let at_ms = now_ms.saturating_add(millis(self.config.grace));
        self.deadlines.push(at_ms, id, Due::Evict);
    }

    pub(crate) async fn on_due(self: &Arc<Self>, id: Uuid, due: Due) {
        match due {
            Due::Evict => self.index.remove(&id),
            Due::Expire if self.index.status(&id) == Some(Status::Pending) => {
                let timeout = Resolution::Expired {
                    reason: REASON_TIMEOUT.to_owned(),
                };
                if let Err(error) = self.transition(id, timeout).await {
                    // Still pending (and still not runnable): try again rather than leave
                    // waiters hanging until the next start cancels it.
                    tracing::error!(approval_id = %id, error = %error, "Approval expiry failed.");
                    let retry_at = self.clock.now_ms().saturating_add(EXPIRY_RETRY_MS);
                    self.deadlines.push(retry_at, id, Due::Expire);
                }
            }
            Due::Expire => {}
        }
    }
}

/// Deletes settled approvals older than the retention period, one paced chunk per write, and
/// logs how many (with progress while a large pass runs). The manager is held for one chunk at
/// a time, so dropping it stops a long pruning at the next chunk.
async fn prune_history(inner: &Weak<Inner>) -> Result<(), ApprovalError> {
    let Some(cutoff) = inner.upgrade().map(|inner| inner.retention_cutoff()) else {
        return Ok(());
    };
    let mut pruned = 0;
    loop {
        let Some(manager) = inner.upgrade() else {
            return Ok(());
        };
        let chunk = manager.prune_chunk(cutoff).await?;
        drop(manager);
        let before = pruned;
        pruned += chunk;
        if chunk < PRUNE_CHUNK {
            if pruned > 0 {
                tracing::info!(
                    pruned,
                    "Pruned settled approvals past the retention period."
                );
            }
            return Ok(());
        }
        if pruned / PRUNE_PROGRESS_EVERY > before / PRUNE_PROGRESS_EVERY {
            tracing::info!(
                pruned,
                "Pruning settled approvals past the retention period; still going."
            );
        }
        tokio::time::sleep(PRUNE_PAUSE).await;
    }
}

/// Prunes history at once and then every `prune_every` (at least a second) for as long as the
/// manager lives, so a gateway that runs for months keeps only its retention period too. It
/// runs beside the manager, never before it: a large first pass does not delay serving.
pub(crate) async fn prune_periodically(inner: Weak<Inner>) {
    loop {
        if let Err(error) = prune_history(&inner).await {
            tracing::warn!(%error, "Pruning approval history failed; the next pass retries.");
        }
        let Some(every) = inner.upgrade().map(|inner| inner.config.prune_every) else {
            return;
        };
        tokio::time::sleep(every.max(Duration::from_secs(1))).await;
    }
}

/// Sleeps until the earliest deadline (or an earlier one is pushed) and handles what is due.
/// Holds the manager only weakly, so dropping the last manager ends it.
pub(crate) async fn run_timer(
    inner: Weak<Inner>,
    deadlines: Arc<Deadlines>,
    clock: Arc<dyn Clock>,
) {
    loop {
        let (due, next) = deadlines.take_due(clock.now_ms());
        if !due.is_empty() {
            let Some(manager) = inner.upgrade() else {
                return;
            };
            for (id, kind) in due {
                manager.on_due(id, kind).await;
            }
            continue;
        }
        match next {
            Some(at_ms) => {
                let wait = Duration::from_millis(at_ms.saturating_sub(clock.now_ms()));
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = deadlines.earlier_pushed() => {}
                }
            }
            None => deadlines.earlier_pushed().await,
        }
    }
}

/// The in-memory status matching a settled record; `None` while it is pending.
/// The grant an applied allow-always of a tool approval stored, as the store keeps it.
pub(crate) fn granted(record: &ApprovalRecord) -> Option<StoredGrant> {
    if record.decision != Some(gatehouse_policy::ApprovalDecision::AllowAlways) {
        return None;
    }
    let grant = record.request.tool.as_ref()?.grant.clone()?;
    Some(StoredGrant {
        id: record.id.clone(),
        agent_id: record.request.agent_id.clone()?,
        grant,
        created_at_ms: record.resolved_at_ms.unwrap_or(record.created_at_ms),
        granted_by: record.resolved_by.clone(),
    })
}

pub(crate) fn settled_status(record: &ApprovalRecord) -> Option<Status> {
    match (record.state, record.decision) {
        (ApprovalState::Pending, _) => None,
        (ApprovalState::Allowed | ApprovalState::Denied, Some(decision)) => {
            Some(Status::Decided(decision))
        }
        (ApprovalState::Expired, _) => Some(Status::Expired),
        // A decided row without a decision violates the schema; treat it as withdrawn.
        (ApprovalState::Allowed | ApprovalState::Denied | ApprovalState::Cancelled, _) => {
            Some(Status::Cancelled)
        }
    }
}

pub(crate) fn not_found_as_unknown(error: ApprovalError, id: Uuid) -> ApprovalError {
    match error {
        ApprovalError::Store(StoreError::NotFound { .. }) => ApprovalError::Unknown { id },
        other => other,
    }
}

/// The stage flag guards no invariant a panic could break.
fn lock(stage: &Mutex<Stage>) -> MutexGuard<'_, Stage> {
    stage
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
