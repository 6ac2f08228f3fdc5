//! Reading a config file: syntax, types, unknown keys and cross-field rules, every problem
//! reported at once with file, line, column, key path and its source line.
//!
//! The text is parsed once into a tree; json5 reports a syntax error's position, and parsing
//! stops there, so a syntax error comes alone. The typed pass (`typed`) reads the model from
//! the tree, setting aside each value it refuses so that all are found; serde_ignored supplies
//! every key the model did not read, classified by `known`: OpenClaw keys Gatehouse ignores
//! become warnings, everything else an error, so one misspelt key cannot silently loosen
//! policy. Then the cross-field rules (`validate`). Every problem is placed by `locate` and
//! they are reported in file order.

use std::path::Path;

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::error::ConfigError;
use crate::excerpt::Source;
use crate::keypath::KeyPath;
use crate::known::{self, Verdict};
use crate::lex;
use crate::locate::{self, Location};
use crate::model::Config;
use crate::suggest::closest;
use crate::tree::Node;
use crate::typed::{self, Outcome};
use crate::validate;

/// A loaded config and what the operator should hear about it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The typed config.
    pub config: Config,
    /// Non-fatal findings, in file order.
    pub warnings: Vec<ConfigWarning>,
}

/// A non-fatal finding, located like an error so it can be fixed the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// Dotted key path.
    pub key: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What the operator should know.
    pub message: String,
    /// A key Gatehouse reads that this ignored one is close to (`telegram` for a
    /// `channels.telegarm` that is ignored as some other OpenClaw channel).
    pub suggestion: Option<String>,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}`: {}",
            self.line, self.column, self.key, self.message
        )?;
        match &self.suggestion {
            Some(key) => write!(f, "; did you mean `{key}`?"),
            None => Ok(()),
        }
    }
}

/// Reads and checks the config file at `file`.
pub fn load_file(file: &Path) -> Result<LoadedConfig, ConfigError> {
    let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Read {
        file: file.to_owned(),
        source,
    })?;
    load_str(&text, file)
}

/// A refusal of the setting at `key` (dotted, as errors print it) made outside this crate, such
/// as the chat settings the gateway checks, placed at its line and column in `file` with its
/// source line, like this crate's own refusals. An unreadable file or unparsable key places it
/// at 1:1 without a source line.
pub fn invalid_setting(file: &Path, key: &str, message: String) -> ConfigError {
    let text = std::fs::read_to_string(file).ok();
    let at = text
        .as_deref()
        .zip(KeyPath::parse(key))
        .map_or(Location { line: 1, column: 1 }, |(text, path)| {
            locate::locate(text, &path)
        });
    let excerpt = text
        .as_deref()
        .map(|text| Source::new(text).excerpt(at.line, at.column));
    ConfigError::Invalid {
        file: file.to_owned(),
        diagnostics: vec![Diagnostic {
            kind: DiagnosticKind::Invalid,
            key: Some(key.to_owned()),
            line: at.line,
            column: at.column,
            message,
            suggestion: None,
            excerpt,
        }],
    }
}

/// Checks config `text`; `file` names it in errors (it is not read).
pub fn load_str(text: &str, file: &Path) -> Result<LoadedConfig, ConfigError> {
    let syntax = |diagnostic| ConfigError::Invalid {
        file: file.to_owned(),
        diagnostics: vec![diagnostic],
    };
    if let Some(diagnostic) = too_deep(text) {
        return Err(syntax(diagnostic));
    }
    let tree = Node::parse(text).map_err(|error| syntax(syntax_error(text, &error)))?;
    let typed = typed::run(tree);
    let mut found = Found::new(text);
    for refusal in &typed.refused {
        let at = locate::locate_value(text, &refusal.path);
        found.problem(
            DiagnosticKind::Invalid,
            &refusal.path,
            at,
            refusal.message.clone(),
        );
    }
    let warnings = classify_ignored(&typed, &mut found);
    if let Some(config) = &typed.config {
        for problem in validate::problems(config) {
            let path = typed.written_path(&problem.path);
            if !typed.may_echo(&path) {
                let at = locate::locate(text, &path);
                found.problem(DiagnosticKind::Invalid, &path, at, problem.message);
            }
        }
    }
    match typed.config {
        Some(config) if found.diagnostics.is_empty() => Ok(LoadedConfig { config, warnings }),
        _ => Err(ConfigError::Invalid {
            file: file.to_owned(),
            diagnostics: found.in_file_order(),
        }),
    }
}

/// The problems found so far, each placed and shown with its source line.
struct Found<'a> {
    text: &'a str,
    source: Option<Source<'a>>,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Found<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            source: None,
            diagnostics: Vec::new(),
        }
    }

    fn problem(&mut self, kind: DiagnosticKind, path: &KeyPath, at: Location, message: String) {
        self.push(kind, path, at, message, None);
    }

    fn push(
        &mut self,
        kind: DiagnosticKind,
        path: &KeyPath,
        at: Location,
        message: String,
        suggestion: Option<&str>,
    ) {
        // Masking secrets costs a pass over the text: done once, and only for a broken file.
        let source = self.source.get_or_insert_with(|| Source::new(self.text));
        self.diagnostics.push(Diagnostic {
            kind,
            key: Some(path.to_string()),
            line: at.line,
            column: at.column,
            message,
            suggestion: suggestion.map(str::to_owned),
            excerpt: Some(source.excerpt(at.line, at.column)),
        });
    }

    fn in_file_order(mut self) -> Vec<Diagnostic> {
        self.diagnostics
            .sort_by_key(|diagnostic| (diagnostic.line, diagnostic.column));
        self.diagnostics
    }
}

/// Sorts the keys the model did not read into warnings (OpenClaw keys Gatehouse ignores) and
/// problems (refused OpenClaw keys, unknown keys with the closest known key at their level).
fn classify_ignored(typed: &Outcome, found: &mut Found<'_>) -> Vec<ConfigWarning> {
    let mut warnings = Vec::new();
    for ignored in &typed.ignored {
        let path = &ignored.path;
        let at = locate::locate(found.text, path);
        let written = path.last_key().unwrap_or_default();
        let fields = ignored.fields.iter().copied();
        match known::classify(path) {
            Verdict::Ignored(note) => warnings.push(ConfigWarning {
                key: path.to_string(),
                line: at.line,
                column: at.column,
                message: note.to_owned(),
                suggestion: closest(written, fields).map(str::to_owned),
            }),
            Verdict::Refused(why) => found.problem(
                DiagnosticKind::UnsupportedKey,
                path,
                at,
                format!("unsupported key ({why})"),
            ),
            Verdict::Unknown => {
                let parent = path.parent();
                let known = fields.chain(known::keys_at(&parent));
                found.push(
                    DiagnosticKind::UnknownKey,
                    path,
                    at,
                    "unknown key".to_owned(),
                    closest(written, known),
                );
            }
        }
    }
    warnings.sort_by_key(|warning| (warning.line, warning.column));
    warnings
}

/// Nesting the parser should not recurse into, refused where it passes [`lex::MAX_DEPTH`].
fn too_deep(text: &str) -> Option<Diagnostic> {
    let chars: Vec<char> = text.chars().collect();
    let at = lex::too_deep(&chars)?;
    let offset: usize = chars[..at].iter().map(|c| c.len_utf8()).sum();
    let at = Location::from(json5::Position::from_offset(offset, text));
    Some(Diagnostic {
        kind: DiagnosticKind::Syntax,
        key: None,
        line: at.line,
        column: at.column,
        message: format!("nested deeper than {} levels", lex::MAX_DEPTH),
        suggestion: None,
        excerpt: Some(Source::new(text).point(at.line, at.column)),
    })
}

/// json5 places an end-of-file error at the construct left open; the operator needs both
/// where the file ended and what was left open.
fn syntax_error(text: &str, error: &json5::Error) -> Diagnostic {
    use json5::ErrorCode as Code;
    let at = position(error);
    let message = message_without_position(error);
    let code = error.code();
    let unclosed = matches!(
        code,
        Some(
            Code::EofParsingArray
                | Code::EofParsingComment
                | Code::EofParsingObject
                | Code::EofParsingString
        )
    );
    let at_eof = unclosed
        || matches!(
            code,
            Some(
                Code::EofParsingBool
                    | Code::EofParsingEscapeSequence
                    | Code::EofParsingIdentifier
                    | Code::EofParsingNull
                    | Code::EofParsingNumber
                    | Code::EofParsingValue
            )
        );
    let end = Location::from(json5::Position::from_offset(text.len(), text));
    let (at, message) = match (at_eof, unclosed) {
        (true, true) => (
            end,
            format!(
                "{message} (opened at line {} column {})",
                at.line, at.column
            ),
        ),
        (true, false) => (end, message),
        (false, _) => (at, message),
    };
    Diagnostic {
        kind: DiagnosticKind::Syntax,
        key: None,
        line: at.line,
        column: at.column,
        message,
        suggestion: None,
        excerpt: Some(Source::new(text).point(at.line, at.column)),
    }
}

fn position(error: &json5::Error) -> Location {
    error
        .position()
        .map_or(Location { line: 1, column: 1 }, Location::from)
}

/// json5 appends " at line L column C" to its messages; the position is kept as fields.
fn message_without_position(error: &json5::Error) -> String {
    let full = error.to_string();
    match error.position() {
        Some(at) => full
            .strip_suffix(&format!(" at {at}"))
            .map_or_else(|| full.clone(), str::to_owned),
        None => full,
    }
}
