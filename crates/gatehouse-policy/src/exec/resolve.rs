//! Program name → absolute, symlink-resolved path, the way `execve` via `PATH` would find it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Where names resolve: the request's `PATH`, `HOME` and working directory.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    path_dirs: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// `None` after a `cd` the analyzer could not follow.
    cwd: Option<PathBuf>,
}

impl Resolver {
    pub(crate) fn new(cwd: &Path, env: &BTreeMap<String, String>) -> Self {
        let cwd = normalize(cwd);
        let path_dirs = env
            .get("PATH")
            .map(|path| {
                std::env::split_paths(&OsString::from(path))
                    .filter(|dir| !dir.as_os_str().is_empty())
                    .map(|dir| normalize(&cwd.join(dir)))
                    .collect()
            })
            .unwrap_or_default();
        let home = env
            .get("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| normalize(&cwd.join(home)));
        Resolver {
            path_dirs,
            home,
            cwd: Some(cwd),
        }
    }

    /// `HOME`, for `~` in allowlist patterns.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Follows a literal `cd` so later relative programs resolve where bash would run them;
    /// anything else makes the working directory unknown.
    pub(crate) fn change_dir(&mut self, target: Option<&str>, tilde: bool) {
        self.cwd = match (target, &self.cwd) {
            (Some(target), _) if tilde => self.expand_tilde(target),
            (Some(target), Some(cwd)) if !target.is_empty() && target != "-" => {
                Some(normalize(&cwd.join(target)))
            }
            _ => None,
        };
    }

    /// Resolves a program word. A word with a `/` names a path (which may not exist yet, and
    /// is then matched as written); a bare name must be an executable file on `PATH`.
    pub(crate) fn resolve_program(&self, word: &str, tilde: bool) -> Option<PathBuf> {
        if word.is_empty() {
            return None;
        }
        if tilde && word.starts_with('~') {
            let expanded = self.expand_tilde(word)?;
            return Some(canonical_or_lexical(&expanded));
        }
        if word.contains('/') {
            let candidate = self.cwd.as_ref()?.join(word);
            return Some(canonical_or_lexical(&candidate));
        }
        self.path_dirs
            .iter()
            .map(|dir| dir.join(word))
            .find(|candidate| is_executable_file(candidate))
            .map(|found| canonical_or_lexical(&found))
    }

    /// Resolves a script operand (`bash script.sh`): relative to the working directory, and it
    /// must exist, because bash would otherwise search `PATH` for it.
    pub(crate) fn resolve_script(&self, word: &str, tilde: bool) -> Option<PathBuf> {
        let candidate = if tilde && word.starts_with('~') {
            self.expand_tilde(word)?
        } else {
            self.cwd.as_ref()?.join(word)
        };
        std::fs::canonicalize(candidate)
            .ok()
            .filter(|p| p.is_file())
    }

    /// Looks a bare name up in `node_modules/.bin` of the working directory first, the way
    /// package runners do, then on `PATH`.
    pub(crate) fn resolve_package_bin(&self, word: &str) -> Option<PathBuf> {
        if word.contains('/') {
            return self.resolve_program(word, false);
        }
        let local = self.cwd.as_ref()?.join("node_modules/.bin").join(word);
        if is_executable_file(&local) {
            return Some(canonical_or_lexical(&local));
        }
        self.resolve_program(word, false)
    }

    fn expand_tilde(&self, word: &str) -> Option<PathBuf> {
        let home = self.home.as_ref()?;
        match word.strip_prefix('~') {
            Some("") => Some(home.clone()),
            Some(rest) => rest
                .strip_prefix('/')
                .map(|rest| normalize(&home.join(rest))),
            None => None,
        }
    }
}

/// The real path when the file exists, otherwise the path with `.` and `..` folded, so an
/// allowlist entry for a not-yet-created script still matches its intended location.
fn canonical_or_lexical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    path.is_file()
}
