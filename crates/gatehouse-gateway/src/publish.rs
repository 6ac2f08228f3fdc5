//! The hub as the service's [`Publisher`]: the service's events, converted to the protocol's
//! event frames (`wire::exec`), go to every connection allowed to answer approvals.

use gatehouse_approvals::ApprovalEvent;
use gatehouse_service::{Publisher, RunEvent};
use serde_json::Value;

use crate::hub::EventHub;
use crate::scope::{Access, Scope};
use crate::wire::exec::{approval_event, run_event};

/// Approval and run events are for operators: those who may answer them.
const AUDIENCE: Access = Access::Scope(Scope::Approvals);

impl Publisher for EventHub {
    fn approvers_connected(&self) -> bool {
        self.has_subscriber(AUDIENCE)
    }

    fn approval_event(&self, event: &ApprovalEvent) -> Value {
        let (name, payload) = approval_event(event.id, &event.kind);
        self.publish(name, &payload, AUDIENCE);
        payload
    }

    fn run_event(&self, event: &RunEvent<'_>) -> Value {
        let (name, payload) = run_event(event);
        self.publish(name, &payload, AUDIENCE);
        payload
    }
}
