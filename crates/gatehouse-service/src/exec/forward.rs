//! Passes the approval manager's events on to the [`Publisher`](crate::Publisher), so operators
//! see one stream, records each in the audit log as it was published, frees pending-cap places
//! as approvals settle, and logs each one: every approval event passes here exactly once, so
//! this is the one place the log hears of requests, deliveries to operator clients, decisions,
//! expiries and cancellations.

use std::collections::HashMap;
use std::sync::Arc;

use gatehouse_approvals::{ApprovalEvent, ApprovalRequest, EventKind, EventSubscription};
use gatehouse_store::audit::AuditKind;
use serde_json::json;
use uuid::Uuid;

use crate::core::Core;
use crate::run_log::LoggedRun;

/// The expiry reason of an approval nobody could be asked about.
const NO_APPROVAL_ROUTE: &str = "no-approval-route";

/// Starts the forwarding task, which sees every approval event from `events` on (the manager's
/// first subscription, which holds the restart cancellations). It holds the core, so it lasts
/// as long as the runtime. Must run inside a tokio runtime.
pub(crate) fn spawn_forwarder(core: Arc<Core>, mut events: EventSubscription) {
    tokio::spawn(async move {
        let mut requesters = Requesters::default();
        while let Some(event) = events.recv().await {
            if let EventKind::Run { body } = &event.kind {
                announce_logged_run(&core, &event, body);
                continue;
            }
            let requested = matches!(event.kind, EventKind::Requested { .. });
            if !requested {
                core.pending.settled(event.id);
            }
            let reached = core.publisher.approvers_connected();
            requesters.log(&event, reached);
            // The payload as published moves into the audit record rather than being copied:
            // the forwarder handles every approval twice.
            let payload = core.publisher.approval_event(&event);
            let id = event.id.to_string();
            if requested {
                core.audit(AuditKind::Request, Some(&id), None, payload);
                let delivered = json!({"surface": "websocket", "reached": reached});
                core.audit(AuditKind::Delivery, Some(&id), None, delivered);
            } else {
                core.audit(AuditKind::Decision, Some(&id), None, payload);
            }
        }
    });
}

/// Announces a run event the shared log carries, in its place. The gateway that ran it
/// recorded it in its audit log when it logged it; the others only pass it on.
fn announce_logged_run(core: &Core, event: &ApprovalEvent, body: &str) {
    match LoggedRun::decode(event.id, body) {
        Some(run) => core.publisher.logged_run_event(event.seq, &run.event()),
        None => tracing::warn!(
            seq = event.seq,
            run_id = %event.id,
            "The event log holds a run event this build cannot read; not announced."
        ),
    }
}

/// Who asked for each pending approval, so the line that settles it names the agent and the
/// token too: the settling events carry only the id. Entries leave when the approval settles,
/// so it holds the pending approvals of this run and no more.
#[derive(Debug, Default)]
struct Requesters(HashMap<Uuid, Requester>);

/// An approval this run did not see requested (one a restart cancels) has nothing known.
#[derive(Debug, Default)]
struct Requester {
    agent_id: Option<String>,
    token: Option<String>,
}

impl Requesters {
    /// Logs `event` at info (a request, its delivery to operator clients when one was
    /// `reached`, a decision, an expiry, a cancellation) with ids, agent, token and who
    /// decided; never the command, whose arguments may hold a secret (the audit log keeps it).
    /// An approval expired because nobody could be asked is a warning naming the fix.
    /// Agent-supplied text is quoted (`?`), so it cannot forge a line.
    fn log(&mut self, event: &ApprovalEvent, reached: bool) {
        let id = event.id;
        match &event.kind {
            EventKind::Requested {
                request,
                expires_at_ms,
                created_at_ms,
                ..
            } => {
                let requester = Requester::of(request);
                tracing::info!(
                    approval_id = %id,
                    agent_id = ?requester.agent_id.as_deref().unwrap_or_default(),
                    session_key = ?request.session_key.as_deref().unwrap_or_default(),
                    program = ?request.resolved_path.as_deref().unwrap_or_default(),
                    token = ?requester.token.as_deref().unwrap_or_default(),
                    expires_in_s = expires_at_ms.saturating_sub(*created_at_ms) / 1000,
                    "Approval requested."
                );
                if reached {
                    tracing::info!(approval_id = %id, surface = "websocket", "Approval delivered to operator clients.");
                }
                self.0.insert(id, requester);
            }
            EventKind::Resolved {
                decision,
                resolved_by,
                reason,
            } => {
                let requester = self.0.remove(&id).unwrap_or_default();
                tracing::info!(
                    approval_id = %id,
                    agent_id = ?requester.agent_id.as_deref().unwrap_or_default(),
                    token = ?requester.token.as_deref().unwrap_or_default(),
                    decision = decision.as_str(),
                    resolved_by = ?resolved_by,
                    reason = ?reason.as_deref().unwrap_or_default(),
                    "Approval decided."
                );
            }
            EventKind::Expired { reason } if reason == NO_APPROVAL_ROUTE => {
                let requester = self.0.remove(&id).unwrap_or_default();
                tracing::warn!(
                    approval_id = %id,
                    agent_id = ?requester.agent_id.as_deref().unwrap_or_default(),
                    token = ?requester.token.as_deref().unwrap_or_default(),
                    reason = %reason,
                    "Approval expired at once: nobody could be asked (no operator client connected, \
                     no chat route), so askFallback decided. Open the Control UI (the login URL \
                     serve printed) or configure a chat channel (docs/channels/)."
                );
            }
            EventKind::Expired { reason } | EventKind::Cancelled { reason } => {
                let requester = self.0.remove(&id).unwrap_or_default();
                let settled = if matches!(event.kind, EventKind::Expired { .. }) {
                    "expired"
                } else {
                    "cancelled"
                };
                tracing::info!(
                    approval_id = %id,
                    agent_id = ?requester.agent_id.as_deref().unwrap_or_default(),
                    token = ?requester.token.as_deref().unwrap_or_default(),
                    reason = %reason,
                    "Approval {settled}."
                );
            }
            // Passed on before this is called (`announce_logged_run`).
            EventKind::Run { .. } => {}
        }
    }
}

impl Requester {
    fn of(request: &ApprovalRequest) -> Self {
        Self {
            agent_id: request.agent_id.clone(),
            token: request.requested_by.clone(),
        }
    }
}
