//! `/approve <id|prefix> <decision>` and `/approve <decision> <id|prefix>`.
//!
//! Decision aliases are case-insensitive: `allow once allow-once allowonce` mean allow-once,
//! `always allow-always allowalways` allow-always, `deny reject block` deny. When both words could
//! be a decision the order is ambiguous and the command is refused, never guessed.

use gatehouse_policy::ApprovalDecision;

use super::{Header, match_header};

/// The longest approval id or prefix accepted; ids are UUID-sized, so anything longer is noise.
pub const MAX_ID_LEN: usize = 128;

/// The shortest prefix accepted in place of a full id, so one or two characters cannot hit an
/// unintended approval.
pub const MIN_PREFIX_LEN: usize = 4;

/// A well-formed `/approve` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApproveCommand {
    /// The full id or a prefix of it, as typed, at least [`MIN_PREFIX_LEN`] characters long:
    /// every path that resolves a typed id (text, bare word, slash command, every platform)
    /// comes through [`parse_approve`], so none can resolve a shorter one.
    pub target: String,
    /// The decision, already mapped from its alias.
    pub decision: ApprovalDecision,
}

/// What was wrong with an `/approve` command, for the usage reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproveRefusal {
    /// The command was addressed to another bot (`/approve@otherbot`).
    OtherBot {
        /// The mentioned name.
        mention: String,
    },
    /// `/approve` with no arguments.
    MissingArguments,
    /// Only a decision was given.
    MissingId {
        /// The decision that was given.
        decision: ApprovalDecision,
    },
    /// Only an id was given.
    MissingDecision {
        /// The id that was given.
        target: String,
    },
    /// Neither word is a decision.
    UnknownDecision {
        /// The two words, as typed.
        words: [String; 2],
    },
    /// Both words are decisions, so which is the id is unclear.
    AmbiguousOrder {
        /// The two words, as typed.
        words: [String; 2],
    },
    /// More words than `<id> <decision>`.
    ExtraTokens {
        /// The words past the second, as typed.
        extra: Vec<String>,
    },
    /// The id contains characters no approval id has, or is too long.
    InvalidId {
        /// The id as typed.
        target: String,
    },
    /// The id is a prefix shorter than [`MIN_PREFIX_LEN`]: it could name an approval nobody
    /// meant, so it is refused before anything is looked up.
    PrefixTooShort {
        /// The prefix as typed.
        target: String,
    },
}

/// The result of reading one chat message as `/approve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproveParse {
    /// The message is not an `/approve` command (including a bare `approve …` that does not parse,
    /// which is ordinary chat and gets no reply).
    NotCommand,
    /// A command to carry out, subject to the sender being an approver.
    Command(ApproveCommand),
    /// An `/approve` command that cannot be carried out; reply with the usage text.
    Refused(ApproveRefusal),
}

/// Maps a decision word or alias to a decision, case-insensitively.
pub fn parse_decision(word: &str) -> Option<ApprovalDecision> {
    match word.to_ascii_lowercase().as_str() {
        "allow" | "once" | "allow-once" | "allowonce" => Some(ApprovalDecision::AllowOnce),
        "always" | "allow-always" | "allowalways" => Some(ApprovalDecision::AllowAlways),
        "deny" | "reject" | "block" => Some(ApprovalDecision::Deny),
        _ => None,
    }
}

/// Reads `text` as an `/approve` command. `bot_username` is this bot's handle, used to accept
/// `/approve@<bot>` and refuse other bots' mentions.
pub fn parse_approve(text: &str, bot_username: Option<&str>) -> ApproveParse {
    let bare = !text.trim_start().starts_with('/');
    let args = match match_header(text, &["approve"], true, bot_username) {
        Header::NotThisCommand => return ApproveParse::NotCommand,
        Header::OtherBot(mention) => {
            return ApproveParse::Refused(ApproveRefusal::OtherBot { mention });
        }
        Header::Matched(args) => args,
    };
    match parse_args(&args) {
        Ok(command) => ApproveParse::Command(command),
        Err(_) if bare => ApproveParse::NotCommand,
        Err(refusal) => ApproveParse::Refused(refusal),
    }
}

fn parse_args(args: &[&str]) -> Result<ApproveCommand, ApproveRefusal> {
    let (first, second) = match args {
        [] => return Err(ApproveRefusal::MissingArguments),
        [only] => {
            return Err(match parse_decision(only) {
                Some(decision) => ApproveRefusal::MissingId { decision },
                None => ApproveRefusal::MissingDecision {
                    target: (*only).to_owned(),
                },
            });
        }
        [first, second] => (*first, *second),
        [_, _, extra @ ..] => {
            return Err(ApproveRefusal::ExtraTokens {
                extra: extra.iter().map(|word| (*word).to_owned()).collect(),
            });
        }
    };
    let words = || [first.to_owned(), second.to_owned()];
    let (target, decision) = match (parse_decision(first), parse_decision(second)) {
        (None, Some(decision)) => (first, decision),
        (Some(decision), None) => (second, decision),
        (Some(_), Some(_)) => return Err(ApproveRefusal::AmbiguousOrder { words: words() }),
        (None, None) => return Err(ApproveRefusal::UnknownDecision { words: words() }),
    };
    if !is_plausible_id(target) {
        return Err(ApproveRefusal::InvalidId {
            target: target.to_owned(),
        });
    }
    if target.chars().count() < MIN_PREFIX_LEN {
        return Err(ApproveRefusal::PrefixTooShort {
            target: target.to_owned(),
        });
    }
    Ok(ApproveCommand {
        target: target.to_owned(),
        decision,
    })
}

fn is_plausible_id(target: &str) -> bool {
    !target.is_empty()
        && target.len() <= MAX_ID_LEN
        && target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// How a typed id or prefix relates to the pending approvals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdMatch {
    /// Exactly one approval: this id.
    Unique(String),
    /// No pending approval has this id or prefix (or the prefix is shorter than
    /// [`MIN_PREFIX_LEN`]).
    None,
    /// Several approvals share the prefix; the sender must type more.
    Ambiguous(Vec<String>),
}

/// Resolves `target` against `ids`: an exact id always wins, otherwise a case-insensitive prefix
/// of at least [`MIN_PREFIX_LEN`] characters must pick exactly one id.
pub fn match_id<'a>(target: &str, ids: impl IntoIterator<Item = &'a str>) -> IdMatch {
    let mut hits = Vec::new();
    for id in ids {
        if id == target {
            return IdMatch::Unique(id.to_owned());
        }
        let is_prefix = id
            .get(..target.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(target));
        if target.len() >= MIN_PREFIX_LEN && is_prefix {
            hits.push(id.to_owned());
        }
    }
    match hits.len() {
        0 => IdMatch::None,
        1 => hits.pop().map_or(IdMatch::None, IdMatch::Unique),
        _ => {
            hits.sort();
            IdMatch::Ambiguous(hits)
        }
    }
}
