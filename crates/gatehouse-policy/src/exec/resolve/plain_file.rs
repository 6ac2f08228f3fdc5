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
    /// A directory on disk (`node .` runs its package, `python3 dir` its `__main__.py`).
    Directory,
    /// Something else: a device, a fifo, a `/proc` file, a path through an fd link, or one
    /// that could not be examined.
    Other,
}

/// Classifies `path` (absolute; relative paths are taken from the process's own directory,
/// which is never what a request means).
pub(super) fn classify(path: &Path) -> FileKind {
    let reached = match regular_without_magic_links(path) {
        Some(Reached::Missing) => return FileKind::Missing,
        Some(Reached::Other) => return FileKind::Other,
        Some(reached) => reached,
        None => return fallback(path),
    };
    match (std::fs::canonicalize(path), reached) {
        (Ok(real), _) if under_dev_or_proc(&real) => FileKind::Other,
        (Ok(real), Reached::Regular) => FileKind::Plain(real),
        (Ok(_), Reached::Directory) => FileKind::Directory,
        _ => FileKind::Other,
    }
}

enum Reached {
    Regular,
    Directory,
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
        Ok(fd) => match fstat(&fd).map(|stat| FileType::from_raw_mode(stat.st_mode)) {
            Ok(FileType::RegularFile) => Reached::Regular,
            Ok(FileType::Directory) => Reached::Directory,
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
        Ok(real) if under_dev_or_proc(&real) => FileKind::Other,
        Ok(real) if real.is_file() => FileKind::Plain(real),
        Ok(real) if real.is_dir() => FileKind::Directory,
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
        let fifo = root.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();

        assert_eq!(classify(&script), FileKind::Plain(script.clone()));
        assert_eq!(classify(&root.join("linked.js")), FileKind::Plain(script));
        assert_eq!(classify(&root.join("absent.js")), FileKind::Missing);
        assert_eq!(classify(&root), FileKind::Directory);
        for other in [
            fifo,
            root.join("s"),
            root.join("fd0"),
            PathBuf::from("/dev/stdin"),
            PathBuf::from("/dev/fd/0"),
            PathBuf::from("/dev/null"),
            PathBuf::from("/dev/fd/"),
            PathBuf::from("/dev"),
            PathBuf::from("/proc/self/environ"),
            PathBuf::from("/proc/self/root/etc/hostname"),
        ] {
            assert_eq!(classify(&other), FileKind::Other, "{}", other.display());
        }
    }
}
