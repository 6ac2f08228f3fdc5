//! Crash-safe replacement of a small private file another crate owns the format of (the
//! gateway's `sessions.json`), with the same guarantees as `exec-approvals.json`'s writes.

use std::path::Path;

use crate::durable_fs;
use crate::error::StoreError;

/// Replaces `path` with `bytes`: a 0600 temp file, fsynced, renamed over the destination, then
/// the directory fsynced, under the file's inter-process lock. A crash leaves the old bytes or
/// the new ones, never a mix; a symlink or non-file at `path` is refused, not followed.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let lock = durable_fs::lock_exclusive(path)?;
    durable_fs::replace_atomically(path, bytes, &lock)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn replaces_a_file_with_mode_0600_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        replace(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["state.json", "state.json.lock"]);
    }

    #[test]
    fn refuses_a_symlink_at_the_destination() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep").unwrap();
        let path = dir.path().join("state.json");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let error = replace(&path, b"new").unwrap_err();
        assert!(
            matches!(error, StoreError::UnsafeDestination { .. }),
            "{error}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }
}
