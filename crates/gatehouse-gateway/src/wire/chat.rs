//! Chat shapes on the wire: a chat sender as an agent host reports them (for `/elevated`),
//! `session.bind` and `elevated.directive`, and chat approvals as `gateway.status` reports them — which channels are connected and the last
//! delivery failure of each chat target, so an operator sees why a prompt did not arrive.

use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_service::chat::{Operation, TargetFailure};
use gatehouse_service::{ChatStatus, StoppedChannel};
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

/// `session.bind` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BindParams {
    pub(crate) session_key: String,
    pub(crate) channel: String,
    pub(crate) to: String,
    #[serde(default)]
    pub(crate) account_id: Option<String>,
    #[serde(default, deserialize_with = "id_text")]
    pub(crate) thread_id: Option<String>,
}

/// `session.bind` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BindResult {
    pub(crate) bound: bool,
}

/// `elevated.directive` params: the sender as the host's platform identified them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DirectiveParams {
    pub(crate) text: String,
    pub(crate) sender: SenderJson,
    pub(crate) session_key: String,
}

/// `elevated.directive` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DirectiveResult {
    /// Whether the text was an `/elevated` directive at all.
    pub(crate) handled: bool,
    /// The reply to show the sender; absent when not handled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reply: Option<String>,
}

/// `gateway.status.chat`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatStatusJson {
    /// Connected channel names, sorted.
    channels: Vec<String>,
    /// The last unrecovered failure of each target.
    failures: Vec<ChatFailure>,
    /// Channels whose connection ended with an error: no longer an approval route.
    stopped: Vec<StoppedJson>,
}

/// A channel that stopped, and why.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StoppedJson {
    channel: String,
    error: String,
}

impl From<ChatStatus> for ChatStatusJson {
    fn from(status: ChatStatus) -> Self {
        ChatStatusJson {
            channels: status.channels,
            failures: status.failures.iter().map(ChatFailure::from).collect(),
            stopped: status
                .stopped
                .into_iter()
                .map(|StoppedChannel { channel, error }| StoppedJson { channel, error })
                .collect(),
        }
    }
}

/// One target's last failure.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChatFailure {
    channel: String,
    target: String,
    operation: &'static str,
    error: String,
    attempts: u32,
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

/// Thread ids arrive as numbers (Telegram topics) or strings (Slack `ts`).
fn id_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(i64),
    }
    Ok(Option::<Id>::deserialize(deserializer)?.map(|id| match id {
        Id::Text(text) => text,
        Id::Number(number) => number.to_string(),
    }))
}
