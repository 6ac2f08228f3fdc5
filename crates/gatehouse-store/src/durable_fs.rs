//! Crash-safe file replacement and the inter-process lock that serializes it.
//!
//! A replacement writes a temporary file in the destination's directory (mode 0600), fsyncs it,
//! renames it over the destination and fsyncs the directory. A reader therefore sees the old or
//! the new bytes, never a mix, even if the writer is killed at any instruction. Writers hold an
//! exclusive `flock` on a sibling `.lock` file, which the kernel releases when a process dies, so
//! a crashed writer can never wedge the others.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::{
    DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{FlockOperation, flock};

use crate::error::StoreError;

/// Permission bits for every file this crate creates: they may hold secrets.
pub(crate) const PRIVATE_FILE_MODE: u32 = 0o600;
const PRIVATE_DIR_MODE: u32 = 0o700;

/// Held while a process reads, merges and replaces a file; released on drop or process death.
#[derive(Debug)]
pub(crate) struct WriteLock {
    _file: File,
    /// Destinations whose stale temp files this holder has removed. No writer can leave a new
    /// one while the lock is held, so once per destination is enough; the audit log holds its
    /// lock for the process's life and replaces its head every few milliseconds, beside rotated
    /// files that only accumulate.
    swept: Mutex<Vec<PathBuf>>,
}

impl WriteLock {
    /// `true` the first time `path` is replaced under this lock.
    fn first_replace_of(&self, path: &Path) -> bool {
        let mut swept = self.swept.lock().unwrap_or_else(PoisonError::into_inner);
        if swept.iter().any(|done| done == path) {
            return false;
        }
        swept.push(path.to_path_buf());
        true
    }
}

/// The lock file guarding `path`: `<path>.lock`. It is never deleted, because deleting a lock
/// file that another process is about to lock would let two writers in at once.
pub(crate) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(OsString::from).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

/// Blocks until this process holds the write lock for `path`.
pub(crate) fn lock_exclusive(path: &Path) -> Result<WriteLock, StoreError> {
    let lock = lock_path(path);
    let file = open_private(&lock)?;
    loop {
        match flock(&file, FlockOperation::LockExclusive) {
            Ok(()) => {
                return Ok(WriteLock {
                    _file: file,
                    swept: Mutex::default(),
                });
            }
            Err(rustix::io::Errno::INTR) => continue,
            Err(errno) => return Err(StoreError::io(&lock, "lock", errno.into())),
        }
    }
}

/// Opens a file this crate owns for reading and writing, creating it (and its directory) when
/// missing, and forces mode 0600 so it is private from its first byte and after any chmod.
pub(crate) fn open_private(path: &Path) -> Result<File, StoreError> {
    ensure_parent_dir(path)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(PRIVATE_FILE_MODE)
        .open(path)
        .map_err(|e| StoreError::io(path, "open", e))?;
    file.set_permissions(fs::Permissions::from_mode(PRIVATE_FILE_MODE))
        .map_err(|e| StoreError::io(path, "chmod 600", e))?;
    Ok(file)
}

/// The file's bytes, or `None` when it does not exist.
pub(crate) fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, "read", e)),
    }
}

/// Permission bits of an existing file, or `None` when it does not exist.
pub(crate) fn file_mode(path: &Path) -> Result<Option<u32>, StoreError> {
    match fs::metadata(path) {
        Ok(meta) => Ok(Some(meta.mode() & 0o777)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, "stat", e)),
    }
}

/// Opens `path` with `options`, never through a symlink: a link where one of this crate's
/// files belongs is refused as [`StoreError::UnsafeDestination`] rather than followed.
pub(crate) fn open_no_follow(options: &mut OpenOptions, path: &Path) -> Result<File, StoreError> {
    options
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                StoreError::UnsafeDestination {
                    path: path.to_path_buf(),
                }
            } else {
                StoreError::io(path, "open", e)
            }
        })
}

/// Replaces `path` with `bytes` atomically and durably. The caller must hold [`WriteLock`].
pub(crate) fn replace_atomically(
    path: &Path,
    bytes: &[u8],
    lock: &WriteLock,
) -> Result<(), StoreError> {
    refuse_unsafe_destination(path)?;
    let dir = ensure_parent_dir(path)?;
    if lock.first_replace_of(path) {
        remove_stale_temp_files(path, &dir);
    }
    let temp = temp_path(path);
    let result = write_temp_and_rename(&temp, path, bytes);
    if result.is_err() {
        // Best effort: the temp file is ours and holds nothing the destination does not.
        let _ = fs::remove_file(&temp);
    }
    result?;
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(&dir, "fsync directory", e))
}

fn write_temp_and_rename(temp: &Path, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .open(temp)
        .map_err(|e| StoreError::io(temp, "create temp file", e))?;
    file.set_permissions(fs::Permissions::from_mode(PRIVATE_FILE_MODE))
        .map_err(|e| StoreError::io(temp, "chmod temp file", e))?;
    file.write_all(bytes)
        .map_err(|e| StoreError::io(temp, "write temp file", e))?;
    file.sync_all()
        .map_err(|e| StoreError::io(temp, "fsync temp file", e))?;
    drop(file);
    fs::rename(temp, path).map_err(|e| StoreError::io(path, "rename", e))
}

/// A symlink at the destination would make the rename replace the link, silently detaching the
/// file the operator edits from the one Gatehouse reads.
fn refuse_unsafe_destination(path: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_file() => {
            Err(StoreError::UnsafeDestination {
                path: path.to_path_buf(),
            })
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::io(path, "stat", e)),
    }
}

/// Creates the parent directory (0700) when missing and returns it.
pub(crate) fn ensure_parent_dir(path: &Path) -> Result<PathBuf, StoreError> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(PRIVATE_DIR_MODE)
            .create(&dir)
            .map_err(|e| StoreError::io(&dir, "create directory", e))?;
    }
    Ok(dir)
}

fn temp_prefix(path: &Path) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".");
    prefix
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = temp_prefix(path);
    name.push(format!(
        "{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    path.with_file_name(name)
}

/// Temp files left by a writer killed before its rename. Only called under the write lock, when
/// no live writer can own one, and once per hold of it (see [`WriteLock`]).
fn remove_stale_temp_files(path: &Path, dir: &Path) {
    let prefix = temp_prefix(path);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_ours = name
            .as_encoded_bytes()
            .starts_with(prefix.as_encoded_bytes())
            && name.as_encoded_bytes().ends_with(b".tmp");
        if is_ours {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_with_mode_0600_and_clears_stale_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let stale = dir.path().join(".state.json.1.dead.tmp");
        fs::write(&stale, b"half").unwrap();
        let lock = lock_exclusive(&path).unwrap();
        replace_atomically(&path, b"new", &lock).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(file_mode(&path).unwrap(), Some(PRIVATE_FILE_MODE));
        assert!(!stale.exists());
        assert_eq!(
            file_mode(&lock_path(&path)).unwrap(),
            Some(PRIVATE_FILE_MODE)
        );
    }

    #[test]
    fn sweeps_stale_temp_files_once_per_lock_not_on_every_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let stale = dir.path().join(".state.json.1.dead.tmp");
        let lock = lock_exclusive(&path).unwrap();
        replace_atomically(&path, b"one", &lock).unwrap();
        // Only a writer without the lock could leave this now; planted, it shows whether the
        // directory is scanned again.
        fs::write(&stale, b"half").unwrap();
        replace_atomically(&path, b"two", &lock).unwrap();
        assert!(
            stale.exists(),
            "a second replace under the same lock does not scan"
        );
        drop(lock);

        let lock = lock_exclusive(&path).unwrap();
        replace_atomically(&path, b"three", &lock).unwrap();
        assert!(!stale.exists(), "the next holder sweeps");
        assert_eq!(fs::read(&path).unwrap(), b"three");
    }

    #[test]
    fn names_the_lock_beside_the_file() {
        assert_eq!(
            lock_path(Path::new("/s/exec-approvals.json")),
            Path::new("/s/exec-approvals.json.lock")
        );
    }
}
