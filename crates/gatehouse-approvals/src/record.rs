//! The approval domain: what is asked, how it ends, and the values any approval store keeps
//! and returns. Plain data, shared by the manager, every store and the surfaces above them.

use std::fmt;
use std::str::FromStr;

use gatehouse_policy::exec::ApprovalSummary;
use gatehouse_policy::tool_call::Grant;
use gatehouse_policy::{ApprovalDecision, Ask, ParseModeError, Security};

/// Where the turn that triggered the request came from, so replies reach the same conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnSource {
    /// Chat channel (`discord`, `telegram`, `slack`, `webchat`, ...).
    pub channel: Option<String>,
    /// Conversation or recipient within the channel.
    pub to: Option<String>,
    /// Bot account that received the turn.
    pub account_id: Option<String>,
    /// Thread or topic within the conversation.
    pub thread_id: Option<String>,
}

/// The binding computed at approval time: re-checked right before the approved run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunBinding {
    /// sha256 hex over the canonical binding.
    pub hash: String,
    /// The bound fields as JSON, to name the field that differs on a mismatch.
    pub json: String,
}

/// What an agent asked to run, as shown to approvers and bound for execution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The command text shown to approvers.
    pub command: String,
    /// The exact argv, when known.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Names of the environment overrides (values are never stored).
    pub env_keys: Vec<String>,
    /// Exec host (`gateway`, `node`, `sandbox`).
    pub host: Option<String>,
    /// The requesting agent.
    pub agent_id: Option<String>,
    /// The requesting session.
    pub session_key: Option<String>,
    /// The pinned executable path.
    pub resolved_path: Option<String>,
    /// Effective security at request time.
    pub security: Option<Security>,
    /// Effective ask at request time.
    pub ask: Option<Ask>,
    /// Where the turn came from.
    pub turn_source: Option<TurnSource>,
    /// The execution binding, when the run is bound.
    pub binding: Option<RunBinding>,
    /// Who asked (the gateway's token name). Stored so the requester can still see and wait on
    /// its approval after a restart; not shown to approvers.
    pub requested_by: Option<String>,
    /// What approvers are shown of what runs: every program of the chain, the request's
    /// variable names, the patterns allow-always would store. `None` for approvals stored
    /// before it was kept.
    pub summary: Option<ApprovalSummary>,
    /// For a tool call other than an exec command: the tool, what approvers are told about it,
    /// and what allow-always grants. `None` for exec approvals.
    pub tool: Option<ToolRequest>,
}

/// A tool call a person is asked about (`tools.call.request`). `command` of its
/// [`ApprovalRequest`] holds the one-line summary every surface can show; this holds the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRequest {
    /// The canonical tool name (`write`, `web_fetch`, `mcp__github__create_issue`).
    pub tool: String,
    /// The agent host's id of the call, so `tools.call.finished` can name it.
    pub call_id: Option<String>,
    /// The call's salient parameters as approvers read them, in order: (name, value). Untrusted
    /// text: every surface makes it visible before showing it.
    pub params: Vec<(String, String)>,
    /// The requester's one-line title.
    pub title: Option<String>,
    /// The requester's longer description (may hold several lines).
    pub description: Option<String>,
    /// How much the requester thinks is at stake.
    pub severity: Severity,
    /// Why the policy asks (`always-ask: tools.alwaysAsk entry "browser" names tool "browser"`).
    pub reasons: Vec<String>,
    /// What an allow-always answer stores for the agent; `None` when allow-always is not
    /// offered. A store that applies an allow-always resolution to this approval stores the
    /// grant in the same transaction (see [`crate::ApprovalStore::resolve`]).
    pub grant: Option<Grant>,
}

/// How much is at stake in a tool approval, as the requester rates it: surfaces order and
/// colour by it, nothing is decided by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Severity {
    /// Routine.
    #[default]
    Info,
    /// Worth a second look.
    Warning,
    /// Could do lasting harm.
    Critical,
}

impl Severity {
    /// Stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = ParseModeError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "info" => Ok(Severity::Info),
            "warning" => Ok(Severity::Warning),
            "critical" => Ok(Severity::Critical),
            other => Err(ParseModeError {
                kind: "severity",
                value: other.to_owned(),
                expected: "info, warning, critical",
            }),
        }
    }
}

/// A request about to be stored. The caller assigns the id and the times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApproval {
    /// Unique id; see `mint_approval_id` for the ids the manager makes.
    pub id: String,
    /// The request.
    pub request: ApprovalRequest,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// When the manager will expire it, ms since the Unix epoch.
    pub expires_at_ms: u64,
}

/// Lifecycle state. Moves only from `Pending` to one of the four terminal states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalState {
    /// Waiting for an answer.
    Pending,
    /// Answered `allow-once` or `allow-always`.
    Allowed,
    /// Answered `deny`.
    Denied,
    /// Nobody answered in time, or no approver could be reached.
    Expired,
    /// Withdrawn (the gateway restarted, the requester went away).
    Cancelled,
}

impl ApprovalState {
    /// Stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Allowed => "allowed",
            ApprovalState::Denied => "denied",
            ApprovalState::Expired => "expired",
            ApprovalState::Cancelled => "cancelled",
        }
    }

    /// True for every state but `Pending`; terminal rows never change again (except the
    /// allow-once consumption mark).
    pub fn is_terminal(self) -> bool {
        !matches!(self, ApprovalState::Pending)
    }
}

impl fmt::Display for ApprovalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalState {
    type Err = ParseModeError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "pending" => Ok(ApprovalState::Pending),
            "allowed" => Ok(ApprovalState::Allowed),
            "denied" => Ok(ApprovalState::Denied),
            "expired" => Ok(ApprovalState::Expired),
            "cancelled" => Ok(ApprovalState::Cancelled),
            other => Err(ParseModeError {
                kind: "state",
                value: other.to_owned(),
                expected: "pending, allowed, denied, expired, cancelled",
            }),
        }
    }
}

/// A chat message that shows the approval, so it can be edited when the approval ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveredMessage {
    /// Channel (`discord`, `telegram`, `slack`).
    pub channel: String,
    /// Bot account that sent it.
    pub account_id: Option<String>,
    /// Chat, channel or DM id.
    pub chat_id: String,
    /// Platform message id.
    pub message_id: String,
    /// Thread or topic id.
    pub thread_id: Option<String>,
}

/// A stored approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// Unique id.
    pub id: String,
    /// What was asked.
    pub request: ApprovalRequest,
    /// Where it is in its lifecycle.
    pub state: ApprovalState,
    /// The person's answer, for `Allowed` and `Denied`.
    pub decision: Option<ApprovalDecision>,
    /// Who answered (approver id, `timeout`, ...).
    pub resolved_by: Option<String>,
    /// Why it expired or was cancelled (`timeout`, `no-approval-route`, `gateway-restart`).
    pub reason: Option<String>,
    /// Creation time, ms.
    pub created_at_ms: u64,
    /// Planned expiry, ms.
    pub expires_at_ms: u64,
    /// When it left `Pending`, ms.
    pub resolved_at_ms: Option<u64>,
    /// When the single run of an `allow-once` approval was taken, ms.
    pub consumed_at_ms: Option<u64>,
    /// Chat messages showing it, in delivery order.
    pub messages: Vec<DeliveredMessage>,
}

/// How a pending approval ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A person answered.
    Decided {
        /// The answer.
        decision: ApprovalDecision,
        /// Who answered.
        resolved_by: Option<String>,
        /// Why, in their words, if they gave a reason; stored and audited with the decision.
        reason: Option<String>,
    },
    /// Nobody answered in time, or no route to an approver existed.
    Expired {
        /// `timeout`, `no-approval-route`, ...
        reason: String,
    },
    /// Withdrawn.
    Cancelled {
        /// `gateway-restart`, `requester-gone`, ...
        reason: String,
    },
}

impl Resolution {
    /// The state this resolution moves the approval to.
    pub fn target_state(&self) -> ApprovalState {
        match self {
            Resolution::Decided {
                decision: ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways,
                ..
            } => ApprovalState::Allowed,
            Resolution::Decided {
                decision: ApprovalDecision::Deny,
                ..
            } => ApprovalState::Denied,
            Resolution::Expired { .. } => ApprovalState::Expired,
            Resolution::Cancelled { .. } => ApprovalState::Cancelled,
        }
    }

    /// The decision, for `Decided`.
    pub fn decision(&self) -> Option<ApprovalDecision> {
        match self {
            Resolution::Decided { decision, .. } => Some(*decision),
            Resolution::Expired { .. } | Resolution::Cancelled { .. } => None,
        }
    }

    /// True when `record` already ended exactly this way (same state and decision), which makes
    /// a repeated answer an idempotent success instead of a conflict.
    pub fn matches(&self, record: &ApprovalRecord) -> bool {
        record.state == self.target_state() && record.decision == self.decision()
    }
}

/// Result of a resolve: compare-and-swap from `Pending`, first answer wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveOutcome {
    /// This call moved the approval out of `Pending`.
    Applied(ApprovalRecord),
    /// The approval had already ended the same way; nothing changed; the record is the winner.
    Repeated(ApprovalRecord),
    /// The approval had already ended differently; nothing changed (`applied: false`).
    Rejected {
        /// The answer that won.
        winner: ApprovalRecord,
    },
}

impl ResolveOutcome {
    /// True only when this call changed the state.
    pub fn applied(&self) -> bool {
        matches!(self, ResolveOutcome::Applied(_))
    }

    /// The record as it stands after the call: the winning resolution.
    pub fn winner(&self) -> &ApprovalRecord {
        match self {
            ResolveOutcome::Applied(record)
            | ResolveOutcome::Repeated(record)
            | ResolveOutcome::Rejected { winner: record } => record,
        }
    }
}

/// Result of taking the single run an `allow-once` approval grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumeOutcome {
    /// This call took the run; it is the only one that ever will.
    Consumed(ApprovalRecord),
    /// The run was already taken; running again would be a replay.
    AlreadyConsumed(ApprovalRecord),
    /// The approval is not an `allow-once` allowance (pending, denied, expired, cancelled or
    /// `allow-always`).
    NotAllowOnce(ApprovalRecord),
}

/// Filters for [`crate::ApprovalStore::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFilter {
    /// Only this state.
    pub state: Option<ApprovalState>,
    /// Only this agent.
    pub agent_id: Option<String>,
    /// At most this many rows, from the end `order` starts at.
    pub limit: usize,
    /// Which end of the history the rows come from, and in which order.
    pub order: ListOrder,
}

impl Default for ListFilter {
    fn default() -> Self {
        ListFilter {
            state: None,
            agent_id: None,
            limit: 100,
            order: ListOrder::OldestFirst,
        }
    }
}

/// The order of a listing, by creation time (then id). With a limit it also picks the end:
/// a history view wants the latest approvals, not the first ones ever stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListOrder {
    /// Oldest first: the earliest approvals.
    #[default]
    OldestFirst,
    /// Newest first: the latest approvals.
    NewestFirst,
}

/// How long terminal approvals are kept for history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Age after resolution, in ms, beyond which a terminal row may be pruned.
    pub history_ms: u64,
}

impl Retention {
    /// Thirty days, the documented default.
    pub const DEFAULT_HISTORY_MS: u64 = 30 * 24 * 60 * 60 * 1000;

    /// The `resolved_at` cutoff for pruning at `now_ms`.
    pub fn cutoff(self, now_ms: u64) -> u64 {
        now_ms.saturating_sub(self.history_ms)
    }
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            history_ms: Self::DEFAULT_HISTORY_MS,
        }
    }
}
