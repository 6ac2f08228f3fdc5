//! The hub as the service's [`Publisher`]: the service's events, converted to the protocol's
//! event frames (`wire::exec`), go to every connection allowed to answer approvals.

use gatehouse_approvals::{ApprovalEvent, SharedSequence};
use gatehouse_service::{Publisher, RunEvent};
use serde_json::Value;

use crate::hub::{EventHub, Recent};
use crate::scope::{Access, Scope};
use crate::wire::EventFrame;
use crate::wire::exec::{approval_event, run_event};

/// Approval and run events are for operators: those who may answer them.
const AUDIENCE: Access = Access::Scope(Scope::Approvals);

impl Publisher for EventHub {
    fn approvers_connected(&self) -> bool {
        self.has_subscriber(AUDIENCE)
    }

    fn approval_event(&self, event: &ApprovalEvent) -> Value {
        let (name, payload) = approval_event(event.id, &event.kind);
        if self.is_shared() {
            self.publish_logged(name, &payload, AUDIENCE, event.seq);
        } else {
            self.publish(name, &payload, AUDIENCE);
        }
        payload
    }

    fn follow_shared_sequence(&self, sequence: &SharedSequence) {
        EventHub::follow_shared_sequence(self, &sequence.instance, sequence.start);
    }

    fn run_event(&self, event: &RunEvent<'_>) -> Value {
        let (name, payload) = run_event(event);
        self.publish(name, &payload, AUDIENCE);
        payload
    }
}

/// Approval events read back from the shared log, as the frames they were published as.
pub(crate) fn logged_frames(events: &[ApprovalEvent]) -> Vec<Recent> {
    events
        .iter()
        .map(|event| {
            let (name, payload) = approval_event(event.id, &event.kind);
            Recent {
                seq: event.seq,
                audience: AUDIENCE,
                frame: EventFrame::new(name, &payload, event.seq).to_text().into(),
            }
        })
        .collect()
}
