//! What a start finds in the store, and, on a store several gateways share, how a manager
//! follows the others' writes.
//!
//! A store this gateway alone writes holds no pending approval anyone still waits for at start:
//! they are cancelled (`gateway-restart`). A shared store's pending approvals may be another
//! gateway's, with requesters waiting there: they are adopted instead — put in memory, given
//! their expiry — so they can be answered and expired here too (the store's compare-and-swap
//! lets one answer win). From then on the manager follows the store's [`EventLog`](crate::EventLog), which every
//! gateway's transitions append to: an approval created elsewhere is adopted, one settled
//! elsewhere is settled here, waking this gateway's waiters, and every logged event, this
//! gateway's own included, is announced with the log's number, so every gateway announces the
//! same events in the same order under the same numbers. The [`ChangeFeed`]'s notices are only
//! wake-ups to read the log after the last event seen.

use std::sync::{Arc, Weak};
use std::time::Duration;

use uuid::Uuid;

use crate::deadlines::Due;
use crate::error::ApprovalError;
use crate::events::{ApprovalEvent, EventKind, Offered};
use crate::ids::short_id;
use crate::index::{Entry, Status};
use crate::manager::{REASON_RESTART, allow_always_plan_for, parse_id};
use crate::record::{ApprovalRecord, ApprovalState, ListFilter, ListOrder};
use crate::state::{Inner, granted, settled_status};
use crate::store::{ChangeFeed, LogEntry, LoggedEvent};

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
        let count = pending.iter().filter(|record| self.adopt(record)).count();
        if count > 0 {
            tracing::info!(
                count,
                "Took over the approvals pending in the shared approvals database."
            );
        }
        Ok(())
    }

    /// Puts a pending approval another gateway stored in memory, with its expiry, and claims
    /// its short id; false when it is already there or its id is not one the manager could
    /// have minted.
    fn adopt(&self, record: &ApprovalRecord) -> bool {
        let Ok(id) = Uuid::try_parse(&record.id) else {
            return false;
        };
        let plan = allow_always_plan_for(&record.request, allow_always_patterns(record));
        let entry = Entry {
            status: Status::Pending,
            allow_always: plan.map(Box::new),
            waiters: None,
        };
        if !self.index.insert_new(id, entry) {
            return false;
        }
        self.deadlines.push(record.expires_at_ms, id, Due::Expire);
        // Already in use in the store: no approval minted here may take it.
        self.short_ids.claim(short_id(&id));
        true
    }

    /// Brings memory in line with one event of the shared store's log and announces it with
    /// the log's number, whichever gateway wrote it (this one's own transitions included:
    /// their memory changes are already made, so following them again changes nothing).
    fn apply_logged(&self, event: &LoggedEvent) {
        let LogEntry::Approval { settled, record } = &event.entry else {
            // A run event changes nothing here: it is only announced in its place.
            if let Some(announced) = logged_event(event) {
                self.events.emit_logged(announced);
            }
            return;
        };
        let Ok(id) = parse_id(&record.id) else { return };
        if !settled {
            if record.state == ApprovalState::Pending {
                self.adopt(record);
            }
        } else if let Some(status) = settled_status(record) {
            // The store made any grant durable with the decision: known before anyone is woken.
            if let Some(grant) = granted(record) {
                self.grants.add(grant);
            }
            if self.index.settle(&id, status, record) {
                self.evict_after_grace(id, self.clock.now_ms());
            }
        }
        if let Some(announced) = logged_event(event) {
            self.events.emit_logged(announced);
        }
    }

    /// Reads the log after `after` to its head, applying and announcing each event; `after`
    /// follows what was read. On a failed read, what is left is read at the next wake-up.
    async fn catch_up(self: &Arc<Self>, after: &mut u64) -> Result<(), ApprovalError> {
        let Some(log) = self.store.event_log() else {
            return Ok(());
        };
        loop {
            let page = log.events_after(*after, CATCH_UP_PAGE).await?;
            for event in &page.events {
                self.apply_logged(event);
                *after = event.seq;
            }
            if page.events.len() < CATCH_UP_PAGE {
                // Numbers up to the head that were not read belong to pruned approvals.
                *after = (*after).max(page.head);
                return Ok(());
            }
        }
    }
}

/// Events read from the log per round trip while catching up.
const CATCH_UP_PAGE: usize = 256;

/// How long a catch-up that failed (the database unreachable) waits before trying again.
const CATCH_UP_RETRY: Duration = Duration::from_secs(1);

/// The allow-always patterns a stored request carries (in its summary).
fn allow_always_patterns(record: &ApprovalRecord) -> &[String] {
    record
        .request
        .summary
        .as_ref()
        .map(|summary| summary.allow_always_patterns.as_slice())
        .unwrap_or_default()
}

/// The event a log entry announces.
pub(crate) fn logged_event(event: &LoggedEvent) -> Option<ApprovalEvent> {
    let (id, kind) = match &event.entry {
        LogEntry::Approval { settled, record } => {
            let kind = if *settled {
                outcome_event(record)?
            } else {
                requested_event(record)
            };
            (parse_id(&record.id).ok()?, kind)
        }
        LogEntry::Run(note) => (
            note.run_id,
            EventKind::Run {
                body: Arc::from(note.body.as_str()),
            },
        ),
    };
    Some(ApprovalEvent {
        seq: event.seq,
        id,
        kind,
    })
}

/// The event announcing a stored approval's creation.
pub(crate) fn requested_event(record: &ApprovalRecord) -> EventKind {
    let plan = allow_always_plan_for(&record.request, allow_always_patterns(record));
    EventKind::Requested {
        request: Arc::new(record.request.clone()),
        offered: Offered {
            allow_always: plan.is_some(),
        },
        created_at_ms: record.created_at_ms,
        expires_at_ms: record.expires_at_ms,
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

/// Follows the shared store's log from `after` until the manager or the feed is gone: every
/// notice, every (re)connection of the feed and every write of this manager's own is a
/// wake-up to read the log after the last event seen. Notices lost while the feed was down
/// lose nothing, since the log, not the notice, says what happened.
pub(crate) async fn follow_log(inner: Weak<Inner>, mut changes: ChangeFeed, mut after: u64) {
    let Some(wake) = inner.upgrade().map(|inner| Arc::clone(&inner.log_written)) else {
        return;
    };
    loop {
        tokio::select! {
            change = changes.recv() => if change.is_none() { return },
            () = wake.notified() => {}
        }
        loop {
            let Some(inner) = inner.upgrade() else { return };
            match inner.catch_up(&mut after).await {
                Ok(()) => break,
                Err(error) => {
                    tracing::warn!(%error, "Could not read the approvals database's event log; retrying.");
                }
            }
            drop(inner);
            tokio::time::sleep(CATCH_UP_RETRY).await;
        }
    }
}
