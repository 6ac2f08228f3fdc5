//! The common command without tree-sitter: plain words, quoted strings without expansions,
//! and `&&`, `||`, `|`, `;`, `&` between simple commands (`git status`, `rg -n 'fn main' |
//! head -n 5`). For such text the grammar's only job is to find word and command boundaries,
//! which a scan of a few character classes does; each word's value is then read by the same
//! reader the full path uses ([`super::word::read_word`]). Anything else (an expansion, a
//! glob, a comment, a newline, non-ASCII text, a reserved word or an assignment in command
//! position, an operator out of place) returns `None` and the full parser decides.
//!
//! `tests::agrees_with_the_full_parser` checks on generated text that whenever this path
//! answers, the full parser gives the same segments.

use super::word::read_word;
use super::{ParsedSegment, check_command_position};

/// Bash's reserved words: in command position each changes the grammar.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "!", "[[", "]]", "{", "}",
];

/// Characters a word may hold outside quotes.
fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_./,:+=-".contains(&c)
}

/// The segments of `source` when it is made only of what this path reads, else `None`.
pub(super) fn parse(source: &str) -> Option<Vec<ParsedSegment>> {
    let bytes = source.as_bytes();
    let mut segments = Vec::new();
    // Each word with the byte it starts at.
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut piped = false;
    let mut i = 0;
    let end_command =
        |words: &mut Vec<(usize, &str)>, piped: bool, segments: &mut Vec<ParsedSegment>| {
            let &(start, first) = words.first()?;
            if RESERVED.contains(&first) || first.contains('=') {
                return None;
            }
            let end = words.last().map(|&(at, raw)| at + raw.len())?;
            let mut parsed = Vec::with_capacity(words.len());
            for (_, raw) in words.drain(..) {
                parsed.push(read_word(raw).ok()?);
            }
            check_command_position(parsed.first()?).ok()?;
            segments.push(ParsedSegment {
                assignments: Vec::new(),
                words: parsed,
                stdin_piped: piped,
                span: start..end,
            });
            Some(())
        };
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => i += 1,
            b'&' | b'|' | b';' => {
                let operator = match (bytes[i], bytes.get(i + 1)) {
                    (b'&', Some(b'&')) | (b'|', Some(b'|')) => 2,
                    (b'|' | b'&', Some(b'&' | b'>')) | (b';', Some(b';' | b'&')) => return None,
                    _ => 1,
                };
                end_command(&mut words, piped, &mut segments)?;
                piped = operator == 1 && bytes[i] == b'|';
                i += operator;
            }
            _ => {
                let start = i;
                while let Some(&c) = bytes.get(i) {
                    match c {
                        b'\'' => i += 1 + source.get(i + 1..)?.find('\'')? + 1,
                        b'"' => {
                            let close = i + 1 + source.get(i + 1..)?.find('"')?;
                            let inner = &bytes[i + 1..close];
                            if inner.iter().any(|c| b"$`\\!".contains(c)) {
                                return None;
                            }
                            i = close + 1;
                        }
                        _ if is_word_char(c) => i += 1,
                        b' ' | b'\t' | b'&' | b'|' | b';' => break,
                        _ => return None,
                    }
                }
                let raw = &source[start..i];
                // tree-sitter reads `=` and `+` in a word as part of an assignment or a test
                // expression (`1=`, `a+:`, `==`); only an option's `--name=value` is plain.
                let operator_chars = raw.contains(['=', '+']) && !raw.starts_with('-');
                if raw.contains('\n') || !raw.is_ascii() || operator_chars {
                    return None;
                }
                words.push((start, raw));
            }
        }
    }
    if !words.is_empty() {
        end_command(&mut words, piped, &mut segments)?;
    } else {
        // A trailing `;` or `&` ends the last command; any other operator needs one more.
        let last = source.trim_end_matches([' ', '\t']).as_bytes().last();
        if !matches!(last, Some(b';' | b'&')) || source.trim_end().ends_with("&&") {
            return None;
        }
    }
    (!segments.is_empty()).then_some(segments)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::parse_full;
    use super::*;

    fn words(source: &str) -> Option<Vec<Vec<String>>> {
        parse(source).map(|segments| {
            segments
                .into_iter()
                .map(|s| s.words.into_iter().map(|w| w.text).collect())
                .collect()
        })
    }

    #[test]
    fn reads_plain_commands() {
        assert_eq!(
            words("git status && rg -n 'fn main' | head -n 5; ls -la &"),
            Some(vec![
                vec!["git".to_owned(), "status".to_owned()],
                vec!["rg".into(), "-n".into(), "fn main".into()],
                vec!["head".into(), "-n".into(), "5".into()],
                vec!["ls".into(), "-la".into()],
            ])
        );
        assert_eq!(
            words("echo \"a b\"c"),
            Some(vec![vec!["echo".into(), "a bc".into()]])
        );
    }

    #[test]
    fn leaves_everything_else_to_the_full_parser() {
        for source in [
            "echo $HOME",
            "ls > x",
            "ls # c",
            "ls\nls",
            "A=1 ls",
            "if true",
            "ls *.rs",
            "ls &&",
            "&& ls",
            "ls | | ls",
            "ls |& cat",
            "echo 'a",
            "echo \"$x\"",
            "echo ~",
            "echo café",
            "ls;;",
            "(ls)",
            "echo {a,b}",
        ] {
            assert!(parse(source).is_none(), "{source:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whenever the fast path answers, the full parser (tree-sitter, layout and word
        /// checks) gives the same segments, words and pipes.
        #[test]
        fn agrees_with_the_full_parser(
            source in "[a-c1 ./=:,+@%^_-]{0,6}(( |\t|&&|\\|\\||\\||;|&|'[a-c $#*;|]{0,3}'|\"[a-c ;#*|]{0,3}\")[a-c1 ./=:,+@%^_-]{0,5}){0,8}"
        ) {
            if let Some(fast) = parse(&source) {
                let full = parse_full(&source);
                prop_assert_eq!(Ok(fast), full, "{:?}", source);
            }
        }
    }
}
