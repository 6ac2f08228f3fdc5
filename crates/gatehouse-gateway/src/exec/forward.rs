//! Re-publishes the approval manager's events on the gateway's event hub, so clients see one
//! stream with one `seq`, and frees pending-cap places as approvals settle.

use gatehouse_approvals::EventKind;

use gatehouse_store::audit::AuditKind;
use serde_json::json;

use crate::exec::ExecServices;
use crate::hub::EventHub;
use crate::scope::{Access, Scope};
use crate::wire::exec::approval_event;

/// Starts the forwarding task, which sees every approval event. It holds the services, so it
/// lasts as long as the runtime. Must run inside a tokio runtime.
pub(crate) fn spawn_forwarder(exec: &ExecServices, hub: EventHub) {
    let first = exec.take_startup_events();
    let exec = exec.clone();
    tokio::spawn(async move {
        let mut events = first.unwrap_or_else(|| exec.manager().subscribe());
        while let Some(event) = events.recv().await {
            let requested = matches!(event.kind, EventKind::Requested { .. });
            if !requested {
                exec.pending().settled(event.id);
            }
            let (name, payload) = approval_event(event.id, &event.kind);
            let audience = Access::Scope(Scope::Approvals);
            let reached = hub.has_subscriber(audience);
            hub.publish(name, &payload, audience);
            // Published first so the payload moves into the audit record rather than
            // being copied: the forwarder handles every approval twice.
            let id = event.id.to_string();
            if requested {
                exec.audit(AuditKind::Request, Some(&id), None, payload);
                let delivered = json!({"surface": "websocket", "reached": reached});
                exec.audit(AuditKind::Delivery, Some(&id), None, delivered);
            } else {
                exec.audit(AuditKind::Decision, Some(&id), None, payload);
            }
        }
    });
}
