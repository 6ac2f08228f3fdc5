//! Which host paths may be mounted into a sandbox, and why each refused one may not.
//!
//! Every mount source that comes from config (the workspace, an extra path) or from the home
//! directory (the autodocs directories) passes [`check_source`]: it must be absolute, plain
//! (no `..`), exist, have no symbolic link in any component (so the directory checked is the
//! directory mounted, and a link cannot be re-pointed afterwards), be a directory or a regular
//! file (never a socket or a device), lie inside an allowed root, and neither be, lie inside,
//! nor contain any path of the [`DenyList`]: system directories, runtime control sockets, the
//! gateway's own state and config, and the places keys and cloud credentials are kept.
//! Comparisons are component-wise on the plain path and, for denied paths that are links
//! themselves (`/var/run`), on their resolved form too.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::paths::{Walk, expand, plain, walk};
use crate::settings::HostContext;

/// Why a mount source was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MountRefusal {
    /// Neither absolute nor `~`-relative.
    #[error(
        "{path:?} is not an absolute path: write it from `/`, or from `~/` for the gateway \
         user's home (`~user` is not supported)"
    )]
    NotAbsolute {
        /// The path as written.
        path: String,
    },
    /// Has a `..` component.
    #[error(
        "{} contains `..`: write the directory's own path, since what `..` names depends on \
         links",
        path.display()
    )]
    DotDot {
        /// The path after `~` expansion.
        path: PathBuf,
    },
    /// Some component does not exist.
    #[error("{} does not exist ({} is missing)", path.display(), missing.display())]
    Missing {
        /// The path refused.
        path: PathBuf,
        /// Its first missing component.
        missing: PathBuf,
    },
    /// Some component could not be examined.
    #[error("{} cannot be checked: {error}", path.display())]
    Unreadable {
        /// The path refused.
        path: PathBuf,
        /// What `lstat` said.
        error: String,
    },
    /// Some component is a symbolic link.
    #[error(
        "{} is not mounted because {} is a symbolic link: a mount source must be the real \
         directory, with no link in any component, so it cannot be pointed elsewhere after it \
         was checked{}",
        path.display(),
        link.display(),
        real.as_ref().map(|real| format!(" (its real path is {})", real.display())).unwrap_or_default()
    )]
    Symlink {
        /// The path refused.
        path: PathBuf,
        /// Its first component that is a link.
        link: PathBuf,
        /// Where the links lead, when that resolves.
        real: Option<PathBuf>,
    },
    /// A socket, FIFO or device.
    #[error(
        "{} is a {kind}, not a directory or a regular file: a socket or device gives control of \
         whatever is behind it",
        path.display()
    )]
    SpecialFile {
        /// The path refused.
        path: PathBuf,
        /// `socket`, `FIFO`, `character device` or `block device`.
        kind: &'static str,
    },
    /// `/`.
    #[error("/ is the whole host: mounting it would expose every secret and control socket on it")]
    Root,
    /// Is, lies inside or contains a denied path.
    #[error("{} {relation} {}, {why}", path.display(), denied.display())]
    Denied {
        /// The path refused.
        path: PathBuf,
        /// The denied path it meets.
        denied: PathBuf,
        /// How it meets it.
        relation: Relation,
        /// Why that path is denied.
        why: &'static str,
    },
    /// Not inside any allowed root.
    #[error(
        "{} is outside the allowed roots ({roots}): add its directory to `allowedRoots` to \
         allow it",
        path.display()
    )]
    OutsideAllowedRoots {
        /// The path refused.
        path: PathBuf,
        /// The roots in force, comma-separated.
        roots: String,
    },
    /// A volume that is not below the home directory.
    #[error(
        "volume {} is not inside the home directory {}: volumes are the parts of the sandbox's \
         own home that persist (use isolation `home` to keep the whole home)",
        path.display(),
        home.display()
    )]
    VolumeOutsideHome {
        /// The volume, `~` expanded.
        path: PathBuf,
        /// The home directory.
        home: PathBuf,
    },
}

/// How a refused path meets a denied one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The same path.
    Is,
    /// Below it.
    Inside,
    /// Above it: mounting the path would expose the denied one.
    Contains,
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Relation::Is => "is",
            Relation::Inside => "is inside",
            Relation::Contains => "contains",
        })
    }
}

const WHY_SYSTEM: &str = "a system directory: the host's configuration, kernel interfaces and \
                          devices (the sandbox gets its own minimal /proc and /dev and a few \
                          read-only files of /etc)";
const WHY_CONTROL: &str = "where container runtimes and system services keep their control \
                           sockets and state: whoever can reach them controls the host";
const WHY_GATEWAY: &str = "the gateway's own state or configuration: its tokens, approvals \
                           and audit log";
const WHY_CREDENTIALS: &str = "where keys, tokens and cloud credentials are kept";

/// System directories: never mounted, nor anything inside or above them.
const SYSTEM: &[&str] = &["/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/var/run"];

/// Control sockets and state of container runtimes and system services, and the X11 socket
/// directories (a client of an X server can read and inject keystrokes).
const CONTROL: &[&str] = &[
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/crio",
    "/run/libvirt",
    "/run/dbus",
    "/run/systemd",
    "/run/user",
    "/run/snapd.socket",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/var/lib/containers",
    "/var/lib/kubelet",
    "/var/lib/libvirt",
    "/var/lib/lxd",
    "/var/snap/lxd",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
];

/// Below every home directory: where keys, tokens and cloud credentials are kept.
const CREDENTIALS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".config/hub",
    ".config/doctl",
    ".config/op",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".oci",
    ".pgpass",
    ".my.cnf",
    ".pki",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
];

/// A denied path and why.
#[derive(Debug, Clone)]
struct Denied {
    path: PathBuf,
    why: &'static str,
}

/// The paths no mount may be, lie inside or contain.
#[derive(Debug, Clone)]
pub struct DenyList {
    entries: Vec<Denied>,
}

impl DenyList {
    /// The fixed lists, the gateway's data directory and protected files, and the credential
    /// directories of the gateway user's home, `/root` and every directory in `/home`.
    pub fn new(host: &HostContext) -> Self {
        let mut list = DenyList {
            entries: Vec::new(),
        };
        list.add(&host.data_dir, WHY_GATEWAY);
        for path in &host.protected {
            list.add(path, WHY_GATEWAY);
        }
        let mut homes = vec![host.home.clone(), PathBuf::from("/root")];
        if let Ok(entries) = std::fs::read_dir("/home") {
            homes.extend(entries.flatten().map(|entry| entry.path()));
        }
        for home in &homes {
            for below in CREDENTIALS {
                list.add(&home.join(below), WHY_CREDENTIALS);
            }
        }
        for path in CONTROL {
            list.add(Path::new(path), WHY_CONTROL);
        }
        for path in SYSTEM {
            list.add(Path::new(path), WHY_SYSTEM);
        }
        list
    }

    /// Adds `path` as written (made plain) and, when it resolves elsewhere, as resolved.
    fn add(&mut self, path: &Path, why: &'static str) {
        let Ok(written) = plain(path) else {
            return;
        };
        if let Ok(real) = std::fs::canonicalize(&written)
            && real != written
        {
            self.entries.push(Denied { path: real, why });
        }
        self.entries.push(Denied { path: written, why });
    }

    /// The denied path `path` meets, preferring one it is or lies inside over one it
    /// contains (`/run` is a system directory, though it also contains sockets), then list
    /// order: the gateway's own, credentials, control sockets, system directories.
    fn meets(&self, path: &Path) -> Option<(&Denied, Relation)> {
        let relation = |denied: &Denied| {
            if path == denied.path {
                Some(Relation::Is)
            } else if path.starts_with(&denied.path) {
                Some(Relation::Inside)
            } else if denied.path.starts_with(path) {
                Some(Relation::Contains)
            } else {
                None
            }
        };
        let found = self
            .entries
            .iter()
            .filter_map(|denied| relation(denied).map(|how| (denied, how)));
        found
            .clone()
            .find(|(_, how)| *how != Relation::Contains)
            .or_else(|| found.clone().next())
    }
}

/// The allowed roots, `~` expanded and resolved, for [`check_source`].
#[derive(Debug, Clone)]
pub struct AllowedRoots {
    roots: Vec<PathBuf>,
}

impl AllowedRoots {
    /// `allowedRoots` as configured. A root that is not a plain absolute path is refused:
    /// a typo here must not silently allow nothing or everything.
    pub fn new(configured: &[String], home: &Path) -> Result<Self, MountRefusal> {
        let mut roots = Vec::new();
        for raw in configured {
            let root = expand(raw, home)?;
            if let Ok(real) = std::fs::canonicalize(&root)
                && real != root
            {
                roots.push(real);
            }
            roots.push(root);
        }
        Ok(AllowedRoots { roots })
    }

    fn contains(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    fn describe(&self) -> String {
        if self.roots.is_empty() {
            return "none".to_owned();
        }
        let shown: Vec<String> = self
            .roots
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        shown.join(", ")
    }
}

/// Checks one mount source (see the module docs) and returns it plain. `roots` is `None` for
/// sources that are not configured (the autodocs directories, by definition in the home).
pub fn check_source(
    raw: &str,
    home: &Path,
    deny: &DenyList,
    roots: Option<&AllowedRoots>,
) -> Result<PathBuf, MountRefusal> {
    let path = expand(raw, home)?;
    check_plain_source(&path, deny, roots)?;
    Ok(path)
}

/// [`check_source`] for a path already plain and absolute.
pub(crate) fn check_plain_source(
    path: &Path,
    deny: &DenyList,
    roots: Option<&AllowedRoots>,
) -> Result<(), MountRefusal> {
    if path == Path::new("/") {
        return Err(MountRefusal::Root);
    }
    // Named first: `/var/run/docker.sock` is refused as a control socket, not for the link
    // `/var/run` on its way.
    if let Some((denied, relation)) = deny.meets(path) {
        return Err(MountRefusal::Denied {
            path: path.to_path_buf(),
            denied: denied.path.clone(),
            relation,
            why: denied.why,
        });
    }
    let meta = match walk(path) {
        Walk::Plain(meta) => meta,
        Walk::Link(link) => {
            return Err(MountRefusal::Symlink {
                path: path.to_path_buf(),
                link,
                real: std::fs::canonicalize(path).ok(),
            });
        }
        Walk::Missing(missing) => {
            return Err(MountRefusal::Missing {
                path: path.to_path_buf(),
                missing,
            });
        }
        Walk::Unreadable(_, error) => {
            return Err(MountRefusal::Unreadable {
                path: path.to_path_buf(),
                error: error.to_string(),
            });
        }
    };
    if let Some(kind) = special_kind(&meta) {
        return Err(MountRefusal::SpecialFile {
            path: path.to_path_buf(),
            kind,
        });
    }
    if let Some(roots) = roots
        && !roots.contains(path)
    {
        return Err(MountRefusal::OutsideAllowedRoots {
            path: path.to_path_buf(),
            roots: roots.describe(),
        });
    }
    Ok(())
}

fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_dir() || kind.is_file() {
        None
    } else if kind.is_socket() {
        Some("socket")
    } else if kind.is_fifo() {
        Some("FIFO")
    } else if kind.is_char_device() {
        Some("character device")
    } else if kind.is_block_device() {
        Some("block device")
    } else {
        Some("special file")
    }
}

#[cfg(test)]
mod tests;
