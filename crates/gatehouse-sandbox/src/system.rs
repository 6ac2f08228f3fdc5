//! The part of the host every sandbox sees, read-only: the programs and libraries under
//! `/usr` (and `/bin`, `/sbin`, `/lib*`, as links or directories, as the host has them), a
//! short list of files from `/etc`, a private `/proc`, `/dev` and `/tmp`.
//!
//! `/etc` is not mounted whole: it holds `/etc/shadow`, TLS private keys, service credentials
//! and the gateway's own config under a typical install (`/etc/gatehouse`). Only what programs
//! need to run, resolve names, check certificates and read the time zone is exposed.

use std::path::{Path, PathBuf};

use crate::layout::{Mount, MountKind, MountRole};

/// The top-level system directories, mounted as the host has them: a directory is bound
/// read-only, a link (merged `/usr`) is recreated as the same link.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The files and directories of `/etc` a sandboxed program may read: what non-interactive
/// programs need to run, resolve names, check certificates and read the time zone. Kept
/// short on purpose: each read-only bind costs bubblewrap a mount and a pass over the mount
/// table, about a third of a millisecond each here, on every run.
const ETC_ENTRIES: &[&str] = &[
    // Users, groups and name lookup.
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/services",
    // The dynamic loader's cache (without it the loader searches the default directories).
    "/etc/ld.so.cache",
    // Certificates (the trust store, not keys).
    "/etc/ssl/certs",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust",
    // Debian's alternatives (`/usr/bin/awk` is a link through here).
    "/etc/alternatives",
    // The time zone and what system this is (usually links into `/usr`).
    "/etc/localtime",
    "/etc/os-release",
];

/// The system mounts for this host, in order. A missing optional directory or `/etc` entry is
/// left out, so the layout describes what is really there.
pub(crate) fn system_mounts() -> Vec<Mount> {
    let mut mounts = Vec::new();
    for dir in SYSTEM_DIRS {
        let path = Path::new(dir);
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let kind = if meta.file_type().is_symlink() {
            match std::fs::read_link(path) {
                Ok(target) => MountKind::Symlink { target },
                Err(_) => continue,
            }
        } else if meta.is_dir() {
            read_only(path)
        } else {
            continue;
        };
        mounts.push(Mount {
            dest: path.to_path_buf(),
            kind,
            role: MountRole::System,
        });
    }
    for entry in ETC_ENTRIES {
        let path = Path::new(entry);
        // Existence through links: `/etc/resolv.conf` often points into `/run`, which is not
        // mounted, and bubblewrap binds what the link leads to.
        if !path.exists() {
            continue;
        }
        // A link into the system directories is recreated as the same link, which costs no
        // mount.
        let into_system = std::fs::canonicalize(path).is_ok_and(|real| is_system_visible(&real));
        let kind = match std::fs::read_link(path) {
            Ok(target) if into_system => MountKind::Symlink { target },
            _ => read_only(path),
        };
        mounts.push(Mount {
            dest: path.to_path_buf(),
            kind,
            role: MountRole::Etc,
        });
    }
    for (dest, kind) in [
        ("/proc", MountKind::Proc),
        ("/dev", MountKind::Dev),
        ("/tmp", MountKind::Tmpfs),
    ] {
        mounts.push(Mount {
            dest: PathBuf::from(dest),
            kind,
            role: MountRole::System,
        });
    }
    mounts
}

fn read_only(path: &Path) -> MountKind {
    MountKind::Bind {
        source: path.to_path_buf(),
        writable: false,
    }
}

/// Whether `path` is inside a system directory every sandbox already sees read-only, so an
/// extra path there needs no mount of its own.
pub(crate) fn is_system_visible(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|dir| path.starts_with(dir))
}

/// The `PATH` a sandboxed run starts with, before `extraPaths`.
pub(crate) const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
