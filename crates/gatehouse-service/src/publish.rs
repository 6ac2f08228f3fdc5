//! The service's one port towards its operators: tell them what happened, and say whether any
//! of them is there to answer. A transport implements [`Publisher`] (the gateway's event hub);
//! the service never knows how events travel or how they are spelt.

use std::path::Path;

use gatehouse_approvals::{ApprovalEvent, SharedSequence};
use serde_json::Value;
use uuid::Uuid;

use crate::exec::runner::Finished;

/// Where operators hear of approvals and runs.
///
/// Publishing never waits for a reader. Each call returns the payload as it was sent, which
/// the audit log then records as the event's details: the log says what operators were told.
pub trait Publisher: Send + Sync + 'static {
    /// Whether someone who may answer approvals is listening now. With nobody, and no chat
    /// route for the request either, an approval is expired at once (`no-approval-route`).
    fn approvers_connected(&self) -> bool;

    /// Announces one approval event (requested, resolved, expired, cancelled).
    fn approval_event(&self, event: &ApprovalEvent) -> Value;

    /// Announces a run starting to take long, finishing, or being refused.
    fn run_event(&self, event: &RunEvent<'_>) -> Value;

    /// The payload [`Publisher::run_event`] would send for `event`, sending nothing: on a
    /// shared store a run event is announced once the event log has it (see
    /// [`Publisher::logged_run_event`]), and the audit log records this payload at once.
    fn run_payload(&self, event: &RunEvent<'_>) -> Value;

    /// Announces a run event (this gateway's or another's) that the shared store's log
    /// numbered `seq`, in log order among the approval events.
    fn logged_run_event(&self, seq: u64, event: &RunEvent<'_>);

    /// Called once at start, before any event, when the approvals store is shared by several
    /// gateways: approval events then carry the store's log numbers (`ApprovalEvent::seq`),
    /// the same on every gateway, and `sequence` names that log. A publisher that keeps no
    /// numbering of its own has nothing to do.
    fn follow_shared_sequence(&self, sequence: &SharedSequence) {
        let _ = sequence;
    }
}

/// Something that happened to one `system.run`; every event carries its run id (the approval
/// id when a person was asked).
#[derive(Debug, Clone, Copy)]
pub enum RunEvent<'a> {
    /// The run has lasted `ExecLimits::running_event_after` and is still going.
    Running {
        /// The run.
        run_id: Uuid,
        /// The agent it runs for.
        agent_id: &'a str,
        /// The exact argv.
        argv: &'a [String],
        /// Its working directory.
        cwd: &'a Path,
    },
    /// The run ended (or was killed at its timeout).
    Finished {
        /// The run.
        run_id: Uuid,
        /// How it ended.
        finished: &'a Finished,
    },
    /// The run did not happen.
    Denied {
        /// The run.
        run_id: Uuid,
        /// Why, as a stable word.
        denial: Denial,
        /// Why, for people.
        detail: &'a str,
    },
}

/// Why a run did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// A person denied it.
    UserDenied,
    /// Nobody answered in time (or the approval was withdrawn), and `askFallback` did not let
    /// it run.
    ApprovalTimeout,
    /// Nobody could be asked.
    NoApprovalRoute,
    /// What would run is no longer what was approved.
    BindingMismatch,
    /// The request's environment was refused (a variable that looks like a credential, a NUL
    /// byte, too many or too large).
    Environment,
    /// The session runs sandboxed and the sandbox refused it (a mount check, a program or
    /// working directory it would see elsewhere, bubblewrap missing).
    Sandbox,
    /// The policy refused it, or it could not be started.
    Policy,
}

impl Denial {
    /// Every denial, for reading one back by its spelling.
    const ALL: [Denial; 7] = [
        Self::UserDenied,
        Self::ApprovalTimeout,
        Self::NoApprovalRoute,
        Self::BindingMismatch,
        Self::Environment,
        Self::Sandbox,
        Self::Policy,
    ];

    /// The denial spelt `word` ([`Denial::as_str`]), if any.
    pub fn parse(word: &str) -> Option<Denial> {
        Self::ALL.into_iter().find(|denial| denial.as_str() == word)
    }

    /// The stable spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UserDenied => "user-denied",
            Self::ApprovalTimeout => "approval-timeout",
            Self::NoApprovalRoute => "no-approval-route",
            Self::BindingMismatch => "binding-mismatch",
            Self::Environment => "environment",
            Self::Sandbox => "sandbox",
            Self::Policy => "policy",
        }
    }
}
