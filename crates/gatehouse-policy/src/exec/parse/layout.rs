//! Every byte of the command belongs to a word, operator or comment the walker accepted, and
//! what lies between them separates them as the shell would.
//!
//! tree-sitter-bash skips some text as blanks that the shell reads: `\ ` and `\⇥` are blanks to
//! the grammar and word characters to bash, so in `ls \ #; id` the grammar saw a comment where
//! bash runs `id`. It also carries a command across a newline (`ok # c⏎\x`). So the walker
//! records each piece it accepted as a [`Token`], and this check refuses a command unless the
//! gaps between tokens hold only spaces, tabs and newlines, and each newline ends a command
//! exactly where the grammar ended it. Together with [`super::word`], which reads each word's
//! value from all of its bytes, the segments are then what bash and dash run.

use std::ops::Range;

use super::super::evaluation::{Reason, Rule};
use super::{code, mismatch};

/// One piece of the command the walker accepted, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) range: Range<usize>,
    pub(super) kind: TokenKind,
}

/// What a [`Token`] is, as far as separating it from its neighbours goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TokenKind {
    /// A word (or leading assignment) of the `command`-th simple command.
    Word { command: usize },
    /// `|`, `&&`, `||`, `;`, `&` or a newline the grammar kept as a terminator.
    Operator(&'static str),
    /// `#` to the end of its line.
    Comment,
}

/// Refuses the command unless the tokens cover it as described in the module doc.
pub(super) fn check_layout(tokens: &[Token], source: &str) -> Result<(), Reason> {
    let mut end = 0;
    let mut previous: Option<TokenKind> = None;
    // The command of the latest word: a comment ends it, so no word of it may follow one.
    let mut last_command = None;
    for token in tokens {
        let gap = gap(source, end, token.range.start)?;
        let newline = gap.contains('\n');
        let text = source.get(token.range.clone()).unwrap_or_default();
        match (previous, token.kind) {
            (Some(TokenKind::Word { command: before }), TokenKind::Word { command })
                if before == command && newline =>
            {
                return Err(mismatch(format!(
                    "the parser continues a command across a newline to {} (byte {}), where \
                     the shell ends it",
                    code(text),
                    token.range.start
                )));
            }
            (Some(TokenKind::Word { command: before }), TokenKind::Word { command })
                if before == command && gap.is_empty() =>
            {
                return Err(mismatch(format!(
                    "the parser splits a word at byte {}, where the shell reads on",
                    token.range.start
                )));
            }
            (Some(TokenKind::Word { command: before }), TokenKind::Word { command })
                if before != command && !newline =>
            {
                return Err(mismatch(format!(
                    "the parser starts a new command at {} (byte {}) with no operator or \
                     newline before it",
                    code(text),
                    token.range.start
                )));
            }
            (Some(TokenKind::Comment), TokenKind::Word { command })
                if last_command == Some(command) =>
            {
                return Err(mismatch(format!(
                    "the parser continues a command after a comment, at {} (byte {}); the \
                     shell ends it at the end of the comment's line",
                    code(text),
                    token.range.start
                )));
            }
            (Some(TokenKind::Word { .. }), TokenKind::Comment) if gap.is_empty() => {
                return Err(mismatch(format!(
                    "the parser reads a comment at byte {} that the shell reads as part of the \
                     word before it",
                    token.range.start
                )));
            }
            (Some(_), TokenKind::Operator(operator)) if newline && operator != "\n" => {
                return Err(mismatch(format!(
                    "a newline ends the command before `{operator}` (byte {}) for the shell",
                    token.range.start
                )));
            }
            _ => {}
        }
        if let TokenKind::Operator(operator) = token.kind
            && text != operator
        {
            return Err(Reason::new(
                Rule::SyntaxError,
                format!("cannot parse the operator at byte {}", token.range.start),
            ));
        }
        if let TokenKind::Word { command } = token.kind {
            last_command = Some(command);
        }
        previous = Some(token.kind);
        end = token.range.end;
    }
    gap(source, end, source.len()).map(|_| ())
}

/// The text between two tokens, refused unless it is spaces, tabs and newlines.
fn gap(source: &str, start: usize, end: usize) -> Result<&str, Reason> {
    let gap = source.get(start..end).ok_or_else(|| {
        Reason::new(
            Rule::SyntaxError,
            format!("the parser's pieces of the command overlap at byte {end}"),
        )
    })?;
    match gap.find(|c| !matches!(c, ' ' | '\t' | '\n')) {
        None => Ok(gap),
        Some(offset) => {
            let skipped: String = gap[offset..]
                .chars()
                .take_while(|c| *c != '\n')
                .take(20)
                .collect();
            Err(mismatch(format!(
                "the parser skips {} at byte {} as blank, but the shell reads it{}",
                code(&skipped),
                start + offset,
                if skipped.starts_with('\\') {
                    " as an escaped character of a word"
                } else {
                    ""
                }
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_shell;

    fn detail(source: &str) -> String {
        parse_shell(source).unwrap_err().detail
    }

    #[test]
    fn accepts_blanks_newlines_and_comments_where_the_shell_has_them() {
        for source in [
            "  ls\t-la \n",
            "ls\n\n# c\nls # c\n",
            "ls &&\n ls |\n\tls",
            "ls && # c\n ls",
            "ls;#c\nls&#c\nls",
        ] {
            assert!(parse_shell(source).is_ok(), "{source:?}");
        }
    }

    #[test]
    fn names_what_the_parser_would_have_misread() {
        assert!(detail("ls \\ #; id").contains("skips `\\ ` at byte 3"));
        assert!(detail("\\\tls").contains("skips `\\⇥` at byte 0"));
        assert!(detail("ls \"a\"\\b").contains("splits a word at byte 6"));
    }
}
