//! When a person must approve, and what happens when nobody does.
//!
//! These are the composition rules between `security`, `ask`, the analysis result and an
//! approval decision, shared by the gateway (`exec`) and node (`system.run`) paths so the two
//! can never disagree.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::modes::{ApprovalDecision, Ask, Security};

/// The facts an approval requirement depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalFacts {
    /// Effective `security`.
    pub security: Security,
    /// Effective `ask`.
    pub ask: Ask,
    /// The command parsed and was understood.
    pub analysis_ok: bool,
    /// Every segment was satisfied.
    pub allowlist_satisfied: bool,
    /// A stored exact-command approval covers this command text.
    pub durable_approval_satisfied: bool,
}

/// Whether a person must approve before the command runs.
///
/// `ask: always` asks even when a durable approval exists, because the operator asked for
/// every run to be seen; otherwise only an allowlist miss under `allowlist` security asks.
pub fn requires_approval(facts: ApprovalFacts) -> bool {
    if facts.ask == Ask::Always {
        return true;
    }
    if facts.durable_approval_satisfied {
        return false;
    }
    facts.ask == Ask::OnMiss
        && facts.security == Security::Allowlist
        && !(facts.analysis_ok && facts.allowlist_satisfied)
}

/// What came back from a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// A person answered.
    Decided(ApprovalDecision),
    /// Nobody answered in time; `askFallback` decides.
    TimedOut,
}

/// Why a run did not go ahead after asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeniedReason {
    /// A person answered `deny`.
    UserDenied,
    /// Nobody answered and the fallback is `deny`.
    ApprovalTimeout,
    /// Nobody answered, the fallback is `allowlist`, and the command is not allowlisted.
    ApprovalTimeoutAllowlistMiss,
}

impl DeniedReason {
    /// The wire spelling used in events and receipts.
    pub fn as_str(self) -> &'static str {
        match self {
            DeniedReason::UserDenied => "user-denied",
            DeniedReason::ApprovalTimeout => "approval-timeout",
            DeniedReason::ApprovalTimeoutAllowlistMiss => "approval-timeout: allowlist-miss",
        }
    }
}

impl fmt::Display for DeniedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of resolving a pending approval: run it, or the reason it does not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FallbackResult {
    /// The command may run.
    pub approved: bool,
    /// Why it may not; `None` when approved.
    pub denied_reason: Option<DeniedReason>,
}

/// Resolves an approval outcome, applying `askFallback` on a timeout.
///
/// The fallback is clamped to the host security (stricter wins), so a `full` fallback can
/// never loosen an `allowlist` host.
pub fn resolve_approval(
    outcome: ApprovalOutcome,
    ask_fallback: Security,
    host_security: Security,
    analysis_ok: bool,
    allowlist_satisfied: bool,
) -> FallbackResult {
    let approved = FallbackResult {
        approved: true,
        denied_reason: None,
    };
    let denied = |reason| FallbackResult {
        approved: false,
        denied_reason: Some(reason),
    };
    match outcome {
        ApprovalOutcome::Decided(ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways) => {
            approved
        }
        ApprovalOutcome::Decided(ApprovalDecision::Deny) => denied(DeniedReason::UserDenied),
        ApprovalOutcome::TimedOut => match ask_fallback.min_security(host_security) {
            Security::Full => approved,
            Security::Allowlist if analysis_ok && allowlist_satisfied => approved,
            Security::Allowlist => denied(DeniedReason::ApprovalTimeoutAllowlistMiss),
            Security::Deny => denied(DeniedReason::ApprovalTimeout),
        },
    }
}

/// Why a node `system.run` request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeRunReason {
    /// The node's security is `deny`.
    SecurityDeny,
    /// A person must approve and has not.
    ApprovalRequired,
    /// Allowlist security, the command is not allowlisted and nobody approved it.
    AllowlistMiss,
}

impl NodeRunReason {
    /// The wire spelling used in node events.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeRunReason::SecurityDeny => "security-deny",
            NodeRunReason::ApprovalRequired => "approval-required",
            NodeRunReason::AllowlistMiss => "allowlist-miss",
        }
    }
}

impl fmt::Display for NodeRunReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The node host's verdict on a `system.run` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRunVerdict {
    /// The command may run.
    pub allowed: bool,
    /// Why not; `None` when allowed.
    pub reason: Option<NodeRunReason>,
    /// The policy wanted a person to approve.
    pub requires_ask: bool,
    /// The request carried an approval decision that counts.
    pub approved_by_ask: bool,
}

/// Decides a node `system.run` request that may carry an approval decision from the gateway.
pub fn node_run_policy(facts: ApprovalFacts, approval: Option<ApprovalDecision>) -> NodeRunVerdict {
    let approved_by_ask = matches!(
        approval,
        Some(ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways)
    );
    if facts.security == Security::Deny {
        return NodeRunVerdict {
            allowed: false,
            reason: Some(NodeRunReason::SecurityDeny),
            requires_ask: false,
            approved_by_ask: false,
        };
    }
    let requires_ask = requires_approval(facts);
    let refused = |reason| NodeRunVerdict {
        allowed: false,
        reason: Some(reason),
        requires_ask,
        approved_by_ask,
    };
    if requires_ask && !approved_by_ask {
        return refused(NodeRunReason::ApprovalRequired);
    }
    let satisfied = facts.analysis_ok && facts.allowlist_satisfied;
    if facts.security == Security::Allowlist
        && !satisfied
        && !approved_by_ask
        && !facts.durable_approval_satisfied
    {
        return refused(NodeRunReason::AllowlistMiss);
    }
    NodeRunVerdict {
        allowed: true,
        reason: None,
        requires_ask,
        approved_by_ask,
    }
}

/// Keeps only the decisions that approve a run; anything else (including `deny`, unknown
/// spellings and case variants) becomes `None`, so a malformed answer can never approve.
pub fn normalize_approval_decision(value: &str) -> Option<ApprovalDecision> {
    match value {
        "allow-once" => Some(ApprovalDecision::AllowOnce),
        "allow-always" => Some(ApprovalDecision::AllowAlways),
        _ => None,
    }
}

/// The allowlist pattern that approves exactly one command text:
/// `=command:` followed by the first 16 hex digits of its SHA-256.
pub fn exact_command_pattern(command_text: &str) -> String {
    let digest = Sha256::digest(command_text.as_bytes());
    let mut hex = String::with_capacity(16);
    for byte in digest.iter().take(8) {
        hex.push_str(&format!("{byte:02x}"));
    }
    format!("=command:{hex}")
}

/// Whether an allowlist holds a durable exact-command approval for this text.
pub fn durable_approval_satisfied<'a>(
    command_text: &str,
    allowlist_patterns: impl IntoIterator<Item = &'a str>,
) -> bool {
    let wanted = exact_command_pattern(command_text);
    allowlist_patterns
        .into_iter()
        .any(|pattern| pattern.trim() == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(security: Security, ask: Ask, satisfied: bool, durable: bool) -> ApprovalFacts {
        ApprovalFacts {
            security,
            ask,
            analysis_ok: true,
            allowlist_satisfied: satisfied,
            durable_approval_satisfied: durable,
        }
    }

    #[test]
    fn asks_only_on_a_miss_under_allowlist_or_always() {
        assert!(requires_approval(facts(
            Security::Allowlist,
            Ask::OnMiss,
            false,
            false
        )));
        assert!(!requires_approval(facts(
            Security::Allowlist,
            Ask::OnMiss,
            true,
            false
        )));
        assert!(!requires_approval(facts(
            Security::Full,
            Ask::OnMiss,
            false,
            false
        )));
        assert!(!requires_approval(facts(
            Security::Allowlist,
            Ask::Off,
            false,
            false
        )));
        assert!(!requires_approval(facts(
            Security::Allowlist,
            Ask::OnMiss,
            false,
            true
        )));
        assert!(requires_approval(facts(
            Security::Full,
            Ask::Always,
            true,
            true
        )));
    }

    #[test]
    fn clamps_the_fallback_to_host_security() {
        let timeout = |fallback, host, satisfied| {
            resolve_approval(ApprovalOutcome::TimedOut, fallback, host, true, satisfied)
        };
        assert!(!timeout(Security::Full, Security::Allowlist, false).approved);
        assert_eq!(
            timeout(Security::Full, Security::Allowlist, false).denied_reason,
            Some(DeniedReason::ApprovalTimeoutAllowlistMiss)
        );
        assert!(timeout(Security::Full, Security::Full, false).approved);
        assert_eq!(
            timeout(Security::Deny, Security::Full, true).denied_reason,
            Some(DeniedReason::ApprovalTimeout)
        );
        let denied = resolve_approval(
            ApprovalOutcome::Decided(ApprovalDecision::Deny),
            Security::Full,
            Security::Full,
            true,
            true,
        );
        assert_eq!(denied.denied_reason, Some(DeniedReason::UserDenied));
    }

    #[test]
    fn node_policy_names_its_reason() {
        let verdict = node_run_policy(facts(Security::Deny, Ask::Off, true, false), None);
        assert_eq!(verdict.reason, Some(NodeRunReason::SecurityDeny));
        let verdict = node_run_policy(facts(Security::Allowlist, Ask::OnMiss, false, false), None);
        assert_eq!(verdict.reason, Some(NodeRunReason::ApprovalRequired));
        let verdict = node_run_policy(
            facts(Security::Allowlist, Ask::OnMiss, false, false),
            Some(ApprovalDecision::AllowOnce),
        );
        assert!(verdict.allowed && verdict.approved_by_ask);
        let verdict = node_run_policy(facts(Security::Allowlist, Ask::Off, false, false), None);
        assert_eq!(verdict.reason, Some(NodeRunReason::AllowlistMiss));
    }

    #[test]
    fn keeps_only_approving_decisions() {
        assert_eq!(
            normalize_approval_decision("allow-once"),
            Some(ApprovalDecision::AllowOnce)
        );
        assert_eq!(
            normalize_approval_decision("allow-always"),
            Some(ApprovalDecision::AllowAlways)
        );
        for other in ["deny", "Allow-Once", "allow", "", " allow-once"] {
            assert_eq!(normalize_approval_decision(other), None, "{other:?}");
        }
    }

    #[test]
    fn exact_command_entries_approve_only_their_text() {
        let pattern = exact_command_pattern("git status");
        assert!(pattern.starts_with("=command:"));
        assert_eq!(pattern.len(), "=command:".len() + 16);
        assert!(durable_approval_satisfied("git status", [pattern.as_str()]));
        assert!(!durable_approval_satisfied(
            "git status ",
            [pattern.as_str()]
        ));
        assert!(!durable_approval_satisfied("git status", ["/usr/bin/git"]));
    }
}
