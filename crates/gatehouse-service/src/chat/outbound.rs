//! Approval events to chat messages: deliver the planned prompts when an approval is requested,
//! store where each one landed, and edit (or delete) every copy when the approval settles,
//! including the approvals a restart cancelled.

use std::sync::Arc;

use gatehouse_approvals::{
    ApprovalEvent, ApprovalRecord, ApprovalState, EventKind, EventSubscription, IdDisclosure,
    ListFilter, ListOrder, REASON_RESTART,
};
use gatehouse_chat::plan::{MessageKind, plan_delivery};
use gatehouse_chat::render::{
    Card, ResolveOutcome, render_cancelled, render_expired, render_receipt,
};
use gatehouse_chat::route::TurnSource;
use uuid::Uuid;

use super::ChatRuntime;
use super::directive::bind_session;
use super::sessions::BoundRoute;
use super::view::{approval_view, locator, request_meta, stored, turn_source};

/// How long tokens outlive their approval's expiry, so a late press is still answered with the
/// recorded result rather than "not valid here"; delivered cards are remembered as long.
const TOKEN_KEEP_MS: u64 = 24 * 60 * 60 * 1000;

/// Handles approval events until the manager goes away.
pub(super) async fn run(runtime: Arc<ChatRuntime>, mut events: EventSubscription, cutoff_ms: u64) {
    finish_restart_cancellations(&runtime, cutoff_ms).await;
    while let Some(event) = events.recv().await {
        let runtime = Arc::clone(&runtime);
        // One task per event, so a slow platform delays no other approval.
        tokio::spawn(async move { handle(&runtime, event).await });
    }
}

async fn handle(runtime: &ChatRuntime, event: ApprovalEvent) {
    match &event.kind {
        EventKind::Requested {
            request,
            offered,
            expires_at_ms,
            ..
        } => {
            let id = event.id.to_string();
            let max = runtime.dispatcher.max_command_chars;
            let view = approval_view(&id, request, *expires_at_ms, offered.allow_always, max);
            let origin = turn_source(request, &runtime.platforms);
            bind_origin(
                runtime,
                request.session_key.as_deref(),
                origin.as_ref(),
                request.requested_by.as_deref(),
            );
            let plan = plan_delivery(request_meta(request, origin.as_ref()), &runtime.approvals);
            if plan.messages.is_empty() {
                return;
            }
            let outcome = runtime
                .dispatcher
                .deliver(&plan, &view, runtime.now_ms())
                .await;
            for (route, error) in &outcome.failed {
                tracing::warn!(approval_id = %id, route = %route, error = %error, "Chat delivery failed.");
            }
            for delivered in &outcome.delivered {
                runtime
                    .cards
                    .remember(&delivered.locator, &id, runtime.now_ms());
                if delivered.kind == MessageKind::OriginNotice {
                    let now = runtime.now_ms();
                    runtime
                        .notices
                        .remember(&delivered.locator, *expires_at_ms, now);
                }
                let message = stored(&delivered.locator);
                if let Err(error) = runtime
                    .core
                    .manager
                    .record_delivery(event.id, message)
                    .await
                {
                    tracing::error!(approval_id = %id, error = %error, "Cannot record a delivered chat message.");
                }
            }
            // A decision that arrived while the prompts were on their way found no copies to
            // edit; edit them now.
            if !outcome.delivered.is_empty() {
                finish_if_settled(runtime, event.id).await;
            }
        }
        EventKind::Resolved { .. } | EventKind::Expired { .. } | EventKind::Cancelled { .. } => {
            finish_if_settled(runtime, event.id).await;
            runtime
                .dispatcher
                .tokens
                .purge(runtime.now_ms(), TOKEN_KEEP_MS);
            runtime.cards.purge(runtime.now_ms(), TOKEN_KEEP_MS);
        }
    }
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

/// Edits every stored copy of a settled approval into its final card.
async fn finish_if_settled(runtime: &ChatRuntime, id: Uuid) {
    let record = match runtime
        .core
        .manager
        .get(&id.to_string(), IdDisclosure::Hidden)
        .await
    {
        Ok(record) => record,
        Err(error) => {
            tracing::error!(approval_id = %id, error = %error, "Cannot read an approval to update its cards.");
            return;
        }
    };
    finish(runtime, &record).await;
}

async fn finish(runtime: &ChatRuntime, record: &ApprovalRecord) {
    if record.messages.is_empty() {
        return;
    }
    let Some((card, resolved)) = final_card(runtime, record) else {
        return;
    };
    // A copy whose delivery was recorded after an earlier pass is finished by a later one; the
    // copies an earlier pass already finished are left alone.
    let copies: Vec<_> = record
        .messages
        .iter()
        .map(locator)
        .filter(|copy| runtime.cards.claim_final(copy))
        .collect();
    let cleanup = |channel: &str| {
        resolved
            && runtime
                .approvals
                .native_client(channel)
                .is_some_and(|client| client.cleanup_after_resolve())
    };
    for (copy, error) in runtime.dispatcher.finish(&copies, &card, cleanup).await {
        tracing::warn!(
            approval_id = %record.id,
            channel = %copy.channel,
            chat_id = %copy.chat_id,
            error = %error,
            "Cannot update a delivered chat card."
        );
    }
}

/// The card a settled approval's copies become, and whether it was decided by a person; `None`
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

/// Edits the cards of approvals this start cancelled with `gateway-restart`, from the messages
/// the database kept for them.
async fn finish_restart_cancellations(runtime: &ChatRuntime, cutoff_ms: u64) {
    // Newest first: they were pending at the restart, so they are among the latest created,
    // however long the cancelled history has grown.
    let filter = ListFilter {
        state: Some(ApprovalState::Cancelled),
        agent_id: None,
        limit: 10_000,
        order: ListOrder::NewestFirst,
    };
    let records = match runtime.core.manager.list(filter).await {
        Ok(records) => records,
        Err(error) => {
            tracing::error!(error = %error, "Cannot list approvals cancelled by the restart.");
            return;
        }
    };
    for record in records.iter().filter(|record| {
        record.reason.as_deref() == Some(REASON_RESTART)
            && record.resolved_at_ms.is_some_and(|at| at >= cutoff_ms)
    }) {
        finish(runtime, record).await;
    }
}
