//! What the walk learns about one path, from `lstat` or, on the fast path, from a single
//! `openat2` that proves the whole path holds no symlink.

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The kind of file a path names (never following a final symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

/// The facts the checks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Examined {
    pub(crate) kind: Kind,
    pub(crate) nlink: u64,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
}

impl From<&Metadata> for Examined {
    fn from(metadata: &Metadata) -> Self {
        let t = metadata.file_type();
        let kind = if t.is_symlink() {
            Kind::Symlink
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else if t.is_fifo() {
            Kind::Fifo
        } else if t.is_socket() {
            Kind::Socket
        } else if t.is_char_device() {
            Kind::CharDevice
        } else if t.is_block_device() {
            Kind::BlockDevice
        } else {
            Kind::Other
        };
        Examined {
            kind,
            nlink: metadata.nlink(),
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.len(),
        }
    }
}

/// `lstat`.
pub(crate) fn lstat(path: &Path) -> io::Result<Examined> {
    std::fs::symlink_metadata(path).map(|m| Examined::from(&m))
}

/// The file at `path` (absolute and plain: no `.`, `..` or doubled `/`), if the kernel reaches
/// it through no symlink at all, final component included. One `openat2` with
/// `RESOLVE_NO_SYMLINKS` replaces an `lstat` per component, each of which walks the whole
/// prefix again; anything else (a symlink on the way, a missing file, an old kernel) answers
/// `None` and the caller walks component by component, so the answer never differs, only its
/// cost.
#[cfg(target_os = "linux")]
pub(crate) fn without_symlinks(path: &Path) -> Option<Examined> {
    use rustix::fs::{CWD, FileType, Mode, OFlags, ResolveFlags, fstat, openat2};

    let fd = openat2(
        CWD,
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .ok()?;
    let stat = fstat(&fd).ok()?;
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        // `O_NOFOLLOW | O_PATH` opens a final symlink itself: the walk follows it.
        FileType::Symlink => return None,
        FileType::Fifo => Kind::Fifo,
        FileType::Socket => Kind::Socket,
        FileType::CharacterDevice => Kind::CharDevice,
        FileType::BlockDevice => Kind::BlockDevice,
        FileType::Unknown => Kind::Other,
    };
    #[allow(
        clippy::useless_conversion,
        reason = "st_nlink is u32 on some Linux targets"
    )]
    let nlink = u64::from(stat.st_nlink);
    Some(Examined {
        kind,
        nlink,
        dev: stat.st_dev,
        ino: stat.st_ino,
        size: u64::try_from(stat.st_size).unwrap_or(u64::MAX),
    })
}

/// Elsewhere the walk always goes component by component.
#[cfg(not(target_os = "linux"))]
pub(crate) fn without_symlinks(_path: &Path) -> Option<Examined> {
    None
}
