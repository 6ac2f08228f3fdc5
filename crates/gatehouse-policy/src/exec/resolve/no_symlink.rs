//! One-call `PATH` lookup that also proves the path holds no symlink.
//!
//! A path system call costs about a microsecond here, which is most of an evaluation. For the
//! common case, a plain executable under a directory with no symlinks on the way, a single
//! `openat2(RESOLVE_NO_SYMLINKS)` answers both "is it there" and "is this already its real
//! path", where `lstat` plus `realpath` pay one call per path component. Anything else (a
//! symlink, an unusual path, an old kernel) says [`Lookup::Unknown`] and the caller takes the
//! general route, so the answer never differs, only its cost.

use std::path::{Component, Path};

/// What one lookup established.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lookup {
    /// Nothing by that name: the search goes on to the next `PATH` directory.
    Missing,
    /// Present, with no symlink on the path, so the path as written is its real path.
    NoSymlinks {
        /// A regular file some execute bit allows.
        executable: bool,
    },
    /// Not decided here; the caller resolves it the general way.
    Unknown,
}

/// Looks `path` up without following any symlink.
#[cfg(target_os = "linux")]
pub(super) fn lookup(path: &Path) -> Lookup {
    use rustix::fs::{CWD, FileType, Mode, OFlags, ResolveFlags, fstat, openat2};
    use rustix::io::Errno;

    if !is_plain_absolute(path) {
        return Lookup::Unknown;
    }
    let opened = openat2(
        CWD,
        path,
        // No `O_NOFOLLOW`: with it a trailing symlink would be opened as itself instead
        // of refused.
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    );
    match opened {
        Ok(fd) => match fstat(&fd) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => Lookup::Unknown,
                kind => Lookup::NoSymlinks {
                    executable: kind == FileType::RegularFile && stat.st_mode & 0o111 != 0,
                },
            },
            Err(_) => Lookup::Unknown,
        },
        // Resolution stops at the first symlink with `ELOOP`, so a missing component met
        // before any symlink means the name truly is not there.
        Err(Errno::NOENT | Errno::NOTDIR) => Lookup::Missing,
        Err(_) => Lookup::Unknown,
    }
}

/// Elsewhere every lookup takes the general route.
#[cfg(not(target_os = "linux"))]
pub(super) fn lookup(_path: &Path) -> Lookup {
    Lookup::Unknown
}

/// Absolute, with no `.`, `..`, doubled or trailing separator: only then is a symlink-free
/// path character for character its real path.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn is_plain_absolute(path: &Path) -> bool {
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return false;
    }
    let mut rebuilt_len = 0;
    for component in components {
        match component {
            Component::Normal(name) => rebuilt_len += 1 + name.len(),
            _ => return false,
        }
    }
    rebuilt_len == path.as_os_str().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_plain_absolute_paths() {
        assert!(is_plain_absolute(Path::new("/usr/bin/git")));
        for odd in [
            "usr/bin/git",
            "/usr//bin/git",
            "/usr/./bin/git",
            "/usr/../bin/git",
            "/usr/bin/git/",
            "/",
        ] {
            assert!(!is_plain_absolute(Path::new(odd)), "{odd}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn tells_a_symlink_anywhere_on_the_path_from_a_plain_file() {
        use std::os::unix::fs::{PermissionsExt, symlink};

        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let bin = root.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = bin.join("data");
        std::fs::write(&data, "").unwrap();
        symlink(&bin, root.join("linked-bin")).unwrap();
        symlink(&tool, bin.join("tool-link")).unwrap();

        assert_eq!(lookup(&tool), Lookup::NoSymlinks { executable: true });
        assert_eq!(lookup(&data), Lookup::NoSymlinks { executable: false });
        assert_eq!(lookup(&bin.join("absent")), Lookup::Missing);
        assert_eq!(lookup(&root.join("linked-bin/tool")), Lookup::Unknown);
        assert_eq!(lookup(&bin.join("tool-link")), Lookup::Unknown);
        assert_eq!(lookup(&root.join("bin/../bin/tool")), Lookup::Unknown);
    }
}
