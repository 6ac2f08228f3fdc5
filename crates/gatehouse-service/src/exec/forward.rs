//! Passes the approval manager's events on to the [`Publisher`](crate::Publisher), so operators
//! see one stream, records each in the audit log as it was published, and frees pending-cap
//! places as approvals settle.

use std::sync::Arc;

use gatehouse_approvals::{EventKind, EventSubscription};
use gatehouse_store::audit::AuditKind;
use serde_json::json;

use crate::core::Core;

/// Starts the forwarding task, which sees every approval event from `events` on (the manager's
/// first subscription, which holds the restart cancellations). It holds the core, so it lasts
/// as long as the runtime. Must run inside a tokio runtime.
pub(crate) fn spawn_forwarder(core: Arc<Core>, mut events: EventSubscription) {
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let requested = matches!(event.kind, EventKind::Requested { .. });
            if !requested {
                core.pending.settled(event.id);
            }
            let reached = core.publisher.approvers_connected();
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
