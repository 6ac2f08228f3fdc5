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
        let Some((name, payload)) = approval_event(event.id, &event.kind) else {
            return Value::Null;
        };
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

    /// Numbered here on a store this gateway alone writes. On a shared sequence only a run
    /// event the log could not take comes here: published without a number of its own (see
    /// the hub's module doc).
    fn run_event(&self, event: &RunEvent<'_>) -> Value {
        let (name, payload) = run_event(event);
        self.publish(name, &payload, AUDIENCE);
        payload
    }

    fn run_payload(&self, event: &RunEvent<'_>) -> Value {
        run_event(event).1
    }

    fn logged_run_event(&self, seq: u64, event: &RunEvent<'_>) {
        let (name, payload) = run_event(event);
        self.publish_logged(name, &payload, AUDIENCE, seq);
    }
}

/// Approval and run events read back from the shared log, as the frames they were published
/// as (a run event this build cannot read is left out: the replay then says it is incomplete).
pub(crate) fn logged_frames(events: &[ApprovalEvent]) -> Vec<Recent> {
    events
        .iter()
        .filter_map(|event| {
            let (name, payload) = approval_event(event.id, &event.kind)?;
            Some(Recent {
                seq: event.seq,
                audience: AUDIENCE,
                frame: EventFrame::new(name, &payload, event.seq).to_text().into(),
                unnumbered: false,
            })
        })
        .collect()
}
