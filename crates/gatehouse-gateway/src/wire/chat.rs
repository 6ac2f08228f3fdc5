//! Chat shapes on the wire: a chat sender as an agent host reports them (for `/elevated`),
//! `session.bind` and `elevated.directive`, and chat approvals as `gateway.status` reports
//! them: which channels are connected, every approval message not delivered or not edited (or
//! lost) with its last error, each until it is fixed, the queues and digests, and failed
//! replies, so an operator sees why a prompt did not arrive or a card still shows buttons.

use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_service::chat::{Operation, TargetFailure};
use gatehouse_service::{ChatQueue, ChatStatus, MessageProblem, ProblemKind, StoppedChannel};
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
    /// Every approval message not delivered, not edited or lost (newest first), then the last
    /// unrecovered failure of each reply and answer target.
    failures: Vec<ChatFailure>,
    /// Conversations with messages waiting or copies to edit.
    queues: Vec<QueueJson>,
    /// Channels whose connection ended with an error: no longer an approval route.
    stopped: Vec<StoppedJson>,
    /// On a store several gateways share: which gateway holds the chat connections.
    #[serde(skip_serializing_if = "Option::is_none")]
    lease: Option<LeaseJson>,
}

/// Who holds the chat lease.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LeaseJson {
    /// The holder's name (host:port); null while nobody holds it.
    holder: Option<String>,
    /// The answering gateway's name.
    this_gateway: String,
}

/// A conversation with messages waiting.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct QueueJson {
    channel: String,
    conversation: String,
    /// Approval messages waiting to be sent.
    waiting: usize,
    /// Copies of settled approvals waiting for their final edit.
    to_edit: usize,
    /// Whether a digest stands for the waiting messages.
    digest: bool,
    /// How much longer the platform holds sends there (a 429), ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_for_ms: Option<u64>,
}

impl From<ChatQueue> for QueueJson {
    fn from(queue: ChatQueue) -> Self {
        QueueJson {
            channel: queue.channel,
            conversation: queue.conversation,
            waiting: queue.waiting,
            to_edit: queue.to_edit,
            digest: queue.digest,
            paused_for_ms: queue
                .paused_for
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }
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
        let messages = status.problems.iter().map(ChatFailure::from);
        let replies = status.failures.iter().map(ChatFailure::from);
        ChatStatusJson {
            channels: status.channels,
            failures: messages.chain(replies).collect(),
            queues: status.queues.into_iter().map(Into::into).collect(),
            stopped: status
                .stopped
                .into_iter()
                .map(|StoppedChannel { channel, error }| StoppedJson { channel, error })
                .collect(),
            lease: status.lease.map(|lease| LeaseJson {
                holder: lease.holder,
                this_gateway: lease.this_gateway,
            }),
        }
    }
}

/// One approval message's problem, or one reply target's last failure.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChatFailure {
    channel: String,
    target: String,
    /// The call that fails: `send` (undelivered or lost), `update` (unedited), `delete`,
    /// `answer`.
    operation: &'static str,
    error: String,
    attempts: u32,
    /// For approval messages: `undelivered`, `unedited` or `lost`.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<&'static str>,
    /// The approval the message shows (absent for a digest and for replies).
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_id: Option<String>,
    /// `card`, `prompt`, `notice`, `fallback` or `digest`.
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    /// When it last failed, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_at_ms: Option<u64>,
    /// When it is tried next, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_at_ms: Option<u64>,
}

impl From<&MessageProblem> for ChatFailure {
    fn from(problem: &MessageProblem) -> Self {
        let (operation, name) = match problem.problem {
            ProblemKind::Undelivered => ("send", "undelivered"),
            ProblemKind::Unedited => ("update", "unedited"),
            ProblemKind::Lost => ("send", "lost"),
        };
        ChatFailure {
            channel: problem.channel.clone(),
            target: problem.target.clone(),
            operation,
            error: problem.error.clone(),
            attempts: problem.attempts,
            problem: Some(name),
            approval_id: problem.approval_id.clone(),
            kind: Some(problem.kind.clone()),
            failed_at_ms: problem.failed_at_ms,
            retry_at_ms: problem.retry_at_ms,
        }
    }
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
            problem: None,
            approval_id: None,
            kind: None,
            failed_at_ms: None,
            retry_at_ms: None,
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
