//! Every way loading or resolving configuration can fail, with the place it failed as data.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;

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

    /// The file was read and has problems: every one found, in file order (a syntax error
    /// stops parsing, so it comes alone). `Display` prints each as `file:line:column: …` with
    /// its source line and a caret, then how many there are.
    #[error("{}", Problems { file, diagnostics })]
    Invalid {
        /// The config file.
        file: PathBuf,
        /// The problems, ordered by line and column; never empty.
        diagnostics: Vec<Diagnostic>,
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

impl ConfigError {
    /// The located problems; empty for an unreadable file or an unresolvable secret.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Self::Invalid { diagnostics, .. } => diagnostics,
            Self::Read { .. } | Self::Secret { .. } => &[],
        }
    }
}

/// The blocks of [`ConfigError::Invalid`], a blank line apart and with one gutter width, and a
/// count when there are several (the count last, where the terminal leaves the reader).
struct Problems<'a> {
    file: &'a Path,
    diagnostics: &'a [Diagnostic],
}

impl fmt::Display for Problems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gutter = self
            .diagnostics
            .iter()
            .map(Diagnostic::gutter)
            .max()
            .unwrap_or(1);
        for (index, diagnostic) in self.diagnostics.iter().enumerate() {
            if index > 0 {
                f.write_str("\n\n")?;
            }
            write!(f, "{}:", self.file.display())?;
            diagnostic.render(f, gutter)?;
        }
        if self.diagnostics.len() > 1 {
            write!(
                f,
                "\n\n{} problems in {}",
                self.diagnostics.len(),
                self.file.display()
            )?;
        }
        Ok(())
    }
}
