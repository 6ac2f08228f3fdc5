//! Approval events to chat messages: when an approval is requested its planned messages are
//! handed to the dispatcher (which records, sends, retries and digests them), and when it
//! settles its copies are closed; at start-up the outbox is picked up where the last run left
//! it, so the cards of approvals the restart cancelled are edited too.
//!
//! Events are taken in order and each is handed over without waiting, so an approval's
//! messages are always registered before its settling is seen, however fast it is decided.
//!
//! On a store several gateways share, this runs on the gateway holding the chat lease, from
//! when it took the lease over: what the last holder left in the outbox is resumed like a
//! restart's, and the approvals pending without any message (requested while no gateway held
//! the lease) are shown as if just requested.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use gatehouse_approvals::{
    ApprovalEvent, ApprovalRecord, ApprovalRequest, ApprovalState, EventKind, EventSubscription,
    IdDisclosure, ListFilter, ListOrder,
};
use gatehouse_chat::dispatch::{Closing, Resumed, ResumedApproval, Settlement};
use gatehouse_chat::plan::plan_delivery;
use gatehouse_chat::render::{
    Card, ResolveOutcome, render_cancelled, render_expired, render_receipt,
};
use gatehouse_chat::route::TurnSource;

use super::ChatRuntime;
use super::directive::bind_session;
use super::journal::resumed;
use super::sessions::BoundRoute;
use super::view::{approval_view, request_meta, turn_source};

/// Resumes the outbox, then handles approval events until the manager goes away.
pub(super) async fn run(runtime: Arc<ChatRuntime>, mut events: EventSubscription) {
    let resumed = resume(&runtime).await;
    // Shown here already: their `requested` events, if they come, are not shown again.
    // Unless the outbox could not be read: then which approvals it shows is unknown too.
    let mut shown = match resumed {
        Some(resumed) if runtime.shared.is_some() => show_unshown(&runtime, &resumed).await,
        _ => HashSet::new(),
    };
    while let Some(event) = events.recv().await {
        if !shown.is_empty()
            && shown.remove(&event.id.to_string())
            && matches!(event.kind, EventKind::Requested { .. })
        {
            continue;
        }
        handle(&runtime, event);
    }
}

/// Shows every pending approval that has no message in the outbox (`resumed` are the
/// approvals that have one) as if it were just requested; answers which it showed.
async fn show_unshown(runtime: &Arc<ChatRuntime>, resumed: &HashSet<String>) -> HashSet<String> {
    let filter = ListFilter {
        state: Some(ApprovalState::Pending),
        agent_id: None,
        limit: usize::MAX,
        order: ListOrder::OldestFirst,
    };
    let pending = match runtime.core.manager.list(filter).await {
        Ok(pending) => pending,
        Err(error) => {
            tracing::error!(%error, "Cannot list the pending approvals to show those requested while no gateway held chat.");
            return HashSet::new();
        }
    };
    let mut shown = HashSet::new();
    for record in pending {
        if resumed.contains(&record.id) {
            continue;
        }
        // Whether allow-always was offered is not stored (as for a resumed card).
        let request = Arc::new(record.request);
        show(runtime, &record.id, &request, record.expires_at_ms, false);
        shown.insert(record.id);
    }
    if !shown.is_empty() {
        tracing::info!(
            approvals = shown.len(),
            "Showing the approvals requested while no gateway held chat."
        );
    }
    shown
}

/// Hands a requested approval's planned messages to the dispatcher, and binds its session to
/// the conversation it came from.
fn show(
    runtime: &Arc<ChatRuntime>,
    id: &str,
    request: &Arc<ApprovalRequest>,
    expires_at_ms: u64,
    allow_always: bool,
) {
    let max = runtime.dispatcher.max_command_chars;
    let view = approval_view(id, request, expires_at_ms, allow_always, max);
    let origin = turn_source(request, &runtime.platforms);
    let plan = plan_delivery(request_meta(request, origin.as_ref()), &runtime.approvals);
    runtime.dispatcher.request(view, &plan);
    // The sessions file is written off the event loop.
    let runtime = Arc::clone(runtime);
    let request = Arc::clone(request);
    tokio::spawn(async move {
        bind_origin(
            &runtime,
            request.session_key.as_deref(),
            origin.as_ref(),
            request.requested_by.as_deref(),
        );
    });
}

fn handle(runtime: &Arc<ChatRuntime>, event: ApprovalEvent) {
    let id = event.id.to_string();
    let closing = match event.kind {
        EventKind::Requested {
            request,
            offered,
            expires_at_ms,
            ..
        } => {
            show(runtime, &id, &request, expires_at_ms, offered.allow_always);
            return;
        }
        EventKind::Resolved {
            decision,
            resolved_by,
            ..
        } => Closing::Decided(ResolveOutcome {
            decision,
            decided_by: resolved_by,
        }),
        EventKind::Expired { .. } => Closing::Expired,
        EventKind::Cancelled { reason } => Closing::Cancelled(reason),
        // Run events show on no card.
        EventKind::Run { .. } => return,
    };
    let delete_on = match closing {
        Closing::Decided(_) => cleanup_channels(runtime),
        _ => HashSet::new(),
    };
    runtime.dispatcher.close(&id, closing, delete_on);
}

/// Channels whose decided cards are deleted rather than edited (`cleanupAfterResolve`).
fn cleanup_channels(runtime: &ChatRuntime) -> HashSet<String> {
    runtime
        .dispatcher
        .channels
        .keys()
        .filter(|channel| {
            runtime
                .approvals
                .native_client(channel)
                .is_some_and(|client| client.cleanup_after_resolve())
        })
        .cloned()
        .collect()
}

/// Ties the request's session to the conversation it came from, so `/elevated` typed there acts
/// on it.
fn bind_origin(
    runtime: &ChatRuntime,
    session_key: Option<&str>,
    origin: Option<&TurnSource>,
    token: Option<&str>,
) {
    let (Some(session_key), Some(origin)) = (session_key, origin) else {
        return;
    };
    let route = BoundRoute {
        channel: origin.channel.clone(),
        to: origin.to.clone(),
        account_id: origin.account_id.clone(),
        thread_id: origin.thread_id.clone(),
    };
    if let Err(error) = bind_session(&runtime.core, &runtime.sessions, session_key, route, token) {
        tracing::error!(session_key = ?session_key, error = %error, "Cannot bind a session to its chat.");
    }
}

/// Hands the outbox's open messages back to the dispatcher with their approvals as they
/// stand now (after a restart, cancelled by it); answers the approvals they show, `None` when
/// the outbox could not be read.
async fn resume(runtime: &ChatRuntime) -> Option<HashSet<String>> {
    let open = match runtime.outbox.open_messages().await {
        Ok(open) => open,
        Err(error) => {
            tracing::error!(error = %error, "Cannot read the chat outbox; messages of the last run are not resumed.");
            return None;
        }
    };
    if open.is_empty() {
        return Some(HashSet::new());
    }
    let mut approvals: HashMap<String, Option<ResumedApproval>> = HashMap::new();
    let mut resumed_messages = Vec::with_capacity(open.len());
    for entry in &open {
        let Some((journal, attempts, phase)) = resumed(entry) else {
            tracing::warn!(key = %entry.message.key, "Chat outbox row this build cannot read; left as it is.");
            continue;
        };
        let approval = match &journal.approval_id {
            Some(id) => {
                if !approvals.contains_key(id) {
                    let found = approval_now(runtime, id).await;
                    approvals.insert(id.clone(), found);
                }
                match approvals.get(id).cloned().flatten() {
                    Some(approval) => Some(approval),
                    // Gone from the store: its rows went with it; nothing to do.
                    None => continue,
                }
            }
            None => None,
        };
        resumed_messages.push(Resumed {
            entry: journal,
            attempts,
            phase,
            approval,
        });
    }
    tracing::info!(
        messages = resumed_messages.len(),
        approvals = approvals.len(),
        "Resuming chat messages of the last run."
    );
    runtime.dispatcher.resume(resumed_messages);
    Some(approvals.into_keys().collect())
}

/// An approval as a resumed message needs it: still pending, or settled with its final card.
async fn approval_now(runtime: &ChatRuntime, id: &str) -> Option<ResumedApproval> {
    let record = match runtime.core.manager.get(id, IdDisclosure::Hidden).await {
        Ok(record) => record,
        Err(error) => {
            tracing::error!(approval_id = %id, error = %error, "Cannot read an approval to resume its chat messages.");
            return None;
        }
    };
    if record.state == ApprovalState::Pending {
        // Whether allow-always was offered is not stored: a card sent from here on offers
        // allow-once and deny only.
        let max = runtime.dispatcher.max_command_chars;
        let view = approval_view(
            &record.id,
            &record.request,
            record.expires_at_ms,
            false,
            max,
        );
        return Some(ResumedApproval::Pending(view));
    }
    let (card, decided) = final_card(runtime, &record)?;
    let delete_on = if decided {
        cleanup_channels(runtime)
    } else {
        HashSet::new()
    };
    Some(ResumedApproval::Settled(Settlement { card, delete_on }))
}

/// The card a settled approval's copies become, and whether a person decided it; `None`
/// while it is still pending.
fn final_card(runtime: &ChatRuntime, record: &ApprovalRecord) -> Option<(Card, bool)> {
    let max = runtime.dispatcher.max_command_chars;
    let view = approval_view(
        &record.id,
        &record.request,
        record.expires_at_ms,
        false,
        max,
    );
    match record.state {
        ApprovalState::Pending => None,
        ApprovalState::Allowed | ApprovalState::Denied => {
            let decision = record.decision?;
            let outcome = ResolveOutcome {
                decision,
                decided_by: record
                    .resolved_by
                    .clone()
                    .unwrap_or_else(|| "an approver".into()),
            };
            Some((render_receipt(&view, &outcome, max), true))
        }
        ApprovalState::Expired => Some((render_expired(&view, max), false)),
        ApprovalState::Cancelled => {
            let reason = record.reason.as_deref().unwrap_or("withdrawn");
            Some((render_cancelled(&view, reason, max), false))
        }
    }
}
