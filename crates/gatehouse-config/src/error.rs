//! Every way loading or resolving configuration can fail, with the place it failed as data.

use std::path::PathBuf;

/// A configuration failure. Variants keep file, line, column and key path as fields so the
/// binary can print them and tests can assert on them without parsing messages.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read at all.
    #[error("cannot read config file {}: {source}", file.display())]
    Read {
        /// The file that was asked for.
        file: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },

    /// The text is not valid JSON5.
    #[error("{}:{line}:{column}: syntax error: {message}", file.display())]
    Syntax {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the offending character.
        line: usize,
        /// 1-based column of the offending character.
        column: usize,
        /// What the parser expected.
        message: String,
    },

    /// A value has the wrong type or an invalid setting (`security: "ful"`, two token sources).
    #[error("{}:{line}:{column}: `{key}`: {message}", file.display())]
    Invalid {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the value (or of the enclosing object when the value is absent).
        line: usize,
        /// 1-based column.
        column: usize,
        /// Dotted key path, e.g. `tools.exec.security` or `agents.list[1].id`.
        key: String,
        /// Why the value was refused.
        message: String,
    },

    /// Keys Gatehouse does not know. Silently ignoring a misspelt security key would loosen
    /// policy, so these are errors in every section Gatehouse interprets.
    #[error(
        "{}:{line}:{column}: {kind} key `{key}`{hint}{more}",
        file.display(),
        kind = if hint.is_some() { "unsupported" } else { "unknown" },
        hint = hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default(),
        more = if others.is_empty() { String::new() } else { format!("; also unknown: {}", others.join(", ")) }
    )]
    UnknownKey {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the first unknown key.
        line: usize,
        /// 1-based column of the first unknown key.
        column: usize,
        /// Dotted key path of the first unknown key.
        key: String,
        /// Why an OpenClaw key is refused rather than ignored, when it is one (the message then
        /// says "unsupported key").
        hint: Option<String>,
        /// Further unknown keys, each as `path (line L, column C)`.
        others: Vec<String>,
    },

    /// A secret could not be resolved from its `…File` or `…Env` source.
    #[error("`{key}`: {message}")]
    Secret {
        /// Dotted key path of the secret setting, e.g. `channels.telegram.tokenFile`.
        key: String,
        /// What went wrong, naming the file or variable but never the secret.
        message: String,
    },
}
