//! `/start` and `/help`: the first thing a person sends a bot, answered with who they are to
//! Gatehouse (see [`crate::introduction`]).
//!
//! The slash form counts anywhere and takes any arguments, because Telegram's deep links send
//! `/start <payload>`. The bare words `start` and `help` count only as a whole message in a
//! direct conversation with the bot, for platforms whose clients swallow a leading `/`; typed
//! into a shared chat they are ordinary words. A mention of another bot (`/start@otherbot`) is
//! that bot's business and is not answered.

use super::{Header, match_header};

const NAMES: [&str; 2] = ["start", "help"];

/// Where the message was typed, which decides whether the bare words count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversation {
    /// A direct conversation with the bot.
    Direct,
    /// A chat others read too.
    Shared,
}

/// Whether `text` asks the bot to introduce itself.
pub fn is_start(text: &str, bot_username: Option<&str>, conversation: Conversation) -> bool {
    let Header::Matched(args) = match_header(text, &NAMES, true, bot_username) else {
        return false;
    };
    let slash = text.trim_start().starts_with('/');
    slash || (conversation == Conversation::Direct && args.is_empty())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn check(text: &str, conversation: Conversation, expect: bool) {
        assert_eq!(
            is_start(text, Some("gatebot"), conversation),
            expect,
            "{text:?} in {conversation:?}"
        );
    }

    #[test]
    fn accepts_the_slash_forms_anywhere() {
        for conversation in [Conversation::Direct, Conversation::Shared] {
            for text in [
                "/start",
                "/START",
                "/Help",
                "  /start  ",
                "/start\n",
                "/start@gatebot",
                "/start@GateBot",
                "/help@gatebot",
                "/start abc-123_payload",
                "/start@gatebot deeplink",
                "/start:",
                "/help me please",
            ] {
                check(text, conversation, true);
            }
        }
    }

    #[test]
    fn accepts_the_bare_words_alone_in_a_direct_conversation_only() {
        for text in ["start", "Help", " START ", "help:"] {
            check(text, Conversation::Direct, true);
            check(text, Conversation::Shared, false);
        }
        for text in ["help me", "start now", "start the deploy"] {
            check(text, Conversation::Direct, false);
        }
    }

    #[test]
    fn denies_other_bots_and_other_commands() {
        for conversation in [Conversation::Direct, Conversation::Shared] {
            for text in [
                "/start@otherbot",
                "/help@otherbot payload",
                "/started",
                "/starts",
                "/restart",
                "/approve start",
                "/elevated",
                "please start",
                "/ start",
                "",
                "   ",
                "/",
            ] {
                check(text, conversation, false);
            }
        }
    }

    #[test]
    fn denies_a_mention_when_the_bot_has_no_name() {
        assert!(!is_start("/start@gatebot", None, Conversation::Direct));
        assert!(is_start("/start", None, Conversation::Direct));
    }

    /// Messages near the start forms: a lead, an optional `/`, a name that is or nearly is
    /// `start`/`help`, an optional mention and `:`, then anything; or any short text at all.
    fn near_start() -> impl Strategy<Value = String> {
        let names = prop_oneof![
            Just("start".to_owned()),
            Just("help".to_owned()),
            Just("START".to_owned()),
            Just("Help".to_owned()),
            Just("starts".to_owned()),
            Just("restart".to_owned()),
            Just("approve".to_owned()),
            "[a-z]{0,6}",
        ];
        let mentions = prop_oneof![
            Just(String::new()),
            Just("@gatebot".to_owned()),
            Just("@GateBot".to_owned()),
            Just("@other".to_owned()),
            Just("@".to_owned()),
        ];
        let built = (
            "[ \n]{0,2}",
            prop_oneof![Just(""), Just("/")],
            names,
            mentions,
            prop_oneof![Just(""), Just(":")],
            prop_oneof![Just(""), Just(" "), Just("\n")],
            "[ :/@a-z0-9]{0,12}",
        )
            .prop_map(|(lead, slash, name, mention, colon, sep, rest)| {
                format!("{lead}{slash}{name}{mention}{colon}{sep}{rest}")
            });
        prop_oneof![built, "[ /@:a-zA-Z0-9\n]{0,24}"]
    }

    proptest! {
        /// Nothing but the start forms reads as start: a message is start exactly when its
        /// first word, without `/`, a trailing `:` and `@gatebot`, is `start` or `help`, and
        /// (for the bare form) it is alone in a direct conversation.
        #[test]
        fn only_the_start_forms_parse(text in near_start(), direct in any::<bool>()) {
            let conversation = if direct { Conversation::Direct } else { Conversation::Shared };
            let mut words = text.split_whitespace();
            let first = words.next().unwrap_or_default();
            let slash = first.starts_with('/');
            let name = first.strip_prefix('/').unwrap_or(first);
            let name = name.strip_suffix(':').unwrap_or(name);
            let name = match name.split_once('@') {
                Some((name, bot)) if bot.eq_ignore_ascii_case("gatebot") => name,
                Some(_) => "",
                None => name,
            };
            let named = NAMES.iter().any(|n| n.eq_ignore_ascii_case(name));
            // A lone `:` after the command word is part of the header, not an argument.
            let rest: Vec<&str> = words.collect();
            let alone = rest.is_empty() || (rest == [":"] && !first.ends_with(':'));
            let expect = named && (slash || (direct && alone));
            prop_assert_eq!(is_start(&text, Some("gatebot"), conversation), expect, "{:?}", text);
        }
    }
}
