//! Reading a config file: syntax, types, unknown keys and cross-field rules, each failure
//! reported with file, line, column and key path.
//!
//! Three passes over the text, all cheap for a config file: a syntax pass (json5 reports the
//! position), a typed pass (serde_path_to_error supplies the key path, json5 the position,
//! serde_ignored every key the model did not consume), and the cross-field rules. Keys the
//! model did not consume are classified by `known`: OpenClaw keys Gatehouse ignores become
//! warnings, everything else an error, so one misspelt key cannot silently loosen policy.

use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;

use crate::error::ConfigError;
use crate::keypath::KeyPath;
use crate::known::{self, Verdict};
use crate::locate::{self, Location};
use crate::model::Config;
use crate::validate;

/// A loaded config and what the operator should hear about it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The typed config.
    pub config: Config,
    /// Non-fatal findings, in document order.
    pub warnings: Vec<ConfigWarning>,
}

/// A non-fatal finding, located like an error so it can be fixed the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// Dotted key path.
    pub key: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What the operator should know.
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}`: {}",
            self.line, self.column, self.key, self.message
        )
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
/// as the chat settings the gateway checks, placed at its line and column in `file` like this
/// crate's own refusals. An unreadable file or unparsable key places it at 1:1.
pub fn invalid_setting(file: &Path, key: &str, message: String) -> ConfigError {
    let at = std::fs::read_to_string(file)
        .ok()
        .zip(KeyPath::parse(key))
        .map_or(locate::Location { line: 1, column: 1 }, |(text, path)| {
            locate::locate(&text, &path)
        });
    ConfigError::Invalid {
        file: file.to_owned(),
        line: at.line,
        column: at.column,
        key: key.to_owned(),
        message,
    }
}

/// Checks config `text`; `file` names it in errors (it is not read).
pub fn load_str(text: &str, file: &Path) -> Result<LoadedConfig, ConfigError> {
    json5::from_str::<IgnoredAny>(text).map_err(|error| syntax_error(text, file, &error))?;

    let mut ignored = Vec::new();
    let mut on_ignored = |path: serde_ignored::Path<'_>| ignored.push(KeyPath::from_ignored(&path));
    let mut deserializer = json5::Deserializer::from_str(text);
    let typed: Result<Config, _> = serde_path_to_error::deserialize(
        serde_ignored::Deserializer::new(&mut deserializer, &mut on_ignored),
    );
    let config = typed.map_err(|error| {
        let key = KeyPath::from_path_to_error(error.path());
        let inner = error.into_inner();
        let at = position(&inner);
        ConfigError::Invalid {
            file: file.to_owned(),
            line: at.line,
            column: at.column,
            key: key.to_string(),
            message: type_message(&inner),
        }
    })?;

    let warnings = classify_ignored(text, file, &ignored)?;

    if let Some(problem) = validate::problems(&config).into_iter().next() {
        let at = locate::locate(text, &problem.path);
        return Err(ConfigError::Invalid {
            file: file.to_owned(),
            line: at.line,
            column: at.column,
            key: problem.path.to_string(),
            message: problem.message,
        });
    }

    Ok(LoadedConfig { config, warnings })
}

fn classify_ignored(
    text: &str,
    file: &Path,
    ignored: &[KeyPath],
) -> Result<Vec<ConfigWarning>, ConfigError> {
    let mut warnings = Vec::new();
    let mut unknown: Vec<(KeyPath, Location, Option<&'static str>)> = Vec::new();
    for path in ignored {
        let at = locate::locate(text, path);
        match known::classify(path) {
            Verdict::Ignored(note) => warnings.push(ConfigWarning {
                key: path.to_string(),
                line: at.line,
                column: at.column,
                message: note.to_owned(),
            }),
            Verdict::Refused(why) => unknown.push((path.clone(), at, Some(why))),
            Verdict::Unknown => unknown.push((path.clone(), at, None)),
        }
    }
    let mut rest = unknown.into_iter();
    match rest.next() {
        None => Ok(warnings),
        Some((key, at, hint)) => Err(ConfigError::UnknownKey {
            file: PathBuf::from(file),
            line: at.line,
            column: at.column,
            key: key.to_string(),
            hint: hint.map(str::to_owned),
            others: rest
                .map(|(key, at, _)| format!("{key} (line {}, column {})", at.line, at.column))
                .collect(),
        }),
    }
}

/// json5 places an end-of-file error at the construct left open; the operator needs both
/// where the file ended and what was left open.
fn syntax_error(text: &str, file: &Path, error: &json5::Error) -> ConfigError {
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
    ConfigError::Syntax {
        file: file.to_owned(),
        line: at.line,
        column: at.column,
        message,
    }
}

/// In the typed pass a json5 "expected …" code means the value has the wrong type; say so in
/// the operator's terms.
fn type_message(error: &json5::Error) -> String {
    use json5::ErrorCode as Code;
    let wanted = match error.code() {
        Some(Code::ExpectedOpeningBrace) => "an object `{ … }`",
        Some(Code::ExpectedOpeningBracket) => "a list `[ … ]`",
        Some(Code::ExpectedString) => "a string",
        Some(Code::ExpectedNumber) => "a number",
        Some(Code::ExpectedBool) => "true or false",
        Some(Code::ExpectedStringOrObject) => "a string or an object",
        _ => return message_without_position(error),
    };
    format!("wrong type: expected {wanted}")
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
