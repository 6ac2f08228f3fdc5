//! Re-publishes the approval manager's events on the gateway's event hub, so clients see one
//! stream with one `seq`, and frees pending-cap places as approvals settle.

use gatehouse_approvals::{EventKind, SubscriptionEnded};

use gatehouse_store::audit::AuditKind;
use serde_json::json;

use crate::exec::ExecServices;
use crate::hub::EventHub;
use crate::scope::{Access, Scope};
use crate::wire::exec::approval_event;

/// Starts the forwarding task; it ends when the manager is dropped. Must run inside a tokio
/// runtime.
pub(crate) fn spawn_forwarder(exec: &ExecServices, hub: EventHub) {
    let first = exec.take_startup_events();
    let exec = exec.clone();
    tokio::spawn(async move {
        let mut events = first.unwrap_or_else(|| exec.manager().subscribe());
        loop {
            match events.recv().await {
                Ok(event) => {
                    if !matches!(event.kind, EventKind::Requested { .. }) {
                        exec.pending().settled(event.id);
                    }
                    let (name, payload) = approval_event(event.id, &event.kind);
                    let id = event.id.to_string();
                    let audience = Access::Scope(Scope::Approvals);
                    if matches!(event.kind, EventKind::Requested { .. }) {
                        exec.audit(AuditKind::Request, Some(&id), None, payload.clone());
                        let delivered = json!({"surface": "websocket", "reached": hub.has_subscriber(audience)});
                        exec.audit(AuditKind::Delivery, Some(&id), None, delivered);
                    } else {
                        exec.audit(AuditKind::Decision, Some(&id), None, payload.clone());
                    }
                    hub.publish(name, &payload, audience);
                }
                Err(SubscriptionEnded::Closed) => break,
                Err(ended) => {
                    // Events were lost; surfaces re-read state with `exec.approval.list`.
                    tracing::error!(error = %ended, "Approval events lost; resubscribing.");
                    events = exec.manager().subscribe();
                }
            }
        }
    });
}
