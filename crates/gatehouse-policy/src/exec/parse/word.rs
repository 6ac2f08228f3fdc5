//! One word's value, read from its source text the way bash and dash read it.
//!
//! The grammar decides where a word starts and ends (checked by [`super::layout`]); what the
//! word *is* comes from here, from every byte of its text and never from the grammar's
//! children. tree-sitter-bash drops the blanks it skips between a string's parts (a newline in
//! `"a⏎b"` was lost, so `sh -c 'ls'"⏎"'id'` read as one command), and a token of the grammar
//! can hold text the shell ends the word at (`⏎\x`). This reader accepts literal characters,
//! backslash escapes, single and double quotes and plain `$NAME`/`${NAME}` expansions;
//! anything else, above all a blank, newline or operator character the shell would end the
//! word at, is refused, so a value it returns is the one the shell passes.

use std::iter::Peekable;
use std::str::CharIndices;

use super::super::evaluation::{Reason, Rule};
use super::{Word, code, mismatch};

/// Reads one whole word of a command (its program or an argument).
pub(super) fn read_word(raw: &str) -> Result<Word, Reason> {
    if raw.starts_with('#') {
        // Never produced by the grammar today; the shell would read a comment there.
        return Err(mismatch(format!(
            "the shell reads {} as a comment, the parser as a word",
            code(raw)
        )));
    }
    let (mut word, unquoted) = Reader::read(raw)?;
    word.tilde = expands_tilde(raw);
    if tilde_after_equals(raw, &unquoted) {
        // Outside POSIX mode bash also expands a `~` after the `=` of an argument that looks
        // like an assignment, and after each `:` in it (`a=~/x`, `P=x:~/bin`); dash does not.
        // The value depends on the shell, so it counts as unknown.
        word.has_expansion = true;
    }
    check_brace_expansion(&unquoted, raw)?;
    word.glob = unquoted.contains(['*', '?', '[']);
    Ok(word)
}

/// Checks a leading `NAME=value` (or `NAME+=value`) assignment, which is kept as written.
pub(super) fn check_assignment(raw: &str) -> Result<(), Reason> {
    let name_end = raw
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(raw.len());
    let name = &raw[..name_end];
    let value = raw[name_end..]
        .strip_prefix('=')
        .or_else(|| raw[name_end..].strip_prefix("+="));
    match value {
        Some(value) if !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit()) => {
            // Brace expansion and globbing do not apply to an assignment's value.
            Reader::read(value).map(|_| ())
        }
        _ => Err(Reason::new(
            Rule::EnvAssignment,
            format!("assignment {} is not a plain `NAME=value`", code(raw)),
        )),
    }
}

/// Where the reader is inside a word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoting {
    Unquoted,
    Double,
}

struct Reader<'r> {
    raw: &'r str,
    chars: Peekable<CharIndices<'r>>,
    word: Word,
    /// The unquoted parts as written (escapes and expansions included), for the brace and glob
    /// checks; keeping `\*` here is conservative.
    unquoted: String,
}

impl<'r> Reader<'r> {
    fn read(raw: &'r str) -> Result<(Word, String), Reason> {
        let mut reader = Reader {
            raw,
            chars: raw.char_indices().peekable(),
            word: Word {
                text: String::new(),
                has_expansion: false,
                tilde: false,
                glob: false,
            },
            unquoted: String::new(),
        };
        while let Some((at, c)) = reader.chars.next() {
            match c {
                '\\' => {
                    let escaped = reader.escaped(at)?;
                    reader.unquoted.push(c);
                    reader.unquoted.push(escaped);
                    reader.literal(escaped)?;
                }
                '\'' => reader.single_quoted(at)?,
                '"' => reader.double_quoted(at)?,
                '$' => reader.dollar(at, Quoting::Unquoted)?,
                '`' => return Err(backticks()),
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => {
                    return Err(mismatch(format!(
                        "the parser reads {} as one word, but the shell ends the word at {}",
                        code(raw),
                        describe(c)
                    )));
                }
                _ => {
                    reader.unquoted.push(c);
                    reader.word.text.push(c);
                }
            }
        }
        Ok((reader.word, reader.unquoted))
    }

    /// An escaped character of the value. An escaped `$` still marks the word as expanded and
    /// an escaped backtick is still refused: conservatively, as is every `$` and backtick
    /// outside single quotes.
    fn literal(&mut self, c: char) -> Result<(), Reason> {
        match c {
            '`' => return Err(backticks()),
            '$' => self.word.has_expansion = true,
            _ => {}
        }
        self.word.text.push(c);
        Ok(())
    }

    /// The character after a backslash.
    fn escaped(&mut self, at: usize) -> Result<char, Reason> {
        match self.chars.next() {
            Some((_, '\n')) => Err(Reason::new(
                Rule::LineContinuation,
                "a backslash-newline joins lines, so the command bash runs differs from the text",
            )),
            Some((_, c)) => Ok(c),
            None => Err(mismatch(format!(
                "a backslash ends the word {} (byte {at} of it) and escapes nothing",
                code(self.raw)
            ))),
        }
    }

    /// `'…'`: every character up to the next `'` as it is.
    fn single_quoted(&mut self, at: usize) -> Result<(), Reason> {
        for (_, c) in self.chars.by_ref() {
            if c == '\'' {
                return Ok(());
            }
            self.word.text.push(c);
        }
        Err(self.unterminated(at))
    }

    /// `"…"`: a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline; `$` expands.
    fn double_quoted(&mut self, at: usize) -> Result<(), Reason> {
        while let Some((inner, c)) = self.chars.next() {
            match c {
                '"' => return Ok(()),
                '\\' => match self.chars.peek() {
                    Some((_, '$' | '`' | '"' | '\\' | '\n')) => {
                        let escaped = self.escaped(inner)?;
                        self.literal(escaped)?;
                    }
                    _ => self.word.text.push(c),
                },
                '$' => self.dollar(inner, Quoting::Double)?,
                '`' => return Err(backticks()),
                _ => self.word.text.push(c),
            }
        }
        Err(self.unterminated(at))
    }

    /// What follows a `$`: a plain parameter (kept as written), a refused expansion, or a
    /// literal `$`.
    fn dollar(&mut self, at: usize, quoting: Quoting) -> Result<(), Reason> {
        self.word.has_expansion = true;
        let end = match self.chars.peek().map(|&(_, c)| c) {
            Some('(') => {
                let arithmetic = self.raw[at..].starts_with("$((");
                return Err(if arithmetic {
                    Reason::new(
                        Rule::Arithmetic,
                        format!("arithmetic expansion {}", code(&self.raw[at..])),
                    )
                } else {
                    Reason::new(
                        Rule::CommandSubstitution,
                        format!("command substitution {}", code(&self.raw[at..])),
                    )
                });
            }
            Some('[') => {
                return Err(Reason::new(
                    Rule::Arithmetic,
                    "`$[…]` is arithmetic expansion",
                ));
            }
            Some('{') => {
                let close = self.raw[at..].find('}').map(|offset| at + offset + 1);
                let close = close.ok_or_else(|| self.unterminated(at))?;
                check_plain_expansion(&self.raw[at..close])?;
                close
            }
            Some('\'') if quoting == Quoting::Unquoted => {
                return Err(Reason::new(
                    Rule::UnsupportedSyntax,
                    format!(
                        "ANSI-C quoting {} can hide any character",
                        code(&self.raw[at..])
                    ),
                ));
            }
            Some('"') if quoting == Quoting::Unquoted => {
                return Err(Reason::new(
                    Rule::UnsupportedSyntax,
                    "locale-translated strings `$\"…\"` are not analyzed",
                ));
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.raw[at + 1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(self.raw.len(), |offset| at + 1 + offset),
            // `$1` is one digit: `$10` is `${1}0`.
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => at + 2,
            // Anything else leaves the `$` itself in the word.
            _ => at + 1,
        };
        while self.chars.next_if(|&(offset, _)| offset < end).is_some() {}
        let written = &self.raw[at..end];
        if quoting == Quoting::Unquoted {
            self.unquoted.push_str(written);
        }
        self.word.text.push_str(written);
        Ok(())
    }

    fn unterminated(&self, at: usize) -> Reason {
        mismatch(format!(
            "the quote or expansion opened at byte {at} of {} does not close inside the word, \
             so the shell reads the word on past where the parser ends it",
            code(self.raw)
        ))
    }
}

fn backticks() -> Reason {
    Reason::new(Rule::CommandSubstitution, "backticks run a command")
}

/// How a character that ends a word is named in a reason.
fn describe(c: char) -> String {
    match c {
        ' ' => "a space".to_owned(),
        '\t' => "a tab".to_owned(),
        '\n' => "a newline".to_owned(),
        other => format!("`{other}`"),
    }
}

/// Bash expands a leading `~` only when nothing up to the first unquoted `/` is quoted:
/// `~''/x` and `''~/x` both name `./~/x`.
fn expands_tilde(raw: &str) -> bool {
    let prefix = raw.split('/').next().unwrap_or(raw);
    prefix.starts_with('~') && !prefix.contains(['\'', '"', '\\', '$', '`'])
}

/// Whether bash (not in POSIX mode) may expand a `~` in this argument: it starts like a
/// variable name and an unquoted `~` follows an unquoted `=` (conservatively, even escaped).
fn tilde_after_equals(raw: &str, unquoted: &str) -> bool {
    raw.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && unquoted
            .find('=')
            .is_some_and(|equals| unquoted[equals..].contains('~'))
}

/// `${NAME}` and `${1}` only. Every operator inside the braces can run code bash hides in a
/// value: `${X:=…}` assigns, and array subscripts (`${a[X]}`), indirection (`${!X}`) and
/// `${X@P}` evaluate it, command substitutions included.
fn check_plain_expansion(raw: &str) -> Result<(), Reason> {
    let inner = raw
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or_default();
    let plain = match inner.as_bytes() {
        [] => false,
        [first, rest @ ..] if first.is_ascii_alphabetic() || *first == b'_' => rest
            .iter()
            .all(|byte| byte.is_ascii_alphanumeric() || *byte == b'_'),
        digits => digits.iter().all(u8::is_ascii_digit),
    };
    if plain {
        Ok(())
    } else {
        Err(Reason::new(
            Rule::ParameterExpansion,
            format!(
                "`{raw}`: only plain `${{NAME}}` is analyzed; operators, subscripts and \
                 indirection inside `${{…}}` can run code hidden in a value"
            ),
        ))
    }
}

/// `{a,b}` and `{1..3}` become several words in bash; the analyzer would see one.
fn check_brace_expansion(unquoted: &str, written: &str) -> Result<(), Reason> {
    let Some(open) = unquoted.find('{') else {
        return Ok(());
    };
    let rest = &unquoted[open + 1..];
    let Some(close) = rest.rfind('}') else {
        return Ok(());
    };
    let inner = &rest[..close];
    if inner.contains(',') || inner.contains("..") {
        return Err(Reason::new(
            Rule::UnsupportedSyntax,
            format!(
                "brace expansion {} turns one word into several",
                code(written)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(raw: &str) -> String {
        read_word(raw).unwrap().text
    }

    fn refusal(raw: &str) -> Rule {
        read_word(raw).unwrap_err().rule
    }

    #[test]
    fn reads_values_as_the_shell_passes_them() {
        for (raw, expected) in [
            ("plain", "plain"),
            ("a\\ b", "a b"),
            ("\\#x", "#x"),
            ("'a\nb'", "a\nb"),
            // The newline tree-sitter-bash dropped between a string's parts.
            ("\"a\n b\"", "a\n b"),
            ("\"\\$ \\\\ \\\" \\x '\"", "$ \\ \" \\x '"),
            ("'a'\"b\"c\\'", "abc'"),
            ("\"$X\"y", "$Xy"),
            ("${HOME}/x", "${HOME}/x"),
            ("a$", "a$"),
            ("\"$\"/", "$/"),
            ("$10", "$10"),
            ("café☕", "café☕"),
        ] {
            assert_eq!(value(raw), expected, "{raw:?}");
        }
    }

    #[test]
    fn refuses_text_the_shell_would_end_the_word_at() {
        for raw in [
            "\n\\touch",
            "a\nb",
            "a b",
            "a\tb",
            "a;b",
            "a|b",
            "a&b",
            "a(b",
            "a>b",
            "a<b",
            "\"a",
            "'a",
            "a\\",
            "#x",
            "${X",
        ] {
            assert_eq!(refusal(raw), Rule::UnsupportedSyntax, "{raw:?}");
        }
    }

    #[test]
    fn refuses_substitutions_and_expansions_with_their_rule() {
        for (raw, rule) in [
            ("$(id)", Rule::CommandSubstitution),
            ("\"x$(id)\"", Rule::CommandSubstitution),
            ("\"`id`\"", Rule::CommandSubstitution),
            ("\"\\`\"", Rule::CommandSubstitution),
            ("$((1))", Rule::Arithmetic),
            ("$[1]", Rule::Arithmetic),
            ("${X:-y}", Rule::ParameterExpansion),
            ("\"${!X}\"", Rule::ParameterExpansion),
            ("$'\\x41'", Rule::UnsupportedSyntax),
            ("$\"x\"", Rule::UnsupportedSyntax),
            ("{a,b}", Rule::UnsupportedSyntax),
            ("\"a\\\nb\"", Rule::LineContinuation),
        ] {
            assert_eq!(refusal(raw), rule, "{raw:?}");
        }
    }

    #[test]
    fn marks_what_the_shell_may_expand() {
        let home = read_word("~/x").unwrap();
        assert!(home.tilde && !home.has_expansion);
        assert!(!read_word("''~/x").unwrap().tilde);
        assert!(read_word("\"$X\"").unwrap().has_expansion);
        assert!(!read_word("'$X'").unwrap().has_expansion);
        // bash, not dash, expands these `~`.
        assert!(read_word("a=~/x").unwrap().has_expansion);
        assert!(read_word("P=x:~/bin").unwrap().has_expansion);
        assert!(!read_word("--x=~/y").unwrap().has_expansion);
        assert!(read_word("*.rs").unwrap().glob);
        assert!(!read_word("'*.rs'").unwrap().glob);
    }

    #[test]
    fn accepts_only_plain_assignments() {
        for raw in ["A=1", "A+=x", "_a=\"x y\"", "A=", "A=~/x:$B"] {
            assert!(check_assignment(raw).is_ok(), "{raw:?}");
        }
        for raw in ["a[1]=x", "1a=x", "A=x\ny", "=x", "A"] {
            assert!(check_assignment(raw).is_err(), "{raw:?}");
        }
    }
}
