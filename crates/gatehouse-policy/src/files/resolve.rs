//! The component-by-component walk from a requested path to the canonical file it names.
//!
//! The walk keeps a directory it has proven real (`cur`, never holding a symlink) and takes one
//! component at a time: `.` is skipped, `..` steps to `cur`'s parent, a name is `lstat`ed and a
//! symlink's target is spliced into the remaining components, as the kernel does. So `..`
//! after a symlink means the parent of the symlink's *target*, and the result is the path the
//! kernel would open, with no symlink left in it.
//!
//! **Containment** (`workspaceOnly`): once the walk is inside the workspace it may not leave it,
//! neither by `..` (`outside-workspace`) nor by a symlink's target (`symlink-escape`), even to
//! come back; and it must end inside. Symlinks that stay inside are followed. A walk may start
//! outside (an absolute path through a symlinked alias of the workspace) and enter it.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::text::{describe_char, first_unsafe_char};

use super::error::FileRefusal;
use super::examine::{Examined, Kind, lstat, without_symlinks};

/// Symlinks followed before the walk gives up, as Linux's `MAXSYMLINKS`.
pub(crate) const MAX_SYMLINKS: u32 = 40;

/// Longest requested path accepted, as Linux's `PATH_MAX`.
pub(crate) const MAX_PATH_BYTES: usize = 4096;

/// What the walk needs to know about the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkOptions<'a> {
    /// The canonical workspace; relative paths start here.
    pub(crate) workspace: &'a Path,
    /// Where `~/` leads, if known.
    pub(crate) home: Option<&'a Path>,
    /// Whether the walk must stay inside the workspace.
    pub(crate) contained: bool,
    /// Whether the target may be missing (a write creates it, with missing parents).
    pub(crate) may_create: bool,
}

/// Where the walk ended.
#[derive(Debug)]
pub(crate) struct Walked {
    /// The canonical path: every existing component resolved, missing ones as plain names.
    pub(crate) path: PathBuf,
    /// The target as examined (never a symlink); `None` when it does not exist.
    pub(crate) target: Option<Examined>,
}

/// One component still to walk, and the symlink (index into `links`) it came from.
enum Step {
    Root,
    Parent,
    Name(std::ffi::OsString),
    /// A trailing `/` or `/.`: what the walk reached must be a directory, as for the kernel.
    MustBeDir,
}

/// Walks `requested` to its canonical path.
pub(crate) fn walk(requested: &str, options: &WalkOptions<'_>) -> Result<Walked, FileRefusal> {
    let invalid = |why: &str| FileRefusal::InvalidPath {
        path: requested.to_owned(),
        why: why.to_owned(),
    };
    if requested.is_empty() {
        return Err(invalid("the path is empty"));
    }
    if requested.len() > MAX_PATH_BYTES {
        return Err(invalid("the path is longer than 4096 bytes"));
    }
    refuse_unsafe_chars(requested)?;
    let expanded = expand_home(requested, options.home).map_err(invalid)?;
    let workspace = options.workspace;
    let trailing_dir = ends_like_a_directory(&expanded);
    let (mut cur, rest) = if expanded.is_absolute() {
        match expanded.strip_prefix(workspace) {
            // The workspace is canonical, so walking its own components again proves nothing.
            Ok(rest) => (workspace.to_path_buf(), rest.to_path_buf()),
            Err(_) => (PathBuf::from("/"), expanded),
        }
    } else {
        (workspace.to_path_buf(), expanded)
    };
    if cur == workspace
        && let Some(walked) = fast_path(workspace, &rest, trailing_dir, requested)?
    {
        return Ok(walked);
    }
    let mut walk = Walk {
        requested,
        options,
        stack: Vec::new(),
        links: Vec::new(),
        entered: cur.starts_with(workspace),
    };
    walk.push(&rest, None);
    if trailing_dir && !ends_like_a_directory(&rest) {
        // `strip_prefix` dropped the trailing `/` or `/.`.
        walk.stack.insert(0, (Step::MustBeDir, None));
    }

    let mut metadata: Option<Examined> = None;
    let mut missing: Option<PathBuf> = None;
    while let Some((step, origin)) = walk.stack.pop() {
        let name = match step {
            Step::Name(name) => name,
            Step::MustBeDir => {
                let is_dir = missing.is_none() && metadata.is_none_or(|m| m.kind == Kind::Dir);
                if !is_dir {
                    return Err(FileRefusal::NotADirectory {
                        path: requested.to_owned(),
                        component: cur,
                    });
                }
                continue;
            }
            Step::Root | Step::Parent => {
                if let Some(missing) = missing {
                    return Err(FileRefusal::UnresolvableTail {
                        path: requested.to_owned(),
                        missing,
                    });
                }
                if matches!(step, Step::Root) {
                    cur = PathBuf::from("/");
                } else {
                    cur.pop();
                }
                metadata = None;
                walk.check_containment(&cur, origin)?;
                continue;
            }
        };
        let candidate = cur.join(&name);
        if missing.is_some() {
            cur = candidate;
            continue;
        }
        match lstat(&candidate) {
            Err(error) if error.kind() == ErrorKind::NotFound => {
                if !options.may_create {
                    return Err(FileRefusal::NotFound {
                        path: requested.to_owned(),
                        missing: candidate,
                    });
                }
                missing = Some(candidate.clone());
                cur = candidate;
                metadata = None;
            }
            Err(error) if error.kind() == ErrorKind::NotADirectory => {
                return Err(FileRefusal::NotADirectory {
                    path: requested.to_owned(),
                    component: cur,
                });
            }
            Err(error) => {
                return Err(FileRefusal::Unexaminable {
                    path: candidate,
                    error: error.to_string(),
                });
            }
            Ok(found) if found.kind == Kind::Symlink => {
                walk.follow(candidate)?;
                continue;
            }
            Ok(found) => {
                if found.kind != Kind::Dir && walk.has_more() {
                    return Err(FileRefusal::NotADirectory {
                        path: requested.to_owned(),
                        component: candidate,
                    });
                }
                cur = candidate;
                metadata = Some(found);
            }
        }
        walk.check_containment(&cur, origin)?;
    }
    if options.contained && !cur.starts_with(workspace) {
        return Err(FileRefusal::OutsideWorkspace {
            path: requested.to_owned(),
            resolved: cur,
            workspace: workspace.to_path_buf(),
        });
    }
    if missing.is_none() && metadata.is_none() {
        // Ended on `..` or `/`: a directory, examined for the caller's refusal to say so.
        metadata = Some(lstat(&cur).map_err(|e| FileRefusal::Unexaminable {
            path: cur.clone(),
            error: e.to_string(),
        })?);
    }
    Ok(Walked {
        path: cur,
        target: metadata,
    })
}

/// The common case in one system call: from the workspace (so inside it), plain names only, no
/// symlink anywhere. `Ok(None)` sends the request down the general walk.
fn fast_path(
    start: &Path,
    rest: &Path,
    trailing_dir: bool,
    requested: &str,
) -> Result<Option<Walked>, FileRefusal> {
    let mut path = start.to_path_buf();
    for component in rest.components() {
        match component {
            Component::Normal(name) => path.push(name),
            _ => return Ok(None),
        }
    }
    if path == start {
        return Ok(None);
    }
    let Some(target) = without_symlinks(&path) else {
        return Ok(None);
    };
    if trailing_dir && target.kind != Kind::Dir {
        return Err(FileRefusal::NotADirectory {
            path: requested.to_owned(),
            component: path,
        });
    }
    Ok(Some(Walked {
        path,
        target: Some(target),
    }))
}

/// The walk's state besides the current directory.
struct Walk<'a> {
    requested: &'a str,
    options: &'a WalkOptions<'a>,
    /// Components still to walk, last first.
    stack: Vec<(Step, Option<usize>)>,
    /// Symlinks followed so far: the link and its target as stored.
    links: Vec<(PathBuf, PathBuf)>,
    /// Whether the walk has been inside the workspace; from then on it may not leave.
    entered: bool,
}

impl Walk<'_> {
    /// Queues `path`'s components in front of what remains, tagged with their symlink.
    fn push(&mut self, path: &Path, origin: Option<usize>) {
        let steps: Vec<Step> = path
            .components()
            .filter_map(|c| match c {
                Component::RootDir => Some(Step::Root),
                Component::ParentDir => Some(Step::Parent),
                Component::Normal(name) => Some(Step::Name(name.to_owned())),
                Component::CurDir | Component::Prefix(_) => None,
            })
            .chain(ends_like_a_directory(path).then_some(Step::MustBeDir))
            .collect();
        self.stack
            .extend(steps.into_iter().rev().map(|step| (step, origin)));
    }

    fn has_more(&self) -> bool {
        !self.stack.is_empty()
    }

    /// Splices a symlink's target in front of the remaining components.
    fn follow(&mut self, link: PathBuf) -> Result<(), FileRefusal> {
        if self.links.len() >= MAX_SYMLINKS as usize {
            return Err(FileRefusal::SymlinkLoop {
                path: self.requested.to_owned(),
                limit: MAX_SYMLINKS,
            });
        }
        let target = std::fs::read_link(&link).map_err(|e| FileRefusal::Unexaminable {
            path: link.clone(),
            error: e.to_string(),
        })?;
        let text = target.to_str().ok_or_else(|| FileRefusal::InvalidPath {
            path: self.requested.to_owned(),
            why: format!(
                "symlink {} points to a name that is not UTF-8",
                link.display()
            ),
        })?;
        refuse_unsafe_chars(text)?;
        self.push(&target, Some(self.links.len()));
        self.links.push((link, target));
        Ok(())
    }

    /// Refuses a step that leaves the workspace after the walk entered it.
    fn check_containment(&mut self, cur: &Path, origin: Option<usize>) -> Result<(), FileRefusal> {
        if !self.options.contained {
            return Ok(());
        }
        let inside = cur.starts_with(self.options.workspace);
        if inside {
            self.entered = true;
            return Ok(());
        }
        if !self.entered {
            return Ok(());
        }
        Err(match origin.and_then(|i| self.links.get(i)) {
            Some((link, target)) => FileRefusal::SymlinkEscape {
                path: self.requested.to_owned(),
                link: link.clone(),
                target: target.clone(),
            },
            None => FileRefusal::OutsideWorkspace {
                path: self.requested.to_owned(),
                resolved: cur.to_path_buf(),
                workspace: self.options.workspace.to_path_buf(),
            },
        })
    }
}

/// Whether `path` ends in `/` or `/.`, which `Path::components` forgets.
fn ends_like_a_directory(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    bytes.ends_with(b"/") || bytes.ends_with(b"/.")
}

/// Refuses control, format and unassigned characters.
pub(crate) fn refuse_unsafe_chars(text: &str) -> Result<(), FileRefusal> {
    match first_unsafe_char(text) {
        Some((offset, c)) => Err(FileRefusal::UnsafeCharacter {
            path: text.to_owned(),
            character: describe_char(c),
            offset,
        }),
        None => Ok(()),
    }
}

/// `~` and `~/…` against the home directory; `~user` is not expanded (refused).
fn expand_home(requested: &str, home: Option<&Path>) -> Result<PathBuf, &'static str> {
    let rest = match requested.strip_prefix('~') {
        None => return Ok(PathBuf::from(requested)),
        Some(rest) => rest,
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err("`~user` paths are not expanded");
    }
    let home = home.ok_or("`~` needs the home directory, which is not known")?;
    Ok(home.join(rest.trim_start_matches('/')))
}
