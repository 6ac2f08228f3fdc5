//! Program name → absolute, symlink-resolved path, the way `execve` via `PATH` would find it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Where names resolve: the request's `PATH`, `HOME` and working directory.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    /// `PATH` entries made absolute, each with whether it was written relative.
    path_dirs: Vec<(PathBuf, bool)>,
    had_relative_path: bool,
    home: Option<PathBuf>,
    /// `None` after a `cd` the analyzer could not follow.
    cwd: Option<PathBuf>,
}

impl Resolver {
    pub(crate) fn new(cwd: &Path, env: &BTreeMap<String, String>) -> Self {
        let cwd = normalize(cwd);
        let path_dirs: Vec<(PathBuf, bool)> = env
            .get("PATH")
            .map(|path| {
                std::env::split_paths(&OsString::from(path))
                    .filter(|dir| !dir.as_os_str().is_empty())
                    .map(|dir| (normalize(&cwd.join(&dir)), dir.is_relative()))
                    .collect()
            })
            .unwrap_or_default();
        let had_relative_path = path_dirs.iter().any(|(_, relative)| *relative);
        let home = env
            .get("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| normalize(&cwd.join(home)));
        Resolver {
            path_dirs,
            had_relative_path,
            home,
            cwd: Some(cwd),
        }
    }

    /// `HOME`, for `~` in allowlist patterns.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// After a `cd`, relative names are ambiguous: in a pipeline or after a failed `cd` bash
    /// still runs them from the old directory. So relative programs and relative `PATH`
    /// entries stop resolving rather than guessing.
    pub(crate) fn forget_cwd(&mut self) {
        self.cwd = None;
        self.path_dirs.retain(|(_, relative)| !relative);
        if self.had_relative_path {
            self.path_dirs.clear();
        }
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
            return Some(canonical_or_lexical(&self.relative_to_cwd(word)?));
        }
        self.path_dirs
            .iter()
            .map(|(dir, _)| dir.join(word))
            .find(|candidate| is_executable_file(candidate))
            .map(|found| canonical_or_lexical(&found))
    }

    /// Resolves a script operand (`bash script.sh`): relative to the working directory, and it
    /// must exist, because bash would otherwise search `PATH` for it.
    pub(crate) fn resolve_script(&self, word: &str, tilde: bool) -> Option<PathBuf> {
        let candidate = if tilde && word.starts_with('~') {
            self.expand_tilde(word)?
        } else {
            self.relative_to_cwd(word)?
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

    /// Absolute words need no working directory; relative ones need a known one.
    fn relative_to_cwd(&self, word: &str) -> Option<PathBuf> {
        if word.starts_with('/') {
            Some(PathBuf::from(word))
        } else {
            Some(self.cwd.as_ref()?.join(word))
        }
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
