//! One located problem in a config file, as data and as the block the binary prints.

use std::fmt;

use crate::excerpt::Excerpt;

/// What kind of problem a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// The text is not valid JSON5; parsing stopped here, so it is the only problem reported.
    Syntax,
    /// A key neither Gatehouse nor OpenClaw knows (often a misspelling: see `suggestion`).
    UnknownKey,
    /// An OpenClaw key Gatehouse refuses, because ignoring it could loosen policy.
    UnsupportedKey,
    /// A value of the wrong type, or a setting the rules refuse (`security: "ful"`, two sources
    /// for one token, a zero limit).
    Invalid,
}

/// One problem: where it is, what it is, and what was probably meant.
///
/// `Display` renders `line:column: …` and, when the source is known, the source line with a
/// caret under the column; [`crate::ConfigError`] puts the file name in front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of problem.
    pub kind: DiagnosticKind,
    /// Dotted key path (`agents.list[1].tools.deny`); `None` for a syntax error.
    pub key: Option<String>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters (a tab or a non-ASCII character is one column).
    pub column: usize,
    /// What is wrong, lower-case, without the location.
    pub message: String,
    /// The known key a misspelt one probably meant: the last key of the path only
    /// (`security` for `tools.exec.securty`).
    pub suggestion: Option<String>,
    /// The source line, secrets masked, and the width to underline.
    pub(crate) excerpt: Option<Excerpt>,
}

impl Diagnostic {
    /// The source line the problem is on, with the values of secret-looking keys masked; `None`
    /// when the file could not be read again to show it.
    pub fn source_line(&self) -> Option<&str> {
        self.excerpt.as_ref().map(|excerpt| excerpt.text.as_str())
    }

    fn suggestion_text(&self) -> Option<String> {
        self.suggestion
            .as_ref()
            .map(|key| format!("did you mean `{key}`?"))
    }
}

impl Diagnostic {
    /// Writes the block with a gutter `gutter` characters wide.
    pub(crate) fn render(&self, f: &mut fmt::Formatter<'_>, gutter: usize) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        match (&self.kind, &self.key) {
            (DiagnosticKind::Syntax, _) => write!(f, "syntax error: {}", self.message)?,
            (_, Some(key)) => write!(f, "`{key}`: {}", self.message)?,
            (_, None) => f.write_str(&self.message)?,
        }
        let suggestion = self.suggestion_text();
        match &self.excerpt {
            Some(excerpt) => {
                writeln!(f)?;
                let at = (self.line, self.column);
                excerpt.render(f, at, suggestion.as_deref(), gutter)
            }
            None => match suggestion {
                Some(suggestion) => write!(f, "; {suggestion}"),
                None => Ok(()),
            },
        }
    }

    /// Digits of the line number: the gutter this block needs.
    pub(crate) fn gutter(&self) -> usize {
        self.line.to_string().len()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f, self.gutter())
    }
}
