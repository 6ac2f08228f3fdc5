//! The texts sent back after `/approve` and `/elevated`: one distinct, plain sentence per outcome,
//! so a person on a phone knows exactly what happened and what to type next.
//!
//! Every echoed word is untrusted and passes through [`one_line`] first.

use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::elevated::{ELEVATED_LEVELS, ElevatedDenial, ElevatedLevel, LevelSource};

use crate::grammar::approve::{ApproveRefusal, MIN_PREFIX_LEN};
use crate::grammar::elevated::ElevatedRefusal;
use crate::render::{ResolveOutcome, SHORT_ID_LEN, decision_phrase};
use crate::sanitize::one_line;

const ECHO_CHARS: usize = 40;

/// The `/approve` usage line, repeated in every usage reply.
pub const APPROVE_USAGE: &str =
    "Usage: /approve <id> allow-once|allow-always|deny (or /approve <decision> <id>)";

/// What happened to a well-formed `/approve`, as the gateway learned it from the approval manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproveOutcome {
    /// The decision was recorded.
    Resolved {
        /// The approval's full id.
        approval_id: String,
        /// The recorded decision.
        decision: ApprovalDecision,
    },
    /// No pending or recent approval matches the id or prefix.
    Unknown {
        /// The id or prefix as typed.
        target: String,
    },
    /// The approval expired before the decision arrived.
    Expired {
        /// The approval's full id.
        approval_id: String,
    },
    /// Someone else decided first.
    AlreadyResolved {
        /// The approval's full id.
        approval_id: String,
        /// The decision that won, and who made it.
        winner: ResolveOutcome,
    },
    /// The prefix matches several approvals.
    Ambiguous {
        /// The prefix as typed.
        prefix: String,
        /// How many approvals it matches.
        count: usize,
        /// The matching ids the reply may name: empty for a reply everyone in a shared chat
        /// reads, and only approvals shown on the sender's channel otherwise, so a list of ids
        /// never reaches anyone who could not see those approvals anyway.
        listed: Vec<String>,
    },
    /// The sender is not a configured approver.
    NotAuthorized,
    /// The approval was never shown to this channel's approvers (another channel's filters
    /// admitted it, this one's did not), so it is not decided here.
    NotShownHere {
        /// The approval's full id.
        approval_id: String,
        /// The sender's channel.
        channel: String,
    },
    /// Allow-always for an approval whose command was too long to show in full: nobody
    /// approves a pattern for a command they could not read.
    AlwaysNeedsFullCommand {
        /// The approval's full id.
        approval_id: String,
    },
}

/// The reply to an `/approve` that was carried out (or could not be).
pub fn approve_outcome_text(outcome: &ApproveOutcome) -> String {
    match outcome {
        ApproveOutcome::Resolved {
            approval_id,
            decision,
        } => format!("{} {}.", decision_phrase(*decision), short(approval_id)),
        ApproveOutcome::Unknown { target } => format!(
            "No pending approval matches {}. Check the id on the card.",
            one_line(target, ECHO_CHARS)
        ),
        ApproveOutcome::Expired { approval_id } => format!(
            "Approval {} has expired; the request fell back to askFallback.",
            short(approval_id)
        ),
        ApproveOutcome::AlreadyResolved {
            approval_id,
            winner,
        } => format!(
            "Approval {} was already decided: {} by {}.",
            short(approval_id),
            decision_phrase(winner.decision).to_lowercase(),
            one_line(&winner.decided_by, ECHO_CHARS)
        ),
        ApproveOutcome::Ambiguous {
            prefix,
            count,
            listed,
        } => {
            let prefix = one_line(prefix, ECHO_CHARS);
            if listed.is_empty() {
                return format!("{prefix} matches {count} approvals. Type more of the id.");
            }
            let listed: Vec<String> = listed.iter().take(5).map(|id| short(id)).collect();
            format!(
                "{prefix} matches {count} approvals ({}). Type more of the id.",
                listed.join(", ")
            )
        }
        ApproveOutcome::NotAuthorized => {
            "You are not an approver for exec approvals on this channel.".to_owned()
        }
        ApproveOutcome::NotShownHere {
            approval_id,
            channel,
        } => format!(
            "Approval {} was not shown to approvers on {}, so it cannot be decided here. \
             Decide it where its card was shown, or in the Control UI.",
            short(approval_id),
            one_line(channel, ECHO_CHARS)
        ),
        ApproveOutcome::AlwaysNeedsFullCommand { approval_id } => format!(
            "Allow-always is not offered for approval {}: its command was too long to show in \
             full. Read it in the Control UI, or allow it once.",
            short(approval_id)
        ),
    }
}

/// The reply to an `/approve` that could not be parsed.
pub fn approve_refusal_text(refusal: &ApproveRefusal) -> String {
    let problem = match refusal {
        ApproveRefusal::OtherBot { mention } => {
            return format!(
                "That /approve was addressed to @{}, not to me.",
                one_line(mention, ECHO_CHARS)
            );
        }
        ApproveRefusal::MissingArguments => "Missing approval id and decision.".to_owned(),
        ApproveRefusal::MissingId { decision } => {
            format!("Missing the approval id for {decision}.")
        }
        ApproveRefusal::MissingDecision { target } => {
            format!("Missing the decision for {}.", one_line(target, ECHO_CHARS))
        }
        ApproveRefusal::UnknownDecision { words } => format!(
            "Neither {} nor {} is a decision.",
            one_line(&words[0], ECHO_CHARS),
            one_line(&words[1], ECHO_CHARS)
        ),
        ApproveRefusal::AmbiguousOrder { words } => format!(
            "Both {} and {} are decisions; which one is the id?",
            one_line(&words[0], ECHO_CHARS),
            one_line(&words[1], ECHO_CHARS)
        ),
        ApproveRefusal::ExtraTokens { extra } => format!(
            "Unexpected extra words: {}.",
            one_line(&extra.join(" "), ECHO_CHARS)
        ),
        ApproveRefusal::InvalidId { target } => {
            format!("{} is not an approval id.", one_line(target, ECHO_CHARS))
        }
        ApproveRefusal::PrefixTooShort { target } => format!(
            "{} is too short: type at least {MIN_PREFIX_LEN} characters of the id (the \
             {SHORT_ID_LEN} on the card always work).",
            one_line(target, ECHO_CHARS)
        ),
    };
    format!("{problem}\n{APPROVE_USAGE}")
}

/// What happened to an `/elevated` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElevatedOutcome {
    /// The session's level was stored.
    Set {
        /// The new level.
        level: ElevatedLevel,
    },
    /// The level in force, for `/elevated` with no argument.
    Current {
        /// The effective level.
        level: ElevatedLevel,
        /// Where it came from.
        source: LevelSource,
    },
    /// A gate refused the sender (logged as a security event by the caller).
    NotAuthorized(ElevatedDenial),
    /// No session is bound to the chat the command was typed in.
    NoSessionBound,
}

/// The reply to an `/elevated` command that was carried out (or refused by a gate).
pub fn elevated_outcome_text(outcome: &ElevatedOutcome) -> String {
    match outcome {
        ElevatedOutcome::Set { level } => {
            format!("Elevated mode is now {level}: {}.", level_effect(*level))
        }
        // With nothing set, or the gates closed, no level applies at all: exec follows the
        // configured policy, which is not what `off` (host exec refused) does.
        ElevatedOutcome::Current {
            source: LevelSource::Unset,
            ..
        } => "Elevated mode is not set: exec follows the configured policy.".to_owned(),
        ElevatedOutcome::Current {
            source: LevelSource::GatesClosed,
            ..
        } => "Elevated mode is disabled by configuration: exec follows the configured policy."
            .to_owned(),
        ElevatedOutcome::Current { level, source } => {
            let from = match source {
                LevelSource::Request => "set by this request",
                LevelSource::Session => "set for this session",
                LevelSource::Default | LevelSource::Unset | LevelSource::GatesClosed => {
                    "the configured default"
                }
            };
            format!(
                "Elevated mode is {level} ({from}): {}.",
                level_effect(*level)
            )
        }
        ElevatedOutcome::NotAuthorized(denial) => {
            format!("Not authorized to change elevated mode: {denial}.")
        }
        ElevatedOutcome::NoSessionBound => {
            "No agent session is bound to this chat, so there is nothing to elevate.".to_owned()
        }
    }
}

/// The reply to an `/elevated` command that could not be parsed.
pub fn elevated_refusal_text(refusal: &ElevatedRefusal) -> String {
    match refusal {
        ElevatedRefusal::OtherBot { mention } => format!(
            "That /elevated was addressed to @{}, not to me.",
            one_line(mention, ECHO_CHARS)
        ),
        ElevatedRefusal::UnknownLevel { word } => format!(
            "Unknown elevated level {}. Valid levels: {}.",
            one_line(word, ECHO_CHARS),
            valid_levels()
        ),
        ElevatedRefusal::ExtraTokens { extra } => format!(
            "Unexpected extra words: {}. Usage: /elevated [{}]",
            one_line(&extra.join(" "), ECHO_CHARS),
            ELEVATED_LEVELS.map(ElevatedLevel::as_str).join("|")
        ),
    }
}

fn valid_levels() -> String {
    ELEVATED_LEVELS
        .map(|level| format!("{level} ({})", level_effect(level)))
        .join(", ")
}

fn level_effect(level: ElevatedLevel) -> &'static str {
    match level {
        ElevatedLevel::Off => "host exec refused",
        ElevatedLevel::On => "host exec, approval when not allowlisted",
        ElevatedLevel::Ask => "host exec, approval for every command",
        ElevatedLevel::Full => "host exec without approvals",
    }
}

fn short(id: &str) -> String {
    one_line(
        &id.chars().take(SHORT_ID_LEN).collect::<String>(),
        SHORT_ID_LEN,
    )
}
