//! `/elevated [level]` (alias `/elev`): no level asks for the current one.
//!
//! Level aliases are case-insensitive: `true yes 1` mean on, `false no 0` off,
//! `prompt approval approve` ask, `auto auto-approve autoapprove` full.

use gatehouse_policy::elevated::ElevatedLevel;

use super::{Header, match_header};

/// What was wrong with an `/elevated` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElevatedRefusal {
    /// The command was addressed to another bot.
    OtherBot {
        /// The mentioned name.
        mention: String,
    },
    /// The level is not a level or an alias of one.
    UnknownLevel {
        /// The word as typed.
        word: String,
    },
    /// More than one word after the command.
    ExtraTokens {
        /// The words past the level, as typed.
        extra: Vec<String>,
    },
}

/// The result of reading one chat message as `/elevated`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElevatedParse {
    /// Not an `/elevated` command.
    NotCommand,
    /// `/elevated` alone: report the level in force.
    Query,
    /// Set the session's level, subject to the elevated gates.
    Set(ElevatedLevel),
    /// An `/elevated` command that cannot be carried out; reply with the refusal.
    Refused(ElevatedRefusal),
}

/// Maps a level word or alias to a level, case-insensitively.
pub fn parse_level(word: &str) -> Option<ElevatedLevel> {
    match word.to_ascii_lowercase().as_str() {
        "off" | "false" | "no" | "0" => Some(ElevatedLevel::Off),
        "on" | "true" | "yes" | "1" => Some(ElevatedLevel::On),
        "ask" | "prompt" | "approval" | "approve" => Some(ElevatedLevel::Ask),
        "full" | "auto" | "auto-approve" | "autoapprove" => Some(ElevatedLevel::Full),
        _ => None,
    }
}

/// Reads `text` as `/elevated` or `/elev`; only the slash form counts, since "elevated" is an
/// ordinary English word.
pub fn parse_elevated(text: &str, bot_username: Option<&str>) -> ElevatedParse {
    let args = match match_header(text, &["elevated", "elev"], false, bot_username) {
        Header::NotThisCommand => return ElevatedParse::NotCommand,
        Header::OtherBot(mention) => {
            return ElevatedParse::Refused(ElevatedRefusal::OtherBot { mention });
        }
        Header::Matched(args) => args,
    };
    match args.as_slice() {
        [] => ElevatedParse::Query,
        [word] => match parse_level(word) {
            Some(level) => ElevatedParse::Set(level),
            None => ElevatedParse::Refused(ElevatedRefusal::UnknownLevel {
                word: (*word).to_owned(),
            }),
        },
        [_, extra @ ..] => ElevatedParse::Refused(ElevatedRefusal::ExtraTokens {
            extra: extra.iter().map(|word| (*word).to_owned()).collect(),
        }),
    }
}
