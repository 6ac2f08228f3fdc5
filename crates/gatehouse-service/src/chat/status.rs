//! The outbox's troubled messages as the status shows them: one line per message, never merged
//! with another message to the same chat, so a later success elsewhere erases nothing.

use gatehouse_approvals::{OutboxEntry, OutboxState};

use super::journal::route;
use super::{MessageProblem, ProblemKind};

/// What `entry` tells an operator.
pub(super) fn problem(entry: &OutboxEntry) -> MessageProblem {
    let problem = match entry.state {
        OutboxState::Delivered => ProblemKind::Unedited,
        OutboxState::Lost => ProblemKind::Lost,
        _ => ProblemKind::Undelivered,
    };
    MessageProblem {
        channel: entry.message.route.channel.clone(),
        target: route(&entry.message.route).to_string(),
        approval_id: entry.message.approval_id.clone(),
        kind: entry.message.kind.clone(),
        problem,
        error: entry.last_error.clone().unwrap_or_default(),
        attempts: entry.attempts,
        failed_at_ms: entry.last_error_at_ms,
        retry_at_ms: entry.retry_at_ms,
    }
}
