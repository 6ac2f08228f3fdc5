//! Contexts saved by `gatehouse login`: a name for a gateway's URL and a token for it, in
//! `$XDG_CONFIG_HOME/gatehouse/contexts.json` (else `~/.config/gatehouse/contexts.json`), like
//! `gh auth login` or kubectl's contexts. The file holds tokens, so it is written 0600 in a 0700
//! directory, replaced atomically, and refused when group or others can read it or it belongs
//! to another user.

use std::collections::BTreeMap;
use std::fs::DirBuilder;
use std::io::ErrorKind;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};

/// Where contexts are kept when nothing else is said.
pub(crate) fn default_path() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_CONFIG_HOME")
        .map(|config| config.join("gatehouse"))
        .or_else(|| absolute("HOME").map(|home| home.join(".config/gatehouse")))
        .map(|dir| dir.join("contexts.json"))
}

/// The saved contexts and which one is current.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Contexts {
    /// The context commands use when none is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current: Option<String>,
    #[serde(default)]
    contexts: BTreeMap<String, Saved>,
}

/// One saved gateway. Not `Debug`: it holds a token.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Saved {
    /// The gateway's base URL.
    pub(crate) url: String,
    /// The bearer token for it.
    pub(crate) token: String,
    /// Who the gateway said the token is when it was saved, for `login --list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) identity: Option<Identity>,
}

/// A token's name and scopes, as `gateway.status` reported them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) scopes: Vec<String>,
}

impl Saved {
    pub(crate) fn new(url: &str, token: &str, identity: Option<Identity>) -> Self {
        Self {
            url: url.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
            identity,
        }
    }
}

impl Contexts {
    /// The contexts in `path`; none when it does not exist.
    pub(crate) fn load(path: &Path) -> anyhow::Result<Self> {
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Self::default()),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        super::local::private_to_me(path, &metadata, "contexts file")?;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a contexts file gatehouse wrote; fix or delete it",
                path.display()
            )
        })
    }

    /// Writes the contexts to `path` (0600, in a 0700 directory), replacing the file at once.
    pub(crate) fn save(&self, path: &Path) -> anyhow::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        gatehouse_store::private_file::replace(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// The context named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Saved> {
        self.contexts.get(name)
    }

    /// The current context, if one is set and still saved.
    pub(crate) fn current(&self) -> Option<(&str, &Saved)> {
        let name = self.current.as_deref()?;
        self.contexts.get(name).map(|saved| (name, saved))
    }

    /// The current context's name.
    pub(crate) fn current_name(&self) -> Option<&str> {
        self.current().map(|(name, _)| name)
    }

    /// Every context, by name.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Saved)> {
        self.contexts
            .iter()
            .map(|(name, saved)| (name.as_str(), saved))
    }

    /// Saves `saved` as `name` (replacing one of that name), and makes it current if asked.
    pub(crate) fn insert(&mut self, name: &str, saved: Saved, current: bool) {
        self.contexts.insert(name.to_owned(), saved);
        if current {
            self.current = Some(name.to_owned());
        }
    }

    /// Makes `name` current; it must exist.
    pub(crate) fn use_context(&mut self, name: &str) -> anyhow::Result<()> {
        if !self.contexts.contains_key(name) {
            bail!("no context named {name:?}; `gatehouse login --list` shows them");
        }
        self.current = Some(name.to_owned());
        Ok(())
    }

    /// Forgets `name`; it is no longer current either.
    pub(crate) fn remove(&mut self, name: &str) -> anyhow::Result<()> {
        if self.contexts.remove(name).is_none() {
            bail!("no context named {name:?}; `gatehouse login --list` shows them");
        }
        if self.current.as_deref() == Some(name) {
            self.current = None;
        }
        Ok(())
    }
}

/// Whether two base URLs name the same gateway (trailing slashes aside), so a context's token
/// is sent to its own gateway and no other.
pub(crate) fn same_gateway(saved: &str, url: &str) -> bool {
    saved.trim_end_matches('/') == url.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn saves_0600_in_a_0700_directory_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gatehouse/contexts.json");
        let mut contexts = Contexts::default();
        contexts.insert(
            "prod",
            Saved::new("https://g.example/", "t0123456789abcdef", None),
            true,
        );
        contexts.save(&path).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        let read = Contexts::load(&path).unwrap();
        let (name, saved) = read.current().unwrap();
        assert_eq!((name, saved.url.as_str()), ("prod", "https://g.example"));
    }

    #[test]
    fn forgets_the_current_context_when_it_is_removed() {
        let mut contexts = Contexts::default();
        contexts.insert("a", Saved::new("http://a", "t", None), true);
        contexts.insert("b", Saved::new("http://b", "t", None), false);
        contexts.remove("a").unwrap();
        assert!(contexts.current().is_none());
        assert!(contexts.remove("a").is_err());
        contexts.use_context("b").unwrap();
        assert_eq!(contexts.current_name(), Some("b"));
    }
}
