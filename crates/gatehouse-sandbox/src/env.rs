//! The environment a run starts with, built rather than inherited: a fixed base plus the
//! request's own variables, each checked, so the gateway's environment (tokens given with
//! `tokenEnv`, its own settings) never reaches a command and a forwarded credential is
//! refused with a reason instead of passed on.
//!
//! One builder serves both placements: [`BaseEnv::sandbox`] for a bubblewrap run and
//! [`BaseEnv::host`] for a run on the host, which keeps the few host settings the policy
//! judged commands with (`PATH`, `HOME`) and that describe the host (locale, time zone, user,
//! temporary directory). The request's variables are checked the same way for both; the
//! policy core separately decides which of them need a person (`LD_PRELOAD` and the like).
//!
//! The name and value checks catch credentials an agent host forwards by accident (hosts
//! often forward their whole environment); they are not a boundary against a requester that
//! means to pass a secret, which could put it in `argv` or a file.
//!
//! The result also satisfies what the policy core asks of every runner
//! (`gatehouse_policy::exec::child_environment`): none of the base's shell-state variables
//! (`PS4`, `BASH_ENV`, `BASH_FUNC_*`, …) and `LC_ALL=C.UTF-8` forced when the character set
//! the child would use is not one the command analysis reads as the shell does.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::Path;

/// The gateway's own variables a host run keeps, with every `LC_*`.
const HOST_INHERITED: &[&str] = &["PATH", "HOME", "LANG", "TZ", "USER", "LOGNAME", "TMPDIR"];

/// The locale every run gets unless the request (or, on the host, the gateway) sets one:
/// UTF-8 without depending on which locales are installed.
const LANG: &str = "C.UTF-8";

/// Output is captured, not shown on a terminal.
const TERM: &str = "dumb";

/// The fixed variables a run starts with, before the request's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseEnv {
    vars: BTreeMap<String, String>,
}

impl BaseEnv {
    /// A sandboxed run's base: `PATH` as planned, `HOME` the home path the sandbox shows,
    /// `USER`/`LOGNAME`, `LANG=C.UTF-8`, `TERM=dumb`, `TMPDIR=/tmp` (a private tmpfs) and
    /// `SHELL=/bin/sh`.
    pub fn sandbox(home: &Path, user: &str, path: &str) -> Self {
        let vars = [
            ("PATH", path),
            ("HOME", &home.to_string_lossy()),
            ("USER", user),
            ("LOGNAME", user),
            ("LANG", LANG),
            ("TERM", TERM),
            ("TMPDIR", "/tmp"),
            ("SHELL", "/bin/sh"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        BaseEnv { vars }
    }

    /// A host run's base: of `gateway` (the gateway's environment, `std::env::vars_os()`)
    /// only `PATH`, `HOME`, `LANG`, `TZ`, `USER`, `LOGNAME`, `TMPDIR` and `LC_*`, with
    /// `LANG=C.UTF-8` when it has none, and `TERM=dumb`. Values that are not UTF-8 are left
    /// out rather than mangled.
    pub fn host<I, K, V>(gateway: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut vars: BTreeMap<String, String> = gateway
            .into_iter()
            .filter_map(|(key, value)| {
                let key = key.as_ref().to_str()?;
                let value = value.as_ref().to_str()?;
                (HOST_INHERITED.contains(&key) || key.starts_with("LC_"))
                    .then(|| (key.to_owned(), value.to_owned()))
            })
            .collect();
        vars.entry("LANG".to_owned())
            .or_insert_with(|| LANG.to_owned());
        vars.insert("TERM".to_owned(), TERM.to_owned());
        BaseEnv { vars }
    }

    /// The variables, by name.
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }
}

/// Bounds on what a request may add. The kernel refuses an `execve` whose argument and
/// environment strings pass its limit (a quarter of the stack limit, 128 KiB per string),
/// with an error that names neither; these refuse earlier, naming the variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvLimits {
    /// Most variables a request may set.
    pub max_vars: usize,
    /// Longest name, in bytes.
    pub max_name_bytes: usize,
    /// Longest value, in bytes.
    pub max_value_bytes: usize,
    /// Most bytes of names and values together.
    pub max_total_bytes: usize,
}

impl Default for EnvLimits {
    fn default() -> Self {
        EnvLimits {
            max_vars: 128,
            max_name_bytes: 128,
            max_value_bytes: 32 * 1024,
            max_total_bytes: 128 * 1024,
        }
    }
}

/// Why one variable, or the request's variables as a whole, were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvRefusal {
    /// One variable.
    Var {
        /// Its name, as sent.
        name: String,
        /// What is wrong with it.
        reason: VarReason,
    },
    /// More variables than [`EnvLimits::max_vars`].
    TooMany {
        /// How many were sent.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More bytes than [`EnvLimits::max_total_bytes`].
    TooLarge {
        /// How many bytes of names and values were sent.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
}

/// What is wrong with one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarReason {
    /// The name has a NUL byte, which cannot be passed to a program.
    NulInName,
    /// The value has a NUL byte, which would silently cut it short.
    NulInValue,
    /// Not `[A-Za-z_][A-Za-z0-9_]*`: `=` would split it, and shells cannot pass other
    /// names on (bash's exported functions, `BASH_FUNC_f%%`, carry code).
    NotPortable,
    /// The name is longer than the limit.
    NameTooLong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The value is longer than the limit.
    ValueTooLong {
        /// Its length, in bytes.
        bytes: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The name looks like a credential's.
    SecretName {
        /// The rule it matched, e.g. `*_TOKEN`.
        rule: &'static str,
    },
    /// The value looks like a credential.
    SecretValue {
        /// What it looks like, e.g. `a GitHub token`.
        kind: &'static str,
    },
}

impl fmt::Display for VarReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarReason::NulInName => f.write_str("its name contains a NUL byte"),
            VarReason::NulInValue => f.write_str(
                "its value contains a NUL byte, which would cut it short without saying so",
            ),
            VarReason::NotPortable => {
                f.write_str("its name is not a portable variable name ([A-Za-z_][A-Za-z0-9_]*)")
            }
            VarReason::NameTooLong { limit } => {
                write!(f, "its name is longer than {limit} bytes")
            }
            VarReason::ValueTooLong { bytes, limit } => {
                write!(
                    f,
                    "its value is {bytes} bytes, more than the {limit} allowed"
                )
            }
            VarReason::SecretName { rule } => write!(
                f,
                "its name looks like a credential's ({rule}); credentials are not passed to \
                 commands through a request's environment"
            ),
            VarReason::SecretValue { kind } => write!(
                f,
                "its value looks like {kind}; credentials are not passed to commands through \
                 a request's environment"
            ),
        }
    }
}

impl fmt::Display for EnvRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnvRefusal::Var { name, reason } => write!(f, "{name:?}: {reason}"),
            EnvRefusal::TooMany { count, limit } => {
                write!(f, "{count} variables, more than the {limit} allowed")
            }
            EnvRefusal::TooLarge { bytes, limit } => write!(
                f,
                "{bytes} bytes of variables, more than the {limit} allowed"
            ),
        }
    }
}

/// Every refusal of one request's environment, so a person sees them all at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the request's environment is refused: {}", list(.0))]
pub struct EnvRefused(pub Vec<EnvRefusal>);

fn list(refusals: &[EnvRefusal]) -> String {
    let shown: Vec<String> = refusals.iter().map(ToString::to_string).collect();
    shown.join("; ")
}

/// The environment a run starts with: exactly these variables and no others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildEnv {
    vars: BTreeMap<String, String>,
}

impl ChildEnv {
    /// No variables at all (`gatehouse doctor`'s probe runs `true` with nothing).
    pub(crate) fn empty() -> Self {
        ChildEnv {
            vars: BTreeMap::new(),
        }
    }

    /// The variables, by name.
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// Sets one variable the caller fixes itself, over whatever the request sent.
    pub(crate) fn set(&mut self, name: &str, value: String) {
        self.vars.insert(name.to_owned(), value);
    }

    /// Clears `command`'s environment and sets exactly these variables.
    pub fn apply(&self, command: &mut std::process::Command) {
        command.env_clear().envs(&self.vars);
    }
}

/// The base with the request's variables over it, or every reason some of them are refused.
pub fn build_env(
    base: &BaseEnv,
    request: &BTreeMap<String, String>,
    limits: &EnvLimits,
) -> Result<ChildEnv, EnvRefused> {
    let mut refusals: Vec<EnvRefusal> = request
        .iter()
        .filter_map(|(name, value)| {
            refusal(name, value, limits).map(|reason| EnvRefusal::Var {
                name: name.clone(),
                reason,
            })
        })
        .collect();
    if request.len() > limits.max_vars {
        refusals.push(EnvRefusal::TooMany {
            count: request.len(),
            limit: limits.max_vars,
        });
    }
    let bytes: usize = request.iter().map(|(k, v)| k.len() + v.len()).sum();
    if bytes > limits.max_total_bytes {
        refusals.push(EnvRefusal::TooLarge {
            bytes,
            limit: limits.max_total_bytes,
        });
    }
    if !refusals.is_empty() {
        return Err(EnvRefused(refusals));
    }
    let inherited = base.vars.iter().map(|(k, v)| (k.clone(), v.clone()));
    Ok(ChildEnv {
        vars: gatehouse_policy::exec::child_environment(inherited, request),
    })
}

/// The first thing wrong with one variable, checked from the most basic up.
fn refusal(name: &str, value: &str, limits: &EnvLimits) -> Option<VarReason> {
    if name.contains('\0') {
        return Some(VarReason::NulInName);
    }
    if name.len() > limits.max_name_bytes {
        return Some(VarReason::NameTooLong {
            limit: limits.max_name_bytes,
        });
    }
    if !is_portable(name) {
        return Some(VarReason::NotPortable);
    }
    if value.contains('\0') {
        return Some(VarReason::NulInValue);
    }
    if value.len() > limits.max_value_bytes {
        return Some(VarReason::ValueTooLong {
            bytes: value.len(),
            limit: limits.max_value_bytes,
        });
    }
    if let Some(rule) = secret_name(name) {
        return Some(VarReason::SecretName { rule });
    }
    secret_value(value).map(|kind| VarReason::SecretValue { kind })
}

fn is_portable(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Names that are credentials, or point a program at credentials or a control socket.
const SECRET_EXACT: &[&str] = &[
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "APIKEY",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "KUBECONFIG",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "CONTAINER_HOST",
    "NETRC",
    "PGPASSFILE",
];

/// Prefixes of whole families of cloud credentials and settings.
const SECRET_PREFIXES: &[(&str, &str)] = &[
    ("AWS_", "AWS_*"),
    ("AZURE_", "AZURE_*"),
    ("CLOUDSDK_", "CLOUDSDK_*"),
    ("OP_SESSION_", "OP_SESSION_*"),
];

/// Endings of credential names.
const SECRET_SUFFIXES: &[(&str, &str)] = &[
    ("_TOKEN", "*_TOKEN"),
    ("_TOKENS", "*_TOKENS"),
    ("_KEY", "*_KEY"),
    ("_KEYS", "*_KEYS"),
    ("_SECRET", "*_SECRET"),
    ("_SECRETS", "*_SECRETS"),
    ("_PASS", "*_PASS"),
    ("_PWD", "*_PWD"),
    ("_PAT", "*_PAT"),
    ("_COOKIE", "*_COOKIE"),
    ("_AUTH", "*_AUTH"),
];

/// Words that make any name a credential's.
const SECRET_WORDS: &[(&str, &str)] = &[
    ("PASSWORD", "*PASSWORD*"),
    ("PASSWD", "*PASSWD*"),
    ("PASSPHRASE", "*PASSPHRASE*"),
    ("SECRET", "*SECRET*"),
    ("CREDENTIAL", "*CREDENTIAL*"),
    ("PRIVATE_KEY", "*PRIVATE_KEY*"),
    ("API_KEY", "*API_KEY*"),
    ("APIKEY", "*APIKEY*"),
    ("ACCESS_KEY", "*ACCESS_KEY*"),
];

/// The rule a name matches, compared in upper case.
fn secret_name(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if let Some(exact) = SECRET_EXACT.iter().find(|exact| **exact == upper) {
        return Some(exact);
    }
    let by = |rules: &[(&str, &'static str)], matches: &dyn Fn(&str) -> bool| {
        rules
            .iter()
            .find(|(pattern, _)| matches(pattern))
            .map(|(_, rule)| *rule)
    };
    by(SECRET_PREFIXES, &|p| upper.starts_with(p))
        .or_else(|| by(SECRET_SUFFIXES, &|s| upper.ends_with(s)))
        .or_else(|| by(SECRET_WORDS, &|w| upper.contains(w)))
}

/// Token formats whose prefix says what they are.
const TOKEN_PREFIXES: &[(&str, &str)] = &[
    ("ghp_", "a GitHub token"),
    ("gho_", "a GitHub token"),
    ("ghu_", "a GitHub token"),
    ("ghs_", "a GitHub token"),
    ("ghr_", "a GitHub token"),
    ("github_pat_", "a GitHub token"),
    ("glpat-", "a GitLab token"),
    ("xoxb-", "a Slack token"),
    ("xoxp-", "a Slack token"),
    ("xoxa-", "a Slack token"),
    ("xapp-", "a Slack token"),
    ("sk-ant-", "an Anthropic API key"),
    ("sk-proj-", "an OpenAI API key"),
    ("sk_live_", "a Stripe secret key"),
    ("rk_live_", "a Stripe secret key"),
];

/// What a value looks like, when it looks like a credential.
fn secret_value(value: &str) -> Option<&'static str> {
    if value.contains("PRIVATE KEY-----") {
        return Some("a PEM private key");
    }
    if url_with_password(value) {
        return Some("a URL with a password in it");
    }
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    value.split(|c: char| !word_char(c)).find_map(|word| {
        let by_prefix = TOKEN_PREFIXES
            .iter()
            .find(|(prefix, _)| word.len() > prefix.len() + 8 && word.starts_with(prefix))
            .map(|(_, kind)| *kind);
        by_prefix.or_else(|| aws_key_id(word).then_some("an AWS access key id"))
    })
}

/// `AKIA`/`ASIA` and 16 upper-case letters or digits.
fn aws_key_id(word: &str) -> bool {
    word.len() == 20
        && (word.starts_with("AKIA") || word.starts_with("ASIA"))
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// `scheme://user:password@host…` anywhere in the value.
fn url_with_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = value.get(at + 3..).unwrap_or_default();
        let authority = rest
            .split(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .next()
            .unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

#[cfg(test)]
mod tests;
