//! Chat shapes on the wire: a chat sender as an agent host reports them (for `/elevated`), and
//! chat approvals as `gateway.status` reports them — which channels are connected and the last
//! delivery failure of each chat target, so an operator sees why a prompt did not arrive.

use gatehouse_chat::delivery::{Operation, TargetFailure};
use gatehouse_policy::elevated::SenderIdentity;
use serde::{Deserialize, Serialize};

/// A chat sender as the host's platform identified them: whom `tools.elevated.allowFrom` is
/// checked against when a host passes on an `/elevated` request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SenderJson {
    channel: String,
    id: String,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    e164: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    tag: Option<String>,
}

impl From<&SenderJson> for SenderIdentity {
    fn from(sender: &SenderJson) -> Self {
        SenderIdentity {
            channel: sender.channel.clone(),
            id: sender.id.clone(),
            from: sender.from.clone(),
            e164: sender.e164.clone(),
            name: sender.name.clone(),
            username: sender.username.clone(),
            tag: sender.tag.clone(),
        }
    }
}

/// `gateway.status.chat`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatStatus {
    /// Connected channel names, sorted.
    pub(crate) channels: Vec<String>,
    /// The last unrecovered failure of each target.
    pub(crate) failures: Vec<ChatFailure>,
    /// Channels whose connection ended with an error: no longer an approval route.
    pub(crate) stopped: Vec<StoppedChannel>,
}

/// A channel that stopped, and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoppedChannel {
    pub(crate) channel: String,
    pub(crate) error: String,
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
