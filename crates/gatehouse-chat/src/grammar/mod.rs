//! Chat command grammars: `/approve`, `/elevated` and `/start` (`/help`), parsed into enums at
//! the edge so nothing downstream handles raw decision strings.
//!
//! All share one header rule: `/name`, an optional `@<this bot>` suffix (another bot's mention is
//! refused), an optional `:`; then whitespace-separated arguments, where an extra argument is an
//! error rather than something silently ignored.

pub mod approve;
pub mod elevated;
pub mod start;

/// How a message's first word relates to a command.
#[derive(Debug, PartialEq, Eq)]
enum Header<'a> {
    /// Not this command at all: the message is ordinary chat text.
    NotThisCommand,
    /// The command, addressed to a different bot (`/approve@otherbot`).
    OtherBot(String),
    /// The command for us; these are its arguments.
    Matched(Vec<&'a str>),
}

/// Matches `text` against the command `names` (lower-case, without `/`). `allow_bare` admits the
/// form without a slash, for platforms that swallow slash commands.
fn match_header<'a>(
    text: &'a str,
    names: &[&str],
    allow_bare: bool,
    bot_username: Option<&str>,
) -> Header<'a> {
    let mut words = text.split_whitespace();
    let Some(first) = words.next() else {
        return Header::NotThisCommand;
    };
    let first = match first.strip_prefix('/') {
        Some(rest) => rest,
        None if allow_bare => first,
        None => return Header::NotThisCommand,
    };
    let (first, colon_attached) = match first.strip_suffix(':') {
        Some(rest) => (rest, true),
        None => (first, false),
    };
    let (name, mention) = match first.split_once('@') {
        Some((name, mention)) => (name, Some(mention)),
        None => (first, None),
    };
    if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
        return Header::NotThisCommand;
    }
    if let Some(mention) = mention {
        let ours = bot_username
            .map(|bot| bot.trim_start_matches('@'))
            .is_some_and(|bot| !bot.is_empty() && bot.eq_ignore_ascii_case(mention));
        if !ours {
            return Header::OtherBot(mention.to_owned());
        }
    }
    let mut args: Vec<&str> = words.collect();
    if !colon_attached && args.first() == Some(&":") {
        args.remove(0);
    }
    Header::Matched(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_rules() {
        let m = |t| match_header(t, &["approve"], false, Some("gatebot"));
        assert_eq!(m("/approve a b"), Header::Matched(vec!["a", "b"]));
        assert_eq!(m("/approve: a"), Header::Matched(vec!["a"]));
        assert_eq!(m("/approve : a"), Header::Matched(vec!["a"]));
        assert_eq!(m("/approve@GateBot: a"), Header::Matched(vec!["a"]));
        assert_eq!(m("/approve@other a"), Header::OtherBot("other".into()));
        assert_eq!(m("approve a"), Header::NotThisCommand);
        assert_eq!(m("/approved a"), Header::NotThisCommand);
        assert_eq!(m(""), Header::NotThisCommand);
    }
}
