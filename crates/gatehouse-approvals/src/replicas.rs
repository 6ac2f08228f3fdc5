//! What a start finds in the store, and, on a store several gateways share, how a manager
//! follows the others' writes.
//!
//! A store this gateway alone writes holds no pending approval anyone still waits for at start:
//! they are cancelled (`gateway-restart`). A shared store's pending approvals may be another
//! gateway's, with requesters waiting there: they are adopted instead — put in memory, given
//! their expiry — so they can be answered and expired here too (the store's compare-and-swap
//! lets one answer win). From then on the store's [`ChangeFeed`] wakes the manager for every
//! other gateway's write: an approval created elsewhere is adopted and announced, one settled
//! elsewhere is settled here, waking this gateway's waiters and announcing the outcome. A
//! notice is only a wake-up: the approval is read again, and after a [`Change::Resync`] every
//! approval pending in memory and in the store is.

use std::sync::{Arc, Weak};

use uuid::Uuid;

use crate::deadlines::Due;
use crate::error::ApprovalError;
use crate::events::{EventKind, Offered};
use crate::ids::short_id;
use crate::index::{Entry, Status};
use crate::manager::{REASON_RESTART, allow_always_plan_for, parse_id};
use crate::record::{ApprovalRecord, ApprovalState, ListFilter, ListOrder};
use crate::state::{Inner, granted, settled_status};
use crate::store::{Change, ChangeFeed};

/// Whether adopting an approval announces it (a `requested` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Announce {
    /// Found at start: announced long ago, by whoever created it.
    No,
    /// Just created by another gateway: operators here hear of it now.
    Yes,
}

impl Inner {
    /// Cancels the approvals an earlier run left pending (reason `gateway-restart`).
    pub(crate) async fn cancel_left_pending(self: &Arc<Self>) -> Result<(), ApprovalError> {
        let now = self.clock.now_ms();
        let cancelled = self
            .queued(
                |store, done| store.cancel_all_pending(REASON_RESTART.to_owned(), now, done),
                |_, _| {},
            )
            .await?;
        // Agents waiting on them must ask again; an operator reading the log should know why.
        if !cancelled.is_empty() {
            tracing::info!(
                count = cancelled.len(),
                reason = REASON_RESTART,
                "Cancelled the approvals an earlier run left pending."
            );
        }
        for record in cancelled {
            let id = parse_id(&record.id)?;
            self.events.emit(
                id,
                EventKind::Cancelled {
                    reason: REASON_RESTART.to_owned(),
                },
            );
        }
        Ok(())
    }

    /// Adopts every approval pending in the shared store; their short ids are already loaded.
    pub(crate) async fn adopt_pending(self: &Arc<Self>) -> Result<(), ApprovalError> {
        let pending = self.read(|store| store.list(pending_filter())).await?;
        let count = pending
            .iter()
            .filter(|record| self.adopt(record, Announce::No))
            .count();
        if count > 0 {
            tracing::info!(
                count,
                "Took over the approvals pending in the shared approvals database."
            );
        }
        Ok(())
    }

    /// Puts a pending approval another gateway stored in memory, with its expiry; false when it
    /// is already there or its id is not one the manager could have minted.
    fn adopt(&self, record: &ApprovalRecord, announce: Announce) -> bool {
        let Ok(id) = Uuid::try_parse(&record.id) else {
            return false;
        };
        let patterns = record
            .request
            .summary
            .as_ref()
            .map(|summary| summary.allow_always_patterns.as_slice())
            .unwrap_or_default();
        let plan = allow_always_plan_for(&record.request, patterns);
        let offered = Offered {
            allow_always: plan.is_some(),
        };
        let entry = Entry {
            status: Status::Pending,
            allow_always: plan.map(Box::new),
            waiters: None,
        };
        if !self.index.insert_new(id, entry) {
            return false;
        }
        self.deadlines.push(record.expires_at_ms, id, Due::Expire);
        if announce == Announce::Yes {
            // Already in use in the store: no approval minted here may take it.
            self.short_ids.claim(short_id(&id));
            self.events.emit(
                id,
                EventKind::Requested {
                    request: Arc::new(record.request.clone()),
                    offered,
                    created_at_ms: record.created_at_ms,
                    expires_at_ms: record.expires_at_ms,
                },
            );
        }
        true
    }

    /// Reads one approval another gateway wrote and brings memory in line with it.
    async fn follow_change(self: &Arc<Self>, id: &str) {
        let record = match self.read(|store| store.get(id.to_owned())).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(error) => {
                // The next notice or resync reads it again; its expiry is still scheduled.
                tracing::warn!(approval_id = %id, %error, "Could not read a changed approval.");
                return;
            }
        };
        self.follow_record(&record);
    }

    fn follow_record(&self, record: &ApprovalRecord) {
        let Ok(id) = parse_id(&record.id) else { return };
        if record.state == ApprovalState::Pending {
            self.adopt(record, Announce::Yes);
            return;
        }
        let Some(status) = settled_status(record) else {
            return;
        };
        // The store made any grant durable with the decision: known before anyone is woken.
        if let Some(grant) = granted(record) {
            self.grants.add(grant);
        }
        if self.index.settle(&id, status, record) {
            if let Some(event) = outcome_event(record) {
                self.events.emit(id, event);
            }
            self.evict_after_grace(id, self.clock.now_ms());
        }
    }

    /// Reads again every approval pending in memory, and adopts those pending in the store:
    /// what the notices lost while the feed was down would have said.
    async fn resync(self: &Arc<Self>) {
        for id in self.index.pending() {
            self.follow_change(&id.to_string()).await;
        }
        match self.read(|store| store.list(pending_filter())).await {
            Ok(pending) => {
                for record in &pending {
                    self.adopt(record, Announce::Yes);
                }
            }
            Err(error) => {
                tracing::warn!(%error, "Could not read the pending approvals after a resync.");
            }
        }
    }
}

/// Every pending approval, oldest first.
fn pending_filter() -> ListFilter {
    ListFilter {
        state: Some(ApprovalState::Pending),
        agent_id: None,
        limit: usize::MAX,
        order: ListOrder::OldestFirst,
    }
}

/// The event announcing how an approval settled.
pub(crate) fn outcome_event(record: &ApprovalRecord) -> Option<EventKind> {
    let reason = record.reason.clone();
    Some(match record.state {
        ApprovalState::Pending => return None,
        ApprovalState::Allowed | ApprovalState::Denied => EventKind::Resolved {
            decision: record.decision?,
            resolved_by: record.resolved_by.clone().unwrap_or_default(),
            reason,
        },
        ApprovalState::Expired => EventKind::Expired {
            reason: reason.unwrap_or_default(),
        },
        ApprovalState::Cancelled => EventKind::Cancelled {
            reason: reason.unwrap_or_default(),
        },
    })
}

/// Follows the feed until the manager or the feed is gone.
pub(crate) async fn follow_changes(inner: Weak<Inner>, mut changes: ChangeFeed) {
    while let Some(change) = changes.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        match change {
            Change::Approval(id) => inner.follow_change(&id).await,
            Change::Resync => inner.resync().await,
        }
    }
}
