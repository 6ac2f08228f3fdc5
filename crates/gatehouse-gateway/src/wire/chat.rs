//! Chat approvals as `gateway.status` reports them: which channels are connected and the last
//! delivery failure of each chat target, so an operator sees why a prompt did not arrive.

use gatehouse_chat::delivery::{Operation, TargetFailure};
use serde::Serialize;

/// `gateway.status.chat`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatStatus {
    /// Connected channel names, sorted.
    pub(crate) channels: Vec<String>,
    /// The last unrecovered failure of each target.
    pub(crate) failures: Vec<ChatFailure>,
}

/// One target's last failure.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatFailure {
    pub(crate) channel: String,
    pub(crate) target: String,
    pub(crate) operation: &'static str,
    pub(crate) error: String,
    pub(crate) attempts: u32,
}

impl From<&TargetFailure> for ChatFailure {
    fn from(failure: &TargetFailure) -> Self {
        ChatFailure {
            channel: failure.channel.clone(),
            target: failure.target.clone(),
            operation: match failure.operation {
                Operation::Send => "send",
                Operation::Update => "update",
                Operation::Delete => "delete",
                Operation::Answer => "answer",
            },
            error: failure.error.to_string(),
            attempts: failure.attempts,
        }
    }
}
