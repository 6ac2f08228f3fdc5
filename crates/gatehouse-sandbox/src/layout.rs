//! The file system a sandboxed run sees: an ordered list of mounts, as bubblewrap applies
//! them, and the mapping between a host path and the path the sandbox sees.
//!
//! bubblewrap starts from an empty root and applies its mount options in order, a later mount
//! covering whatever an earlier one put at or below its destination. [`Layout`] keeps the same
//! order, so [`Layout::to_host`] answers "which host file is at this sandbox path" by the last
//! mount covering it, and [`Layout::to_sandbox`] answers the reverse only when that file is not
//! covered by a later mount. The binding needs this: an approval is checked on host paths, and
//! the check is about what the sandbox runs only if the sandbox sees that same file (the same
//! inode, through a bind mount) at the path it is asked to run.

use std::path::{Path, PathBuf};

/// What is mounted at one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountKind {
    /// A host path, read-only or read-write.
    Bind {
        /// The host path (for the configured ones, checked by [`crate::check_source`]).
        source: PathBuf,
        /// Whether the sandbox may write through it.
        writable: bool,
    },
    /// An empty, private, memory-backed directory that vanishes with the run.
    Tmpfs,
    /// A procfs for the sandbox's own process namespace.
    Proc,
    /// A minimal `/dev` (`null`, `zero`, `full`, `random`, `urandom`, `tty`, `pts`, `shm`).
    Dev,
    /// A symbolic link (`/bin` → `usr/bin` on merged-`/usr` systems).
    Symlink {
        /// The link's target, as written.
        target: PathBuf,
    },
}

/// Why a mount is there, for `gatehouse doctor` and for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountRole {
    /// `/usr`, `/bin`, the libraries, `/proc`, `/dev`, `/tmp`.
    System,
    /// One of the few files of `/etc` programs need.
    Etc,
    /// What backs the home directory (isolated, persistent or throwaway).
    Home,
    /// A top-level directory of the real home (isolations `autodocs-*`).
    Autodocs,
    /// A persisted home path (isolation `volumes`).
    Volume,
    /// An `extraPaths` directory.
    ExtraPath,
    /// The agent's workspace.
    Workspace,
}

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where the sandbox sees it.
    pub dest: PathBuf,
    /// What it is.
    pub kind: MountKind,
    /// Why it is there.
    pub role: MountRole,
}

/// The mounts of one plan, in the order bubblewrap applies them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    mounts: Vec<Mount>,
}

/// How many links [`Layout::to_host`] follows before giving up (the layout's own links are one
/// level deep; this only bounds a malformed one).
const MAX_LINKS: usize = 8;

impl Layout {
    /// A layout of these mounts, applied in this order.
    pub(crate) fn new(mounts: Vec<Mount>) -> Self {
        Layout { mounts }
    }

    /// The mounts, in order.
    pub fn mounts(&self) -> &[Mount] {
        &self.mounts
    }

    /// The host file the sandbox sees at `sandbox_path` (absolute, plain), or `None` when
    /// nothing of the host is there (a tmpfs, `/proc`, `/dev`, or nothing mounted).
    pub fn to_host(&self, sandbox_path: &Path) -> Option<PathBuf> {
        let mut path = sandbox_path.to_path_buf();
        for _ in 0..MAX_LINKS {
            let mount = self.top_mount(&path)?;
            let below = path.strip_prefix(&mount.dest).ok()?;
            match &mount.kind {
                MountKind::Bind { source, .. } => return Some(join(source, below)),
                MountKind::Symlink { target } if !below.as_os_str().is_empty() => {
                    let parent = mount.dest.parent().unwrap_or(Path::new("/"));
                    path = parent.join(target).join(below);
                }
                MountKind::Symlink { .. } | MountKind::Tmpfs | MountKind::Proc | MountKind::Dev => {
                    return None;
                }
            }
        }
        None
    }

    /// The path at which the sandbox sees host file `host_path` (absolute, plain), or `None`
    /// when it does not see it at all (not mounted, or covered by a later mount).
    pub fn to_sandbox(&self, host_path: &Path) -> Option<PathBuf> {
        self.mounts.iter().rev().find_map(|mount| {
            let MountKind::Bind { source, .. } = &mount.kind else {
                return None;
            };
            let below = host_path.strip_prefix(source).ok()?;
            let seen = join(&mount.dest, below);
            (self.to_host(&seen).as_deref() == Some(host_path)).then_some(seen)
        })
    }

    /// Whether the sandbox sees host file `path` at that same path: what the binding checked
    /// on the host is then what the run opens.
    pub fn sees_at_same_path(&self, path: &Path) -> bool {
        self.to_host(path).as_deref() == Some(path)
    }

    /// Whether the sandbox may write at `sandbox_path`: the mount covering it is a writable
    /// bind or a tmpfs.
    pub fn is_writable(&self, sandbox_path: &Path) -> bool {
        self.top_mount(sandbox_path).is_some_and(|mount| {
            matches!(
                mount.kind,
                MountKind::Bind { writable: true, .. } | MountKind::Tmpfs
            )
        })
    }

    /// The last mount whose destination is `path` or above it.
    fn top_mount(&self, path: &Path) -> Option<&Mount> {
        self.mounts
            .iter()
            .rev()
            .find(|mount| path.starts_with(&mount.dest))
    }
}

/// `base` joined with `below`, without a trailing `/` when `below` is empty.
fn join(base: &Path, below: &Path) -> PathBuf {
    if below.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(below)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(dest: &str, source: &str, writable: bool, role: MountRole) -> Mount {
        Mount {
            dest: dest.into(),
            kind: MountKind::Bind {
                source: source.into(),
                writable,
            },
            role,
        }
    }

    fn other(dest: &str, kind: MountKind) -> Mount {
        Mount {
            dest: dest.into(),
            kind,
            role: MountRole::System,
        }
    }

    fn layout() -> Layout {
        Layout::new(vec![
            bind("/usr", "/usr", false, MountRole::System),
            other(
                "/bin",
                MountKind::Symlink {
                    target: "usr/bin".into(),
                },
            ),
            other("/proc", MountKind::Proc),
            other("/tmp", MountKind::Tmpfs),
            bind(
                "/home/ann",
                "/data/sandbox/main/home",
                true,
                MountRole::Home,
            ),
            bind(
                "/home/ann/Docs",
                "/home/ann/Docs",
                false,
                MountRole::Autodocs,
            ),
            bind(
                "/home/ann/Docs/proj",
                "/home/ann/Docs/proj",
                true,
                MountRole::Workspace,
            ),
        ])
    }

    #[test]
    fn maps_a_sandbox_path_to_the_host_file_behind_it() {
        let layout = layout();
        let host = |p: &str| layout.to_host(Path::new(p));
        assert_eq!(host("/usr/bin/git"), Some("/usr/bin/git".into()));
        assert_eq!(host("/bin/sh"), Some("/usr/bin/sh".into()));
        assert_eq!(
            host("/home/ann/.bashrc"),
            Some("/data/sandbox/main/home/.bashrc".into())
        );
        assert_eq!(
            host("/home/ann/Docs/a.txt"),
            Some("/home/ann/Docs/a.txt".into())
        );
        assert_eq!(
            host("/home/ann/Docs/proj"),
            Some("/home/ann/Docs/proj".into())
        );
        assert_eq!(host("/tmp/x"), None);
        assert_eq!(host("/proc/1/environ"), None);
        assert_eq!(host("/bin"), None);
        assert_eq!(host("/etc/shadow"), None);
    }

    #[test]
    fn maps_a_host_file_to_where_the_sandbox_sees_it_unless_covered() {
        let layout = layout();
        let seen = |p: &str| layout.to_sandbox(Path::new(p));
        assert_eq!(
            seen("/data/sandbox/main/home/.bashrc"),
            Some("/home/ann/.bashrc".into())
        );
        assert_eq!(
            seen("/home/ann/Docs/proj/x"),
            Some("/home/ann/Docs/proj/x".into())
        );
        // The isolated home's own `Docs` directory is covered by the real one.
        assert_eq!(seen("/data/sandbox/main/home/Docs/a.txt"), None);
        // The real home's hidden files are not mounted.
        assert_eq!(seen("/home/ann/.ssh/id_ed25519"), None);
        assert_eq!(seen("/etc/passwd"), None);
        assert!(layout.sees_at_same_path(Path::new("/home/ann/Docs/proj/run.sh")));
        assert!(!layout.sees_at_same_path(Path::new("/home/ann/.bashrc")));
    }

    #[test]
    fn knows_where_the_sandbox_may_write() {
        let layout = layout();
        let writable = |p: &str| layout.is_writable(Path::new(p));
        assert!(writable("/home/ann/Docs/proj/out"));
        assert!(writable("/tmp/x"));
        assert!(writable("/home/ann/.cache"));
        assert!(!writable("/home/ann/Docs/a.txt"));
        assert!(!writable("/usr/bin"));
        assert!(!writable("/etc"));
    }
}
