//! The source line under a config problem, as the operator's terminal should show it: values
//! of secret-looking keys masked, control and bidi characters replaced, long lines cut around
//! the column, and a caret under the column.
//!
//! Lines and columns are counted as json5 counts them: lines end at `\n`, `\r\n`, `\r`, U+2028
//! or U+2029; a column is a character (a Unicode scalar value, so a tab or an `é` is one
//! column). The caret line repeats the tabs of the source line, so the caret stays under its
//! character whatever the terminal's tab stops.

use std::fmt;

use crate::lex::{self, Token};

mod mask;

use mask::mask_secrets;

/// One source line and the width of the token a problem points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Excerpt {
    /// The line, secrets masked; no line terminator.
    pub(crate) text: String,
    /// Characters to underline from the column (at least one).
    width: usize,
}

/// A config text split for excerpts: the lines as written (to measure tokens) and the lines
/// with secrets masked (to show).
pub(crate) struct Source<'a> {
    written: Vec<&'a str>,
    masked: Vec<String>,
}

impl<'a> Source<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let masked = mask_secrets(text);
        Self {
            written: lines(text),
            masked: lines(&masked).into_iter().map(str::to_owned).collect(),
        }
    }

    /// The excerpt for 1-based `line` and `column`, underlining the token that starts there;
    /// a line past the end (an error at end of file) is empty.
    pub(crate) fn excerpt(&self, line: usize, column: usize) -> Excerpt {
        let index = line.saturating_sub(1);
        let written = self.written.get(index).copied().unwrap_or("");
        let text = self.masked.get(index).cloned().unwrap_or_default();
        Excerpt {
            text,
            width: token_width(written, column),
        }
    }

    /// The excerpt for a problem at one character (a syntax error), underlining only it.
    pub(crate) fn point(&self, line: usize, column: usize) -> Excerpt {
        Excerpt {
            width: 1,
            ..self.excerpt(line, column)
        }
    }
}

/// Splits `text` into lines where json5 does, so line numbers agree with its positions.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if json5::char::is_json5_line_terminator(c) {
            out.push(&text[start..at]);
            start = at + c.len_utf8();
            if c == '\r' && chars.next_if(|&(_, next)| next == '\n').is_some() {
                start += 1;
            }
        }
    }
    out.push(&text[start..]);
    out
}

/// Characters of the token starting at 1-based `column`: a quoted string up to its closing
/// quote, a word up to a delimiter, else one character.
fn token_width(line: &str, column: usize) -> usize {
    let rest: Vec<char> = line.chars().skip(column.saturating_sub(1)).collect();
    match lex::tokens(&rest).next() {
        Some((0, Token::Word(_, end))) => end,
        _ => 1,
    }
}

/// Longest stretch of a line shown; longer lines are cut around the column.
const MAX_SHOWN: usize = 100;

/// Characters shown before the column when a long line is cut.
const SHOWN_BEFORE: usize = 40;

impl Excerpt {
    /// Writes the gutter (`gutter` characters wide, so the excerpts of one report line up), the
    /// line and the caret line with `label` after the carets, in the layout rustc uses.
    pub(crate) fn render(
        &self,
        f: &mut fmt::Formatter<'_>,
        (line, column): (usize, usize),
        label: Option<&str>,
        gutter: usize,
    ) -> fmt::Result {
        let chars: Vec<char> = self.text.chars().map(visible).collect();
        let at = column.saturating_sub(1).min(chars.len());
        let start = at
            .saturating_sub(SHOWN_BEFORE)
            .min(chars.len().saturating_sub(MAX_SHOWN));
        let end = (start + MAX_SHOWN).min(chars.len());
        let mut shown: String = chars[start..end].iter().collect();
        let mut pad = String::new();
        if start > 0 {
            shown.insert(0, '…');
            pad.push(' ');
        }
        if end < chars.len() {
            shown.push('…');
        }
        for &c in &chars[start..at] {
            pad.push_str(padding(c));
        }
        let carets = "^".repeat(self.width.min(end.saturating_sub(at)).max(1));
        let blank = " ".repeat(gutter);
        writeln!(f, "{blank} |")?;
        writeln!(f, "{}", format!("{line:<gutter$} | {shown}").trim_end())?;
        write!(f, "{blank} | {pad}{carets}")?;
        match label {
            Some(label) => write!(f, " {label}"),
            None => Ok(()),
        }
    }
}

/// A character as shown: control, invisible and bidi-reordering characters become U+FFFD, so
/// a config line cannot rewrite the terminal or disguise itself (a tab is kept).
fn visible(c: char) -> char {
    let invisible = matches!(
        c,
        '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    );
    if (c.is_control() && c != '\t') || invisible {
        '\u{fffd}'
    } else {
        c
    }
}

/// What the caret line puts under `c` to stay aligned: the tab itself, two spaces under a
/// double-width character, nothing under a combining mark.
fn padding(c: char) -> &'static str {
    match c {
        '\t' => "\t",
        '\u{300}'..='\u{36f}' => "",
        c if is_wide(c) => "  ",
        _ => " ",
    }
}

/// East Asian wide and fullwidth characters and emoji, which terminals draw two columns wide.
fn is_wide(c: char) -> bool {
    matches!(
        c,
        '\u{1100}'..='\u{115f}'
            | '\u{2e80}'..='\u{303e}'
            | '\u{3041}'..='\u{33ff}'
            | '\u{3400}'..='\u{4dbf}'
            | '\u{4e00}'..='\u{9fff}'
            | '\u{a000}'..='\u{a4cf}'
            | '\u{ac00}'..='\u{d7a3}'
            | '\u{f900}'..='\u{faff}'
            | '\u{fe30}'..='\u{fe4f}'
            | '\u{ff00}'..='\u{ff60}'
            | '\u{ffe0}'..='\u{ffe6}'
            | '\u{1f300}'..='\u{1f64f}'
            | '\u{1f900}'..='\u{1f9ff}'
            | '\u{20000}'..='\u{3fffd}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_where_json5_counts_them() {
        assert_eq!(lines("a\r\nb\rc\nd\u{2028}e"), ["a", "b", "c", "d", "e"]);
        assert_eq!(lines("a\n"), ["a", ""]);
    }

    #[test]
    fn measures_the_token_at_the_column() {
        assert_eq!(token_width("  securty: 'x',", 3), 7);
        assert_eq!(token_width("  a: 'it\\'s', b", 6), 7);
        assert_eq!(token_width("  a: { b: 1 }", 6), 1);
        assert_eq!(token_width("  a: -12,", 6), 3);
        assert_eq!(token_width("", 1), 1);
    }
}
