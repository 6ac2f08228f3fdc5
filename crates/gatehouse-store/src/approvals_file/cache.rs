//! Re-reading `exec-approvals.json` only when it changed.
//!
//! The gateway reads the file on every request so an edit applies at once; reading, hashing and
//! parsing it is a measurable share of an approval's cost. One `stat` tells whether the file is
//! still the version already parsed: same device, inode, size, mode and change times. Our own
//! writes replace the file (a new inode); an editor's in-place write changes the times. The one
//! blind spot, two writes of the same size within one tick of the file system's clock, is closed
//! as git closes its "racily clean" index entries: a version is only remembered once its last
//! change is [`SETTLE`] in the past, so any later change carries a different time.
//!
//! A document on a shared store needs no `stat`: the store hands out each version it hears of
//! as a new allocation, so a pointer comparison tells whether it was parsed already.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::store::{ExecApprovalsStore, Snapshot};
use crate::error::StoreError;

/// How long after its last change a version of the file may be remembered.
pub const SETTLE: Duration = Duration::from_secs(2);

/// What distinguishes one version of the file on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version {
    device: u64,
    inode: u64,
    len: u64,
    mode: u32,
    modified_ns: i128,
    changed_ns: i128,
}

/// The last settled version read, shared by every request.
#[derive(Debug, Default)]
pub struct SnapshotCache {
    last: Mutex<Option<(Version, Arc<Snapshot>)>>,
    /// On a shared store: the bytes last parsed (compared by pointer: the store hands out a
    /// new allocation for each version) and their snapshot.
    last_shared: Mutex<Option<ParsedVersion>>,
}

/// A shared document's bytes and the snapshot parsed from them.
type ParsedVersion = (Arc<[u8]>, Arc<Snapshot>);

impl SnapshotCache {
    /// An empty cache: the first read parses the file.
    pub fn new() -> Self {
        SnapshotCache::default()
    }

    /// The file as [`ExecApprovalsStore::read`] would return it, parsed again only when it
    /// changed. `now` is the caller's clock, for the settle rule. Shared, not copied: callers
    /// may key what they derive from a version on the `Arc` itself ([`Arc::ptr_eq`]), since
    /// every re-read returns a new one.
    pub fn read(
        &self,
        store: &ExecApprovalsStore,
        now: SystemTime,
    ) -> Result<Arc<Snapshot>, StoreError> {
        if let Some(bytes) = store.shared_bytes() {
            return self.read_shared(store, bytes);
        }
        let path = store.path();
        let before = version_of(path)?;
        if let Some(version) = before {
            let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((known, snapshot)) = last.as_ref()
                && *known == version
            {
                return Ok(Arc::clone(snapshot));
            }
        }
        let snapshot = Arc::new(store.read()?);
        // Remember it only if nothing changed while it was read and it has settled.
        if let Some(version) = before
            && version_of(path)? == Some(version)
            && settled(version, now)
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            *last = Some((version, Arc::clone(&snapshot)));
        }
        Ok(snapshot)
    }
}

impl SnapshotCache {
    /// A shared document's version as a snapshot, parsed once per version.
    fn read_shared(
        &self,
        store: &ExecApprovalsStore,
        bytes: Option<Arc<[u8]>>,
    ) -> Result<Arc<Snapshot>, StoreError> {
        let Some(bytes) = bytes else {
            return Ok(Arc::new(store.read()?));
        };
        let mut last = self
            .last_shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((known, snapshot)) = last.as_ref()
            && Arc::ptr_eq(known, &bytes)
        {
            return Ok(Arc::clone(snapshot));
        }
        let snapshot = Arc::new(store.snapshot_of(&bytes)?);
        *last = Some((bytes, Arc::clone(&snapshot)));
        Ok(snapshot)
    }
}

fn version_of(path: &Path) -> Result<Option<Version>, StoreError> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(Version {
            device: meta.dev(),
            inode: meta.ino(),
            len: meta.len(),
            mode: meta.mode(),
            modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            changed_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        })),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io(path, "stat", error)),
    }
}

/// Whether both change times are at least [`SETTLE`] before `now`.
fn settled(version: Version, now: SystemTime) -> bool {
    let Ok(now) = now.duration_since(UNIX_EPOCH) else {
        return false;
    };
    let cutoff = i128::try_from(now.as_nanos()).unwrap_or(i128::MAX)
        - i128::try_from(SETTLE.as_nanos()).unwrap_or(i128::MAX);
    version.modified_ns <= cutoff && version.changed_ns <= cutoff
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::time::Duration;

    use super::*;

    const ONE: &str = r#"{"version":1,"defaults":{"security":"allowlist"}}"#;
    const TWO: &str = r#"{"version":1,"defaults":{"security":"deny"}}"#;

    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    #[test]
    fn sees_a_replaced_file_and_an_in_place_edit_of_the_same_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exec-approvals.json");
        std::fs::write(&path, ONE).unwrap();
        let store = ExecApprovalsStore::new(&path);
        let cache = SnapshotCache::new();
        let first = cache.read(&store, later()).unwrap();
        assert!(Arc::ptr_eq(&cache.read(&store, later()).unwrap(), &first));

        // Replaced, as our own writes do: a new inode.
        let temporary = dir.path().join("tmp.json");
        std::fs::write(&temporary, TWO).unwrap();
        std::fs::rename(&temporary, &path).unwrap();
        let replaced = cache.read(&store, later()).unwrap();
        assert_ne!(replaced.hash, first.hash);

        // Rewritten in place with the same length: the change time moves.
        std::thread::sleep(Duration::from_millis(20));
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all(ONE.replace("allowlist", "allowlisT").as_bytes())
            .unwrap();
        drop(file);
        let edited = cache.read(&store, later()).unwrap();
        assert_ne!(edited.hash, replaced.hash);
    }

    #[test]
    fn does_not_remember_a_version_changed_within_the_settle_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exec-approvals.json");
        std::fs::write(&path, ONE).unwrap();
        let store = ExecApprovalsStore::new(&path);
        let cache = SnapshotCache::new();
        cache.read(&store, SystemTime::now()).unwrap();
        assert!(cache.last.lock().unwrap().is_none());
        cache.read(&store, later()).unwrap();
        assert!(cache.last.lock().unwrap().is_some());
    }

    #[test]
    fn reads_a_missing_file_as_the_default_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = ExecApprovalsStore::new(dir.path().join("absent.json"));
        let cache = SnapshotCache::new();
        assert!(!cache.read(&store, later()).unwrap().exists);
        assert!(cache.last.lock().unwrap().is_none());
    }
}
