//! Secrets in config: tokens that must never reach a log, and where they come from.

use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use subtle::ConstantTimeEq;

use crate::error::ConfigError;

/// A token or signing secret. `Debug` and `Display` print `**REDACTED**` so that a config
/// dumped into a log or an error message never carries the value.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value obtained elsewhere (a generated admin token, a test fixture).
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The raw value, for the one place that must send it (an `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Compares against a presented token in constant time, so response timing does not
    /// leak how many leading bytes matched.
    pub fn matches(&self, presented: &str) -> bool {
        self.0.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("**REDACTED**")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("**REDACTED**")
    }
}

/// Where a secret comes from: written inline, read from a file, or read from the environment.
/// Config keys come in triples (`botToken | tokenFile | tokenEnv`); exactly one may be set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// The value written in the config file itself.
    Inline(Secret),
    /// A file holding the value (surrounding whitespace is trimmed).
    File(PathBuf),
    /// An environment variable holding the value.
    Env(String),
}

/// A resolved secret plus anything the operator should hear about its storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSecret {
    /// The value.
    pub secret: Secret,
    /// Set when the source file can be read by group or others; the secret still loads,
    /// because refusing would take a running service down over a fixable permission.
    pub warning: Option<String>,
}

impl SecretSource {
    /// Which of a key triple set this source, given the triple's spellings (inline, file,
    /// environment), e.g. `tokenFile`: the key a message about the secret names, so the
    /// operator is sent to the key they wrote.
    pub fn key_name<'a>(&self, names: [&'a str; 3]) -> &'a str {
        match self {
            SecretSource::Inline(_) => names[0],
            SecretSource::File(_) => names[1],
            SecretSource::Env(_) => names[2],
        }
    }

    /// Reads the secret. `key` is the config key path that named this source, used in errors.
    pub fn resolve(&self, key: &str) -> Result<ResolvedSecret, ConfigError> {
        match self {
            SecretSource::Inline(secret) => Ok(ResolvedSecret {
                secret: secret.clone(),
                warning: None,
            }),
            SecretSource::File(file) => resolve_file(key, file),
            SecretSource::Env(var) => resolve_env(key, var),
        }
    }
}

fn resolve_file(key: &str, file: &Path) -> Result<ResolvedSecret, ConfigError> {
    let error = |message: String| ConfigError::Secret {
        key: key.to_owned(),
        message,
    };
    let metadata = std::fs::metadata(file)
        .map_err(|e| error(format!("cannot read secret file {}: {e}", file.display())))?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| error(format!("cannot read secret file {}: {e}", file.display())))?;
    let value = text.trim();
    if value.is_empty() {
        return Err(error(format!("secret file {} is empty", file.display())));
    }
    let mode = metadata.permissions().mode() & 0o777;
    let warning = (mode & 0o077 != 0).then(|| {
        format!(
            "`{key}`: secret file {} is readable by group or others (mode {mode:04o}); run chmod 600",
            file.display()
        )
    });
    Ok(ResolvedSecret {
        secret: Secret::new(value),
        warning,
    })
}

fn resolve_env(key: &str, var: &str) -> Result<ResolvedSecret, ConfigError> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Ok(ResolvedSecret {
            secret: Secret::new(value.trim()),
            warning: None,
        }),
        Ok(_) => Err(ConfigError::Secret {
            key: key.to_owned(),
            message: format!("environment variable {var} is empty"),
        }),
        Err(_) => Err(ConfigError::Secret {
            key: key.to_owned(),
            message: format!("environment variable {var} is not set"),
        }),
    }
}

/// The source of a key triple the loader has already checked holds at most one value.
pub(crate) fn first(
    inline: Option<&Secret>,
    file: Option<&PathBuf>,
    env: Option<&String>,
) -> Option<SecretSource> {
    inline
        .map(|s| SecretSource::Inline(s.clone()))
        .or_else(|| file.map(|f| SecretSource::File(f.clone())))
        .or_else(|| env.map(|v| SecretSource::Env(v.clone())))
}

/// Picks the one source among a key triple; `names` are the three config spellings, used
/// in the error when several are set.
pub(crate) fn pick(
    inline: Option<&Secret>,
    file: Option<&PathBuf>,
    env: Option<&String>,
    names: [&str; 3],
) -> Result<Option<SecretSource>, String> {
    match (inline, file, env) {
        (None, None, None) => Ok(None),
        (Some(secret), None, None) => Ok(Some(SecretSource::Inline(secret.clone()))),
        (None, Some(file), None) => Ok(Some(SecretSource::File(file.clone()))),
        (None, None, Some(var)) => Ok(Some(SecretSource::Env(var.clone()))),
        _ => Err(format!(
            "set only one of `{}`, `{}` and `{}`",
            names[0], names[1], names[2]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_debug_and_display() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "**REDACTED**");
        assert_eq!(format!("{secret}"), "**REDACTED**");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn matches_only_the_exact_token() {
        let secret = Secret::new("abc123");
        assert!(secret.matches("abc123"));
        assert!(!secret.matches("abc12"));
        assert!(!secret.matches("abc1234"));
    }

    #[test]
    fn refuses_two_sources_for_one_secret() {
        let inline = Secret::new("x");
        let file = PathBuf::from("/tmp/x");
        let err = pick(
            Some(&inline),
            Some(&file),
            None,
            ["botToken", "tokenFile", "tokenEnv"],
        );
        assert_eq!(
            err,
            Err("set only one of `botToken`, `tokenFile` and `tokenEnv`".to_owned())
        );
    }
}
