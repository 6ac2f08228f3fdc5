//! Whether a path names a program file on disk, rather than stdin or a device in disguise.
//!
//! `/dev/stdin`, `/dev/fd/0` and `/proc/self/fd/0` lead through `/proc`'s fd links ("magic
//! links"), which jump to whatever the opening process holds open. A symlink pointing at them,
//! or a working directory of `/dev`, makes an innocent name (`stdin`, `fd/0`, `s`) mean "the
//! program is what the previous command printed", which no check of the text can see. So the
//! kernel resolves the path with magic links refused, and the file must be a regular file
//! outside `/dev` and `/proc`.

use std::path::{Path, PathBuf};

/// What a path turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FileKind {
    /// Nothing there.
    Missing,
    /// A regular file on disk, with its real path.
    Plain(PathBuf),
    /// Something else: a directory, a device, a `/proc` file, a path through an fd link, or
    /// one that could not be examined.
    Other,
}

/// Classifies `path` (absolute; relative paths are taken from the process's own directory,
/// which is never what a request means).
pub(super) fn classify(path: &Path) -> FileKind {
    match regular_without_magic_links(path) {
        Some(Reached::Regular) => {}
        Some(Reached::Missing) => return FileKind::Missing,
        Some(Reached::Other) => return FileKind::Other,
        None => return fallback(path),
    }
    match std::fs::canonicalize(path) {
        Ok(real) if !under_dev_or_proc(&real) => FileKind::Plain(real),
        _ => FileKind::Other,
    }
}

enum Reached {
    Regular,
    Missing,
    Other,
}

/// `None` when the kernel cannot be asked (no `openat2`, before Linux 5.6).
#[cfg(target_os = "linux")]
fn regular_without_magic_links(path: &Path) -> Option<Reached> {
    use rustix::fs::{CWD, FileType, Mode, OFlags, ResolveFlags, fstat, openat2};
    use rustix::io::Errno;

    let opened = openat2(
        CWD,
        path,
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_MAGICLINKS,
    );
    Some(match opened {
        Ok(fd) => match fstat(&fd) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile => {
                Reached::Regular
            }
            _ => Reached::Other,
        },
        Err(Errno::NOENT | Errno::NOTDIR) => Reached::Missing,
        Err(Errno::NOSYS | Errno::INVAL | Errno::PERM) => return None,
        // `ELOOP` is a magic link on the way (or a symlink loop); anything else cannot be told.
        Err(_) => Reached::Other,
    })
}

#[cfg(not(target_os = "linux"))]
fn regular_without_magic_links(_path: &Path) -> Option<Reached> {
    None
}

/// Without `openat2` a symlink to an fd link is seen only when it resolves outside a regular
/// file (a pipe or a terminal, as a piped program's stdin is); `canonicalize` cannot say
/// whether it passed through one.
fn fallback(path: &Path) -> FileKind {
    match std::fs::canonicalize(path) {
        Ok(real) if real.is_file() && !under_dev_or_proc(&real) => FileKind::Plain(real),
        Ok(_) => FileKind::Other,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => FileKind::Missing,
        Err(_) => FileKind::Other,
    }
}

fn under_dev_or_proc(real: &Path) -> bool {
    real.starts_with("/dev") || real.starts_with("/proc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_only_regular_files_outside_dev_and_proc() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let script = root.join("app.js");
        std::fs::write(&script, "").unwrap();
        std::os::unix::fs::symlink(&script, root.join("linked.js")).unwrap();
        std::os::unix::fs::symlink("/dev/stdin", root.join("s")).unwrap();
        std::os::unix::fs::symlink("/proc/self/fd/0", root.join("fd0")).unwrap();

        assert_eq!(classify(&script), FileKind::Plain(script.clone()));
        assert_eq!(classify(&root.join("linked.js")), FileKind::Plain(script));
        assert_eq!(classify(&root.join("absent.js")), FileKind::Missing);
        for other in [
            root.clone(),
            root.join("s"),
            root.join("fd0"),
            PathBuf::from("/dev/stdin"),
            PathBuf::from("/dev/fd/0"),
            PathBuf::from("/dev/null"),
            PathBuf::from("/proc/self/environ"),
            PathBuf::from("/proc/self/root/etc/hostname"),
        ] {
            assert_eq!(classify(&other), FileKind::Other, "{}", other.display());
        }
    }
}
