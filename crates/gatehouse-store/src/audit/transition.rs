//! The audit record of an approval transition, built from the approval as stored, so a store
//! can append it inside the transaction that makes the transition: a crash then never leaves
//! a transition without its record, nor a record of a transition that did not happen.
//!
//! The record is an ordinary [`AuditEvent`], chained and checked like every other; only its
//! payload is fixed here rather than by the gateway, since the store knows the approval and
//! not what operators were told of it.

use gatehouse_approvals::ApprovalRecord;
use serde_json::{Value, json};

use super::record::{AuditEvent, AuditKind};

/// Which transition of an approval a record stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The approval was created, pending.
    Requested,
    /// It left `pending`: allowed, denied, expired or cancelled (its state says which).
    Settled,
    /// The single run of an `allow-once` approval was taken.
    Consumed,
}

/// The audit event recording `transition` of `record` (as it is after the transition).
pub fn transition_event(record: &ApprovalRecord, transition: Transition) -> AuditEvent {
    let (kind, payload) = match transition {
        Transition::Requested => (AuditKind::Request, requested(record)),
        Transition::Settled => (
            AuditKind::Decision,
            json!({
                "transition": record.state.as_str(),
                "decision": record.decision.map(|d| d.as_str()),
                "resolvedBy": record.resolved_by,
                "reason": record.reason,
            }),
        ),
        Transition::Consumed => (
            AuditKind::Execution,
            json!({"transition": "consumed", "decision": "allow-once"}),
        ),
    };
    AuditEvent::new(kind, payload).with_approval_id(record.id.clone())
}

/// What was asked, as approvers saw it: the command and where and for whom it would run.
fn requested(record: &ApprovalRecord) -> Value {
    let r = &record.request;
    json!({
        "transition": "requested",
        "command": r.command,
        "argv": r.argv,
        "cwd": r.cwd,
        "host": r.host,
        "agentId": r.agent_id,
        "sessionKey": r.session_key,
        "resolvedPath": r.resolved_path,
        "security": r.security.map(|s| s.as_str()),
        "ask": r.ask.map(|a| a.as_str()),
        "requestedBy": r.requested_by,
        "tool": r.tool.as_ref().map(|tool| json!({
            "tool": tool.tool,
            "callId": tool.call_id,
            "params": tool.params,
        })),
        "createdAtMs": record.created_at_ms,
        "expiresAtMs": record.expires_at_ms,
    })
}
