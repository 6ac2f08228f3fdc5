//! Which gateway a client command calls, and with which token: the first of
//!
//! 1. the flags (`--url`, `--token`),
//! 2. the environment (`GATEHOUSE_URL`, `GATEHOUSE_TOKEN`),
//! 3. a context saved by `gatehouse login` (`--context NAME`, `GATEHOUSE_CONTEXT`, else the
//!    current one),
//! 4. this machine's gateway: `http://127.0.0.1:18790` and the admin token `serve` generated in
//!    its data directory,
//!
//! each for the URL and the token separately. A context's token goes only to its own URL, and
//! this machine's admin token only to a loopback address where a process of this user listens
//! (see [`super::local`]): a token never follows a URL it was not issued for.

use std::fmt;
use std::path::PathBuf;

use anyhow::bail;

use super::ServerArgs;
use super::contexts::{self, Contexts};
use super::local::{self, LocalToken};

/// The address of the gateway `gatehouse serve` runs with the embedded default.
pub(crate) const DEFAULT_URL: &str = "http://127.0.0.1:18790";

/// What the process environment says, read once, so tests can pass their own.
#[derive(Debug, Clone, Default)]
pub(crate) struct Environment {
    /// `GATEHOUSE_URL`.
    pub(crate) url: Option<String>,
    /// `GATEHOUSE_TOKEN`.
    pub(crate) token: Option<String>,
    /// `GATEHOUSE_CONTEXT`.
    pub(crate) context: Option<String>,
    /// Where `gatehouse login` keeps contexts; `None` without `XDG_CONFIG_HOME` and `HOME`.
    pub(crate) contexts_file: Option<PathBuf>,
    /// This machine's default data directory, as `serve` picks it.
    pub(crate) data_dir: Option<PathBuf>,
}

impl Environment {
    /// The environment of this process. Empty variables count as unset.
    pub(crate) fn current() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        Self {
            url: var("GATEHOUSE_URL"),
            token: var("GATEHOUSE_TOKEN"),
            context: var("GATEHOUSE_CONTEXT"),
            contexts_file: contexts::default_path(),
            data_dir: crate::cli::layout::default_data_dir().ok(),
        }
    }
}

/// Where a URL or a token came from; `gatehouse status` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// `--url` or `--token`.
    Flag,
    /// An environment variable.
    Env(&'static str),
    /// A context saved by `gatehouse login`.
    Context(String),
    /// The admin token file of this machine's gateway.
    Local(PathBuf),
    /// The built-in default address.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag => write!(f, "the command line"),
            Origin::Env(name) => write!(f, "{name}"),
            Origin::Context(name) => write!(f, "context {name}"),
            Origin::Local(path) => write!(f, "{}", path.display()),
            Origin::Default => write!(f, "the default address"),
        }
    }
}

/// A gateway and the token to call it with.
pub(crate) struct Target {
    /// Its base URL.
    pub(crate) url: String,
    /// Where the URL came from.
    pub(crate) url_from: Origin,
    token: Token,
}

/// The token, or why there is none.
enum Token {
    Found {
        secret: String,
        from: Origin,
    },
    /// Nothing says which token to use; the text says how to give one.
    Missing(String),
    /// A token was found but is not sent; the text says why.
    Refused(String),
}

impl Target {
    /// Resolves `flags` over `env`, in the order of the module docs.
    pub(crate) fn resolve(flags: &ServerArgs, env: &Environment) -> anyhow::Result<Self> {
        let url_given = given(flags.url.as_deref(), env.url.as_deref(), "GATEHOUSE_URL");
        let token_given = given(
            flags.token.as_deref(),
            env.token.as_deref(),
            "GATEHOUSE_TOKEN",
        );
        let wanted = flags.context.as_deref().or(env.context.as_deref());
        // The contexts file is read only when something is left to find in it (or one is
        // named), so a loose file does not block a command that says everything itself.
        let context = if wanted.is_some() || url_given.is_none() || token_given.is_none() {
            choose_context(env, wanted)?
        } else {
            None
        };
        let (url, url_from) = match (url_given, &context) {
            (Some((url, from)), _) => (url.trim_end_matches('/').to_owned(), from),
            (None, Some((name, saved))) => (saved.url.clone(), Origin::Context(name.clone())),
            (None, None) => (DEFAULT_URL.to_owned(), Origin::Default),
        };
        let token = match (token_given, &context) {
            (Some((secret, from)), _) => Token::Found {
                secret: secret.to_owned(),
                from,
            },
            (None, Some((name, saved))) if contexts::same_gateway(&saved.url, &url) => {
                Token::Found {
                    secret: saved.token.clone(),
                    from: Origin::Context(name.clone()),
                }
            }
            (None, _) => local_token(env, &url),
        };
        Ok(Self {
            url,
            url_from,
            token,
        })
    }

    /// The token to send, or why there is none.
    pub(crate) fn token(&self) -> anyhow::Result<&str> {
        match &self.token {
            Token::Found { secret, .. } => Ok(secret),
            Token::Missing(why) | Token::Refused(why) => bail!("{why}"),
        }
    }

    /// Where the token came from, when there is one.
    pub(crate) fn token_from(&self) -> Option<&Origin> {
        match &self.token {
            Token::Found { from, .. } => Some(from),
            _ => None,
        }
    }
}

/// The flag's value, else the environment variable's, with where it came from.
fn given<'a>(
    flag: Option<&'a str>,
    env: Option<&'a str>,
    variable: &'static str,
) -> Option<(&'a str, Origin)> {
    match (flag, env) {
        (Some(value), _) => Some((value, Origin::Flag)),
        (None, Some(value)) => Some((value, Origin::Env(variable))),
        (None, None) => None,
    }
}

/// The context named by `wanted` (which must exist), else the current one, if any.
fn choose_context(
    env: &Environment,
    wanted: Option<&str>,
) -> anyhow::Result<Option<(String, contexts::Saved)>> {
    let contexts = match &env.contexts_file {
        Some(path) => Contexts::load(path)?,
        None => Contexts::default(),
    };
    match wanted {
        Some(name) => match contexts.get(name) {
            Some(saved) => Ok(Some((name.to_owned(), saved.clone()))),
            None => bail!(
                "no context named {name:?}{}; `gatehouse login --list` shows them",
                env.contexts_file
                    .as_ref()
                    .map(|path| format!(" in {}", path.display()))
                    .unwrap_or_default()
            ),
        },
        None => Ok(contexts
            .current()
            .map(|(name, saved)| (name.to_owned(), saved.clone()))),
    }
}

/// This machine's admin token for `url`, when `url` is this machine's gateway.
fn local_token(env: &Environment, url: &str) -> Token {
    let how = "pass --token, set GATEHOUSE_TOKEN, or save one with `gatehouse login`";
    let Some(data_dir) = &env.data_dir else {
        return Token::Missing(format!("no token: {how} (nothing gives one for {url})"));
    };
    match local::admin_token(data_dir, url) {
        Ok(LocalToken::Found { secret, path }) => Token::Found {
            secret,
            from: Origin::Local(path),
        },
        Ok(LocalToken::NotLocal) => {
            Token::Missing(format!("no token: {how} (nothing gives one for {url})"))
        }
        Ok(LocalToken::NoFile(path)) => Token::Missing(format!(
            "no token: {how} (for {url}: a gateway started on this machine without configured \
             tokens keeps its admin token in {}, which does not exist)",
            path.display()
        )),
        Ok(LocalToken::NotListening) => Token::Missing(format!(
            "cannot reach the gateway at {url}: nothing listens there; start it with `gatehouse \
             serve`"
        )),
        Err(refused) => Token::Refused(format!("{refused:#}")),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn env(dir: &tempfile::TempDir) -> Environment {
        Environment {
            contexts_file: Some(dir.path().join("contexts.json")),
            data_dir: Some(dir.path().join("data")),
            ..Environment::default()
        }
    }

    fn save(dir: &tempfile::TempDir, name: &str, url: &str, token: &str, current: bool) {
        let path = dir.path().join("contexts.json");
        let mut contexts = Contexts::load(&path).unwrap();
        contexts.insert(name, contexts::Saved::new(url, token, None), current);
        contexts.save(&path).unwrap();
    }

    #[test]
    fn flags_win_over_the_environment_which_wins_over_the_context() {
        let dir = tempfile::tempdir().unwrap();
        save(
            &dir,
            "prod",
            "https://gh.example",
            "context-token-0123456789",
            true,
        );
        let mut env = env(&dir);
        let flags = ServerArgs::default();
        let target = Target::resolve(&flags, &env).unwrap();
        assert_eq!(target.url, "https://gh.example");
        assert_eq!(target.url_from, Origin::Context("prod".into()));
        assert_eq!(target.token().unwrap(), "context-token-0123456789");

        env.url = Some("https://other.example".into());
        let target = Target::resolve(&flags, &env).unwrap();
        assert_eq!(target.url_from, Origin::Env("GATEHOUSE_URL"));
        assert!(
            target.token().is_err(),
            "a context's token never goes to another URL"
        );

        env.token = Some("env-token-0123456789".into());
        let flags = ServerArgs::new("https://flag.example/".into(), "flag-token".into());
        let target = Target::resolve(&flags, &env).unwrap();
        assert_eq!(
            (target.url.as_str(), target.token().unwrap()),
            ("https://flag.example", "flag-token")
        );
        assert_eq!(target.token_from(), Some(&Origin::Flag));
    }

    #[test]
    fn a_named_context_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let flags = ServerArgs {
            context: Some("nope".into()),
            ..ServerArgs::default()
        };
        let error = Target::resolve(&flags, &env(&dir)).err().unwrap();
        assert!(
            error.to_string().starts_with("no context named \"nope\""),
            "{error}"
        );
    }

    #[test]
    fn refuses_a_contexts_file_others_can_read() {
        let dir = tempfile::tempdir().unwrap();
        save(
            &dir,
            "prod",
            "https://gh.example",
            "context-token-0123456789",
            true,
        );
        let path = dir.path().join("contexts.json");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = Target::resolve(&ServerArgs::default(), &env(&dir))
            .err()
            .unwrap();
        assert!(
            format!("{error:#}").contains("readable by group or others (mode 644)"),
            "{error:#}"
        );
    }

    #[test]
    fn without_any_source_says_how_to_give_a_token() {
        let dir = tempfile::tempdir().unwrap();
        let target = Target::resolve(&ServerArgs::default(), &env(&dir)).unwrap();
        assert_eq!(target.url, DEFAULT_URL);
        let error = target.token().unwrap_err().to_string();
        assert!(
            error.contains("pass --token, set GATEHOUSE_TOKEN"),
            "{error}"
        );
    }
}
