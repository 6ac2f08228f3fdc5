//! What the gate answers for one tool call.

use std::fmt;

use crate::exec::{Decision, ExecEvaluation};
use crate::files::ResolvedFile;
use crate::urls::ApprovedUrl;

use super::grant::Grant;

/// The answer to [`super::decide_tool_call`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCallOutcome {
    /// Decided.
    Decided(Box<ToolCallDecision>),
    /// Nothing refused the call so far, but these hosts must be resolved first: resolve each
    /// (all A and AAAA records), put the answers in [`super::ToolCall::resolved`] and decide
    /// again.
    NeedsResolution(Vec<HostToResolve>),
}

/// A host name the caller must resolve.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostToResolve {
    /// The normalized host name.
    pub host: String,
    /// The port the fetch will connect to.
    pub port: u16,
}

/// The decision for one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallDecision {
    /// The canonical tool name.
    pub tool: String,
    /// The strictest of the reasons' decisions.
    pub decision: Decision,
    /// Why, strictest first; never empty.
    pub reasons: Vec<ToolCallReason>,
    /// For file tools: each path checked, with the canonical path the caller must open.
    pub files: Vec<ResolvedFile>,
    /// For URL parameters: each URL approved, with the addresses the caller must pin.
    pub urls: Vec<ApprovedUrl>,
    /// For `exec`: the exec policy's full evaluation (its own allow-always patterns included).
    pub exec: Option<ExecEvaluation>,
    /// What an allow-always answer stores; `None` when the call is refused (nothing to grant)
    /// or is `exec` (which stores allowlist patterns instead).
    pub grant: Option<Grant>,
}

/// One reason of a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallReason {
    /// What this reason asks for.
    pub decision: Decision,
    /// The rule id (`tool-removed`, `outside-workspace`, `blocked-address`, an exec rule, …)
    /// operators look up in the docs.
    pub rule: String,
    /// What a person reads.
    pub message: String,
}

impl ToolCallReason {
    pub(crate) fn new(
        decision: Decision,
        rule: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ToolCallReason {
            decision,
            rule: rule.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ToolCallReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.message)
    }
}
