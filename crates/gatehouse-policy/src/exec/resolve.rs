//! Program name → absolute, symlink-resolved path, the way `execve` via `PATH` would find it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

mod no_symlink;
mod plain_file;

use self::plain_file::FileKind;

/// Most directories [`Resolver::changed_dir`] keeps track of; `cd`s that make more possible
/// (each may double them) make relative file operands unknown.
const MAX_FILE_DIRS: usize = 32;

/// Where names resolve: the request's `PATH`, `HOME` and working directory.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    /// `PATH` entries made absolute against the working directory.
    path_dirs: Vec<PathBuf>,
    /// Some entry was relative, so a `cd` changes what every later lookup finds.
    had_relative_path: bool,
    home: Option<PathBuf>,
    /// `None` after a `cd`, where relative programs become ambiguous.
    cwd: Option<PathBuf>,
    /// Every directory a relative file operand may be opened from: the request's working
    /// directory and, after each `cd`, where it may have moved to (a `cd` that fails, or one in
    /// a pipeline, leaves the shell where it was). `None` once a `cd` went somewhere its text
    /// does not say.
    file_dirs: Option<Vec<PathBuf>>,
    /// `CDPATH` is set, so a relative `cd` may land in any of its directories.
    cdpath: bool,
    /// Real paths of `PATH` directories already resolved during this evaluation; most chains
    /// run several programs from the same directory. Never shared across evaluations, so a
    /// re-pointed symlink is always seen.
    real_dirs: RefCell<Vec<(PathBuf, PathBuf)>>,
    /// Bare names found on `PATH` in this evaluation, with the file as `execvp` opens it.
    found_on_path: RefCell<Vec<(String, PathBuf)>>,
}

impl Resolver {
    pub(crate) fn new(cwd: &Path, env: &BTreeMap<String, String>) -> Self {
        // Paths are never folded lexically: `a/link/../b` is wherever the kernel says, so `..`
        // is left for `realpath` to resolve.
        let cwd = cwd.to_path_buf();
        // An empty entry is the working directory to `execvp` and every shell. An entry
        // starting with `~` is `$HOME/…` to bash and a directory named `~` to dash, so it and
        // everything after it cannot be known: the search stops there.
        let entries: Vec<PathBuf> = env
            .get("PATH")
            .map(|path| {
                std::env::split_paths(&OsString::from(path))
                    .take_while(|dir| !dir.as_os_str().as_encoded_bytes().starts_with(b"~"))
                    .map(|dir| {
                        if dir.as_os_str().is_empty() {
                            PathBuf::from(".")
                        } else {
                            dir
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let had_relative_path = entries.iter().any(|dir| dir.is_relative());
        // The working directory itself for an empty entry, not `cwd/.`: the same file the
        // executor opens, under the same name.
        // An absolute entry is taken as it is (joining it to `cwd` would only copy it).
        let path_dirs = entries
            .into_iter()
            .map(|dir| {
                if dir.is_absolute() {
                    dir
                } else if dir == Path::new(".") {
                    cwd.clone()
                } else {
                    cwd.join(dir)
                }
            })
            .collect();
        let home = env
            .get("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| cwd.join(home));
        Resolver {
            path_dirs,
            had_relative_path,
            home,
            file_dirs: Some(vec![cwd.clone()]),
            cdpath: env.get("CDPATH").is_some_and(|cdpath| !cdpath.is_empty()),
            cwd: Some(cwd),
            real_dirs: RefCell::new(Vec::new()),
            found_on_path: RefCell::new(Vec::new()),
        }
    }

    /// `HOME`, for `~` in allowlist patterns.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// After a `cd`, relative names are ambiguous: in a pipeline or after a failed `cd` bash
    /// still runs them from the old directory. So relative programs and relative `PATH`
    /// entries stop resolving rather than guessing, and a relative file operand must be a plain
    /// file (or nothing) in each directory the shell may be in. `target` is the directory as
    /// written, when it is one plain word (no expansion, option or `-`), with whether it
    /// starts with an unquoted `~`; otherwise nothing relative is known any more.
    pub(crate) fn changed_dir(&mut self, target: Option<(&str, bool)>) {
        self.cwd = None;
        // A relative entry may shadow any later one, so none of them can be trusted.
        if self.had_relative_path {
            self.path_dirs.clear();
        }
        let target = match target {
            Some((word, true)) if word.starts_with('~') => self.expand_tilde(word),
            Some((word, _)) if !word.is_empty() => Some(PathBuf::from(word)),
            _ => None,
        };
        let followed = target.filter(|target| target.is_absolute() || !self.cdpath);
        self.file_dirs = match (self.file_dirs.take(), followed) {
            (Some(mut dirs), Some(target)) => {
                // bash's `cd` drops `dir/..` as text (`/dev/fd/..` is `/dev`), and falls back
                // to the kernel's reading (`/proc/self`) when that fails: both are candidates.
                let moved: Vec<PathBuf> = dirs
                    .iter()
                    .flat_map(|dir| {
                        let joined = dir.join(&target);
                        [lexically_normal(&joined), joined]
                    })
                    .collect();
                for dir in moved {
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
                (dirs.len() <= MAX_FILE_DIRS).then_some(dirs)
            }
            _ => None,
        };
    }

    /// Whether a program-file operand (a script, a `-f` file, a module path) opens nothing but
    /// a plain file, in every directory it may be opened from: a regular file outside `/dev`
    /// and `/proc`, not reached through an fd link, or nothing at all (the tool then fails
    /// without running anything); a directory too when `directory_ok` (`node .`).
    pub(crate) fn opens_only_plain_files(
        &self,
        word: &str,
        tilde: bool,
        directory_ok: bool,
    ) -> bool {
        let is_plain = |path: &Path| match plain_file::classify(path) {
            FileKind::Missing | FileKind::Plain(_) => true,
            FileKind::Directory => directory_ok,
            FileKind::Other => false,
        };
        if tilde && word.starts_with('~') {
            return self.expand_tilde(word).is_some_and(|path| is_plain(&path));
        }
        if word.starts_with('/') {
            return is_plain(Path::new(word));
        }
        self.file_dirs
            .as_ref()
            .is_some_and(|dirs| dirs.iter().all(|dir| is_plain(&dir.join(word))))
    }

    /// Resolves a program word. A word with a `/` names a path (which may not exist yet, and
    /// is then matched as written); a bare name must be an executable file on `PATH`.
    pub(crate) fn resolve_program(&self, word: &str, tilde: bool) -> Option<PathBuf> {
        if word.is_empty() {
            return None;
        }
        if tilde && word.starts_with('~') {
            let expanded = self.expand_tilde(word)?;
            return real_or_candidate(&expanded);
        }
        if word.contains('/') {
            return real_or_candidate(&self.relative_to_cwd(word)?);
        }
        // The first directory holding an executable `word` wins, as for `execve` via `PATH`,
        // even when its real path cannot be worked out: searching on would name a program
        // the shell would not run.
        for dir in &self.path_dirs {
            if let Some(real) = self.path_hit(dir, word) {
                let found = dir.join(word);
                self.found_on_path
                    .borrow_mut()
                    .push((word.to_owned(), found));
                return real;
            }
        }
        None
    }

    /// The file a bare `word` was found at on `PATH` in this evaluation, as `execvp` opens it
    /// (the entry joined with the name, symlinks kept), so an executor can spawn and bind that
    /// file without searching `PATH` a second time.
    pub(crate) fn found_on_path(&self, word: &str) -> Option<PathBuf> {
        self.found_on_path
            .borrow()
            .iter()
            .find(|(name, _)| name == word)
            .map(|(_, found)| found.clone())
    }

    /// Resolves a script operand (`bash script.sh`): relative to the working directory, and it
    /// must exist, because bash would otherwise search `PATH` for it. It must be a plain file
    /// (see [`Self::opens_only_plain_files`]): a symlink to `/dev/stdin` is the pipe's text.
    pub(crate) fn resolve_script(&self, word: &str, tilde: bool) -> Option<PathBuf> {
        let candidate = if tilde && word.starts_with('~') {
            self.expand_tilde(word)?
        } else {
            self.relative_to_cwd(word)?
        };
        match plain_file::classify(&candidate) {
            FileKind::Plain(real) => Some(real),
            FileKind::Missing | FileKind::Directory | FileKind::Other => None,
        }
    }

    /// Looks a bare name up in `node_modules/.bin` of the working directory, and nowhere else:
    /// a package runner never searches `PATH`; what it does not find locally it takes from
    /// its own global directory or downloads, neither of which is the program on `PATH`.
    pub(crate) fn resolve_package_bin(&self, word: &str) -> Option<PathBuf> {
        if word.contains('/') {
            return self.resolve_program(word, false);
        }
        let local = self.cwd.as_ref()?.join("node_modules/.bin").join(word);
        if is_executable_file(&local) {
            return real_or_candidate(&local);
        }
        None
    }

    /// Looks `name` up in one `PATH` directory: `None` when it is not an executable there,
    /// `Some(real path)` when it is. One `lstat` answers both for a plain file, whose real path
    /// is its directory's real path plus its name (the directory's is reused within this
    /// evaluation); only a symlink costs a full `realpath`. Path system calls dominate an
    /// evaluation's time, so each one saved matters.
    fn path_hit(&self, dir: &Path, name: &str) -> Option<Option<PathBuf>> {
        let found = dir.join(name);
        if !self.knows_real_dir(dir) {
            match no_symlink::lookup(&found) {
                no_symlink::Lookup::Missing => return None,
                no_symlink::Lookup::NoSymlinks { executable } => {
                    // No symlink anywhere on the path: the lexical path is the real one.
                    self.real_dirs
                        .borrow_mut()
                        .push((dir.to_path_buf(), dir.to_path_buf()));
                    return executable.then_some(Some(found));
                }
                no_symlink::Lookup::Unknown => {}
            }
        }
        let meta = std::fs::symlink_metadata(&found).ok()?;
        if meta.file_type().is_symlink() {
            return is_executable_file(&found).then(|| real_or_candidate(&found));
        }
        if !is_executable(&meta) {
            return None;
        }
        Some(match self.real_dir(dir) {
            Some(real_dir) => Some(real_dir.join(name)),
            None => real_or_candidate(&found),
        })
    }

    /// Whether this evaluation already knows `dir`'s real path.
    fn knows_real_dir(&self, dir: &Path) -> bool {
        self.real_dirs
            .borrow()
            .iter()
            .any(|(known, _)| known == dir)
    }

    /// The real path of a `PATH` directory, resolved at most once per evaluation.
    fn real_dir(&self, dir: &Path) -> Option<PathBuf> {
        let cached = self
            .real_dirs
            .borrow()
            .iter()
            .find(|(known, _)| known == dir)
            .map(|(_, real)| real.clone());
        if cached.is_some() {
            return cached;
        }
        let real = std::fs::canonicalize(dir).ok()?;
        self.real_dirs
            .borrow_mut()
            .push((dir.to_path_buf(), real.clone()));
        Some(real)
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
            Some(rest) => rest.strip_prefix('/').map(|rest| home.join(rest)),
            None => None,
        }
    }
}

/// `path` with `.` components dropped and each `..` taking away the component before it, as
/// bash's `cd` reads a directory (not following symlinks); `..` at the root stays there.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if normal.parent().is_some() {
                    normal.pop();
                }
            }
            other => normal.push(other),
        }
    }
    normal
}

/// The real path when the file exists. Otherwise the real path of its nearest existing
/// ancestor followed by the missing components, so an allowlist entry for a not-yet-created
/// script still matches its intended location; a missing part that is `..` cannot be placed
/// without the kernel and resolves to nothing.
fn real_or_candidate(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    let parts: Vec<Component<'_>> = path.components().collect();
    for keep in (1..parts.len()).rev() {
        let prefix: PathBuf = parts[..keep].iter().collect();
        if let Ok(mut real) = std::fs::canonicalize(&prefix) {
            for part in &parts[keep..] {
                match part {
                    Component::Normal(name) => real.push(name),
                    Component::CurDir => {}
                    _ => return None,
                }
            }
            return Some(real);
        }
    }
    None
}

/// Whether `path`, symlinks followed, is a file some execute bit allows.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| is_executable(&meta))
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
}
