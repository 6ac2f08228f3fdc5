//! The manager's shared state and the transitions that change it.
//!
//! Every transition is a compare-and-swap in the store; memory only follows the store's winner.
//! Only the call whose swap applied updates memory, wakes waiters and emits the event, so two
//! resolvers racing, or a resolver racing the timeout, produce one outcome and one event.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::{
    ApprovalRecord, ApprovalRequest, ApprovalState, ApprovalStore, Completion, NewApproval,
    Resolution, ResolveOutcome,
};
use gatehouse_store::approvals_file::{ExecApprovalsStore, NewAllowlistEntry};
use tokio::task::AbortHandle;
use uuid::Uuid;

use crate::clock::{Clock, millis};
use crate::deadlines::{Deadlines, Due};
use crate::error::ApprovalError;
use crate::events::{EventBus, EventKind, Offered};
use crate::index::{AllowAlwaysPlan, Index, Status};
use crate::manager::{AllowlistWrite, ManagerConfig, REASON_TIMEOUT};

/// How long to wait before retrying an expiry the store refused.
const EXPIRY_RETRY_MS: u64 = 1_000;

/// The `source` written on allowlist entries added by an allow-always decision.
const ALLOW_ALWAYS_SOURCE: &str = "allow-always";

/// Everything the manager's clones and its timer task share.
pub(crate) struct Inner {
    pub(crate) store: Arc<dyn ApprovalStore>,
    pub(crate) allowlists: Arc<ExecApprovalsStore>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) config: ManagerConfig,
    pub(crate) index: Index,
    pub(crate) deadlines: Arc<Deadlines>,
    pub(crate) events: EventBus,
    pub(crate) timer: OnceLock<AbortHandle>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.get() {
            timer.abort();
        }
    }
}

impl Inner {
    /// Adds the derived patterns to the agent's allowlist. A failure is reported, not raised:
    /// the decision it follows is already recorded.
    pub(crate) async fn persist_allow_always(
        &self,
        record: &ApprovalRecord,
        plan: AllowAlwaysPlan,
    ) -> AllowlistWrite {
        let AllowAlwaysPlan { agent_id, patterns } = plan;
        let allowlists = Arc::clone(&self.allowlists);
        let now_ms = self.clock.now_ms();
        let written = tokio::task::spawn_blocking(move || {
            patterns
                .iter()
                .map(|pattern| {
                    allowlists.add_allowlist_entry(
                        &agent_id,
                        NewAllowlistEntry {
                            pattern,
                            arg_pattern: None,
                            source: Some(ALLOW_ALWAYS_SOURCE),
                            now_ms,
                        },
                    )
                })
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

    /// Stores a pending approval whose entry is already in memory, then arms its timer and
    /// announces it; on failure the entry is removed again.
    pub(crate) async fn register(
        &self,
        id: Uuid,
        request: ApprovalRequest,
        offered: Offered,
        created_at_ms: u64,
        expires_at_ms: u64,
    ) -> Result<(), ApprovalError> {
        let request = Arc::new(request);
        let new = NewApproval {
            id: id.to_string(),
            request: ApprovalRequest::clone(&request),
            created_at_ms,
            expires_at_ms,
        };
        if let Err(error) = self
            .queued(move |store, done| store.insert_queued(new, done))
            .await
        {
            self.index.remove(&id);
            return Err(match error {
                ApprovalError::Store(StoreError::DuplicateId { .. }) => {
                    ApprovalError::IdInUse { id }
                }
                other => other,
            });
        }
        self.deadlines.push(expires_at_ms, id, Due::Expire);
        self.events.emit(
            id,
            EventKind::Requested {
                request,
                offered,
                created_at_ms,
                expires_at_ms,
            },
        );
        Ok(())
    }

    /// Runs one of the store's queued writes and waits for its answer without holding a thread:
    /// the store's writer wakes this task itself once the write is durable.
    pub(crate) async fn queued<T: Send + 'static>(
        &self,
        submit: impl FnOnce(&dyn ApprovalStore, Completion<T>),
    ) -> Result<T, ApprovalError> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let done: Completion<T> = Box::new(move |result| {
            // A caller that stopped waiting has nothing left to learn.
            let _ = answer.send(result);
        });
        submit(self.store.as_ref(), done);
        Ok(answered.await.map_err(|_| ApprovalError::Unanswered)??)
    }

    /// Runs a synchronous store call off the async threads.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn ApprovalStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, ApprovalError> {
        let store = Arc::clone(&self.store);
        Ok(tokio::task::spawn_blocking(move || call(store.as_ref())).await??)
    }

    pub(crate) async fn transition(
        &self,
        id: Uuid,
        resolution: Resolution,
    ) -> Result<ResolveOutcome, ApprovalError> {
        let now = self.clock.now_ms();
        let key = id.to_string();
        let stored = resolution.clone();
        let outcome = self
            .queued(move |store, done| store.resolve_queued(key, stored, now, done))
            .await
            .map_err(|error| not_found_as_unknown(error, id))?;
        if let ResolveOutcome::Applied(record) = &outcome {
            let (status, event) = match resolution {
                Resolution::Decided {
                    decision,
                    resolved_by,
                } => (
                    Status::Decided(decision),
                    EventKind::Resolved {
                        decision,
                        resolved_by: resolved_by.unwrap_or_default(),
                    },
                ),
                Resolution::Expired { reason } => (Status::Expired, EventKind::Expired { reason }),
                Resolution::Cancelled { reason } => {
                    (Status::Cancelled, EventKind::Cancelled { reason })
                }
            };
            self.index.settle(&id, status, record);
            self.evict_after_grace(id, now);
            self.events.emit(id, event);
        } else if let Some(status) = settled_status(outcome.winner())
            && self.index.settle(&id, status, outcome.winner())
        {
            // Another manager on the same database settled it: follow without an event of ours.
            self.evict_after_grace(id, now);
        }
        Ok(outcome)
    }

    fn evict_after_grace(&self, id: Uuid, now_ms: u64) {
        let at_ms = now_ms.saturating_add(millis(self.config.grace));
        self.deadlines.push(at_ms, id, Due::Evict);
    }

    pub(crate) async fn on_due(&self, id: Uuid, due: Due) {
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
fn settled_status(record: &ApprovalRecord) -> Option<Status> {
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
