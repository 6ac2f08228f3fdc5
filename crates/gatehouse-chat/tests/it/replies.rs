use std::collections::BTreeSet;

use gatehouse_chat::grammar::approve::ApproveRefusal;
use gatehouse_chat::grammar::elevated::ElevatedRefusal;
use gatehouse_chat::render::ResolveOutcome;
use gatehouse_chat::replies::{
    ApproveOutcome, ElevatedOutcome, approve_outcome_text, approve_refusal_text,
    elevated_outcome_text, elevated_refusal_text,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::elevated::{ElevatedDenial, ElevatedLevel, LevelSource};
use pretty_assertions::assert_eq;

const ID: &str = "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab";

#[test]
fn approve_outcomes_are_distinct_and_clear() {
    let outcomes = [
        ApproveOutcome::Resolved {
            approval_id: ID.into(),
            decision: ApprovalDecision::AllowOnce,
        },
        ApproveOutcome::Unknown {
            target: "zzzz".into(),
        },
        ApproveOutcome::Expired {
            approval_id: ID.into(),
        },
        ApproveOutcome::AlreadyResolved {
            approval_id: ID.into(),
            winner: ResolveOutcome {
                decision: ApprovalDecision::Deny,
                decided_by: "carol".into(),
            },
        },
        ApproveOutcome::Ambiguous {
            prefix: "0f3c".into(),
            count: 2,
            listed: vec![ID.into(), "0f3cffff-0000".into()],
        },
        ApproveOutcome::NotAuthorized,
    ];
    let texts: Vec<String> = outcomes.iter().map(approve_outcome_text).collect();
    assert_eq!(
        texts,
        vec![
            "Allowed once 0f3c9a1e.",
            "No pending approval matches zzzz. Check the id on the card.",
            "Approval 0f3c9a1e has expired; the request fell back to askFallback.",
            "Approval 0f3c9a1e was already decided: denied by carol.",
            "0f3c matches 2 approvals (0f3c9a1e, 0f3cffff). Type more of the id.",
            "You are not an approver for exec approvals on this channel.",
        ]
    );
}

/// Issue 36: replies in a shared chat name no approval ids; decisions on approvals another
/// channel was shown, and allow-always on a cut command, are refused with why.
#[test]
fn outcomes_of_the_shown_rule_say_why() {
    let unlisted = ApproveOutcome::Ambiguous {
        prefix: "0f3c".into(),
        count: 3,
        listed: vec![],
    };
    assert_eq!(
        approve_outcome_text(&unlisted),
        "0f3c matches 3 approvals. Type more of the id."
    );
    assert_eq!(
        approve_outcome_text(&ApproveOutcome::NotShownHere {
            approval_id: ID.into(),
            channel: "slack".into(),
        }),
        "Approval 0f3c9a1e was not shown to approvers on slack, so it cannot be decided here. \
         Decide it where its card was shown, or in the Control UI."
    );
    assert_eq!(
        approve_outcome_text(&ApproveOutcome::AlwaysNeedsFullCommand {
            approval_id: ID.into(),
        }),
        "Allow-always is not offered for approval 0f3c9a1e: its command was too long to show in \
         full. Read it in the Control UI, or allow it once."
    );
    assert_eq!(
        approve_refusal_text(&ApproveRefusal::PrefixTooShort {
            target: "0f".into()
        }),
        "0f is too short: type at least 4 characters of the id (the 8 on the card always work).\n\
         Usage: /approve <id> allow-once|allow-always|deny (or /approve <decision> <id>)"
    );
}

#[test]
fn approve_refusals_carry_usage_and_sanitize_echoes() {
    let text = approve_refusal_text(&ApproveRefusal::UnknownDecision {
        words: ["abc".into(), "\u{1b}[31mred".into()],
    });
    assert_eq!(
        text,
        "Neither abc nor \\e[31mred is a decision.\n\
         Usage: /approve <id> allow-once|allow-always|deny (or /approve <decision> <id>)"
    );
    let refusals = [
        ApproveRefusal::MissingArguments,
        ApproveRefusal::MissingId {
            decision: ApprovalDecision::Deny,
        },
        ApproveRefusal::MissingDecision {
            target: "abc".into(),
        },
        ApproveRefusal::AmbiguousOrder {
            words: ["deny".into(), "allow".into()],
        },
        ApproveRefusal::ExtraTokens {
            extra: vec!["once".into()],
        },
        ApproveRefusal::InvalidId {
            target: "a;b".into(),
        },
        ApproveRefusal::PrefixTooShort { target: "a".into() },
        ApproveRefusal::OtherBot {
            mention: "other".into(),
        },
    ];
    let distinct: BTreeSet<String> = refusals.iter().map(approve_refusal_text).collect();
    assert_eq!(distinct.len(), refusals.len());
}

#[test]
fn elevated_unknown_level_lists_valid_levels() {
    assert_eq!(
        elevated_refusal_text(&ElevatedRefusal::UnknownLevel { word: "max".into() }),
        "Unknown elevated level max. Valid levels: off (host exec refused), \
         on (host exec, approval when not allowlisted), ask (host exec, approval for every command), \
         full (host exec without approvals)."
    );
}

#[test]
fn elevated_outcomes_are_distinct() {
    let outcomes = [
        ElevatedOutcome::Set {
            level: ElevatedLevel::Full,
        },
        ElevatedOutcome::Current {
            level: ElevatedLevel::On,
            source: LevelSource::Default,
        },
        ElevatedOutcome::Current {
            level: ElevatedLevel::Off,
            source: LevelSource::GatesClosed,
        },
        // Operator walkthrough: this said "off: host exec refused", but with nothing set the
        // configured policy applies.
        ElevatedOutcome::Current {
            level: ElevatedLevel::Off,
            source: LevelSource::Unset,
        },
        ElevatedOutcome::Current {
            level: ElevatedLevel::Off,
            source: LevelSource::Session,
        },
        ElevatedOutcome::NotAuthorized(ElevatedDenial::SenderNotAllowed {
            channel: "telegram".into(),
        }),
        ElevatedOutcome::NoSessionBound,
    ];
    let texts: Vec<String> = outcomes.iter().map(elevated_outcome_text).collect();
    assert_eq!(
        texts,
        vec![
            "Elevated mode is now full: host exec without approvals.",
            "Elevated mode is on (the configured default): host exec, approval when not allowlisted.",
            "Elevated mode is disabled by configuration: exec follows the configured policy.",
            "Elevated mode is not set: exec follows the configured policy.",
            "Elevated mode is off (set for this session): host exec refused.",
            "Not authorized to change elevated mode: sender is not in tools.elevated.allowFrom.telegram.",
            "No agent session is bound to this chat, so there is nothing to elevate.",
        ]
    );
}
