//! Reading and writing `exec-approvals.json` on disk.
//!
//! Every write is a compare-and-swap on the file's bytes: it runs under the inter-process write
//! lock, re-reads the file, and proceeds only if the bytes are the ones the change was based on
//! (their sha256, the `baseHash`). Merging writers (allowlist additions, hit records) re-read and
//! apply their change under the same lock, so they never lose an edit made meanwhile.
//!
//! On a database several gateways share, the same document is a row of the
//! [`DocumentStore`] instead (docs/exec-approvals-file.md, "On PostgreSQL"): the same bytes, the
//! same hash, and the same compare-and-swap, made by the store's conditional write instead of
//! the file lock; reads come from the copy the store keeps current.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gatehouse_approvals::{ALLOW_ALWAYS_SOURCE, AllowlistStore, DocumentBytes, DocumentStore};
use serde::Serialize;
use tokio::sync::watch;

use super::model::{AllowlistEntry, AllowlistItem, ExecApprovalsFile, SocketConfig};
use super::parse::{LoadNote, LoadReport, parse_str};
use super::token::{REDACTED_TOKEN, SocketToken};
use crate::durable_fs::{self, WriteLock};
use crate::error::StoreError;

/// The socket file name OpenClaw places beside `exec-approvals.json`.
const DEFAULT_SOCKET_NAME: &str = "exec-approvals.sock";

/// The name of the exec approvals document in a shared [`DocumentStore`].
pub const EXEC_APPROVALS_DOCUMENT: &str = "exec-approvals.json";

/// How [`Snapshot::path`] and errors name the document when a shared store holds it.
const SHARED_ORIGIN: &str = "database:exec-approvals.json";

/// Handle on one `exec-approvals.json`, a file or a shared document. Cheap; holds no open file.
#[derive(Debug, Clone)]
pub struct ExecApprovalsStore {
    /// The file; on a shared store, where the socket path defaults beside.
    path: PathBuf,
    shared: Option<Shared>,
}

/// The document in a store several gateways share, and its copy the store keeps current.
#[derive(Debug, Clone)]
struct Shared {
    documents: Arc<dyn DocumentStore>,
    current: watch::Receiver<DocumentBytes>,
}

/// The file as read, with the hash a later write must present as its `baseHash`.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The file read.
    pub path: PathBuf,
    /// False when there was no file (the model is then the empty default).
    pub exists: bool,
    /// The normalized model.
    pub file: ExecApprovalsFile,
    /// sha256 hex of the bytes read (of the empty string when the file is missing).
    pub hash: String,
    /// What loading changed or did not understand, and loose permissions.
    pub report: LoadReport,
}

/// The file as a client may see it: the socket token replaced by [`REDACTED_TOKEN`].
#[derive(Debug, Clone, PartialEq)]
pub struct RedactedSnapshot {
    /// The model with the token redacted. Writing it back keeps the stored token.
    pub file: ExecApprovalsFile,
    /// The `baseHash` to send with a write based on this view.
    pub hash: String,
    /// False when there was no file.
    pub exists: bool,
}

/// Whether an allowlist addition changed the file: `gatehouse-approvals`' answer to an
/// allow-always write, which this file is the store of.
pub use gatehouse_approvals::AddedEntry;

/// What [`ExecApprovalsStore::import_local_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Import {
    /// The store is this host's file: there is nothing to import.
    NotShared,
    /// The shared store already had the document; this host's file is not read.
    AlreadyShared,
    /// This host's file became the shared document.
    Imported,
    /// Neither exists yet; the document starts empty.
    NoLocalFile,
}

/// One use of an allowlist entry, to be recorded on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllowlistHit<'a> {
    /// The pattern of the entry that matched.
    pub pattern: &'a str,
    /// Its `argPattern`, if any.
    pub arg_pattern: Option<&'a str>,
    /// When the command ran (ms since the Unix epoch; the caller owns the clock).
    pub used_at_ms: u64,
    /// The command text that ran.
    pub command: &'a str,
    /// The executable it resolved to.
    pub resolved_path: Option<&'a str>,
}

/// A new allowlist entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewAllowlistEntry<'a> {
    /// The pattern (trimmed before storing).
    pub pattern: &'a str,
    /// Optional argument pattern.
    pub arg_pattern: Option<&'a str>,
    /// `Some("allow-always")` when a person's decision adds it.
    pub source: Option<&'a str>,
    /// When it was added (ms since the Unix epoch), stored as `lastUsedAt` as OpenClaw does.
    pub now_ms: u64,
}

impl ExecApprovalsStore {
    /// A handle on the file at `path`; nothing is read yet.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ExecApprovalsStore {
            path: path.into(),
            shared: None,
        }
    }

    /// A handle on the document [`EXEC_APPROVALS_DOCUMENT`] in `documents`, which several
    /// gateways share; `path` is this host's file, beside which the socket path defaults.
    /// Blocking: reads the document once, then follows it.
    pub fn shared(
        path: impl Into<PathBuf>,
        documents: Arc<dyn DocumentStore>,
    ) -> Result<Self, StoreError> {
        let current = documents
            .follow(EXEC_APPROVALS_DOCUMENT)
            .map_err(StoreError::Shared)?;
        Ok(ExecApprovalsStore {
            path: path.into(),
            shared: Some(Shared { documents, current }),
        })
    }

    /// The file this handle reads and writes (on a shared store, this host's file, which
    /// it does not read).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the document lives in a store several gateways share rather than in
    /// [`path`](Self::path).
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// The shared document's bytes as the store last heard of them; `None` for a file.
    pub(crate) fn shared_bytes(&self) -> Option<DocumentBytes> {
        self.shared
            .as_ref()
            .map(|shared| shared.current.borrow().clone())
    }

    /// On a shared store that has no document yet, stores this host's file (at
    /// [`path`](Self::path)) as the document, so a first start on a shared database loses no
    /// allowlist; the file is left as it is. Replicas starting together import one file:
    /// whichever stores first, the others find a document. Nothing for a file store.
    pub fn import_local_file(&self) -> Result<Import, StoreError> {
        let Some(shared) = &self.shared else {
            return Ok(Import::NotShared);
        };
        let local = ExecApprovalsStore::new(&self.path);
        let (_, import) = self.update_shared(shared, |current| {
            if current.exists {
                return Ok(Import::AlreadyShared);
            }
            let file = local.read()?;
            if !file.exists {
                return Ok(Import::NoLocalFile);
            }
            current.file = file.file;
            Ok(Import::Imported)
        })?;
        Ok(import)
    }

    /// A shared document's `bytes` as a snapshot.
    pub(crate) fn snapshot_of(&self, bytes: &[u8]) -> Result<Snapshot, StoreError> {
        self.snapshot_from(Some(bytes))
    }

    /// Reads the file without writing anything. A missing file reads as the empty default.
    /// On a shared store, the copy it keeps current (no query).
    pub fn read(&self) -> Result<Snapshot, StoreError> {
        if let Some(bytes) = self.shared_bytes() {
            return self.snapshot_from(bytes.as_deref());
        }
        let bytes = durable_fs::read_if_exists(&self.path)?;
        let mut snapshot = self.snapshot_from(bytes.as_deref())?;
        if let Some(mode) = durable_fs::file_mode(&self.path)?
            && mode & 0o077 != 0
        {
            snapshot
                .report
                .notes
                .push(LoadNote::LoosePermissions { mode });
        }
        Ok(snapshot)
    }

    /// Reads the file and persists what a running gateway needs: a socket path, a socket token
    /// (generated when missing), ids on every entry, the legacy migration and 0600 permissions.
    /// Writes only when the bytes would change or the mode is loose.
    pub fn ensure(&self) -> Result<Snapshot, StoreError> {
        self.update(|_| ()).map(|(snapshot, ())| snapshot)
    }

    /// Replaces the whole file with `file`, if it still has the hash `base_hash`.
    ///
    /// A token that is missing or is the redaction placeholder keeps the stored token, so a
    /// client editing a redacted view cannot erase or learn it.
    pub fn replace(
        &self,
        file: ExecApprovalsFile,
        base_hash: &str,
    ) -> Result<Snapshot, StoreError> {
        if let Some(shared) = &self.shared {
            let (snapshot, ()) = self.update_shared(shared, |current| {
                if current.hash != base_hash {
                    return Err(StoreError::Conflict {
                        path: current.path.clone(),
                        expected: base_hash.to_owned(),
                        actual: current.hash.clone(),
                    });
                }
                let mut next = file.clone();
                keep_stored_token(&mut next, current.exists.then_some(&current.file));
                current.file = next;
                Ok(())
            })?;
            return Ok(snapshot);
        }
        let lock = durable_fs::lock_exclusive(&self.path)?;
        let current_bytes = durable_fs::read_if_exists(&self.path)?;
        let actual = hash_bytes(current_bytes.as_deref().unwrap_or_default());
        if actual != base_hash {
            return Err(StoreError::Conflict {
                path: self.path.clone(),
                expected: base_hash.to_owned(),
                actual,
            });
        }
        let current = match current_bytes.as_deref() {
            Some(bytes) => Some(self.snapshot_from(Some(bytes))?.file),
            None => None,
        };
        let mut next = file;
        keep_stored_token(&mut next, current.as_ref());
        self.write_locked(next, current_bytes.as_deref(), &lock)
    }

    /// Adds an allowlist entry for `agent_id` unless one for the same rule exists (pattern
    /// compared trimmed and case-insensitively, plus `argPattern`). New entries get a UUID.
    pub fn add_allowlist_entry(
        &self,
        agent_id: &str,
        new: NewAllowlistEntry<'_>,
    ) -> Result<AddedEntry, StoreError> {
        let pattern = new.pattern.trim().to_owned();
        let arg_pattern = new
            .arg_pattern
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned);
        let (_, added) = self.update(|file| {
            let items = file
                .agents
                .entry(agent_id.to_owned())
                .or_default()
                .allowlist
                .get_or_insert_with(Vec::new);
            let existing = items.iter_mut().find_map(|item| match item {
                AllowlistItem::Entry(e) if e.same_rule(&pattern, arg_pattern.as_deref()) => Some(e),
                _ => None,
            });
            match existing {
                Some(entry) => {
                    if entry.source.is_none() {
                        entry.source = new.source.map(str::to_owned);
                    }
                    AddedEntry {
                        id: entry.id.get_or_insert_with(new_id).clone(),
                        added: false,
                    }
                }
                None => {
                    let id = new_id();
                    items.push(AllowlistItem::Entry(AllowlistEntry {
                        id: Some(id.clone()),
                        pattern: pattern.clone(),
                        arg_pattern: arg_pattern.clone(),
                        source: new.source.map(str::to_owned),
                        last_used_at: Some(new.now_ms),
                        ..AllowlistEntry::default()
                    }));
                    AddedEntry { id, added: true }
                }
            }
        })?;
        Ok(added)
    }

    /// Records uses of allowlist entries (`lastUsedAt`, `lastUsedCommand`, `lastResolvedPath`),
    /// each for the agent that ran the command, in one replacement of the file.
    ///
    /// The agent's own entry is updated, or the `*` entry when the match came from there. Returns
    /// how many hits found their entry: one removed meanwhile is skipped.
    pub fn record_allowlist_hits(
        &self,
        hits: &[(&str, AllowlistHit<'_>)],
    ) -> Result<usize, StoreError> {
        let (_, found) = self.update(|file| {
            hits.iter()
                .filter(|(agent_id, hit)| record_hit(file, agent_id, hit))
                .count()
        })?;
        Ok(found)
    }

    /// Read-modify-write under the lock: the change always applies to the latest bytes. On a
    /// shared store the change may run more than once, each time on the latest bytes.
    fn update<T>(
        &self,
        mut change: impl FnMut(&mut ExecApprovalsFile) -> T,
    ) -> Result<(Snapshot, T), StoreError> {
        if let Some(shared) = &self.shared {
            return self.update_shared(shared, |current| Ok(change(&mut current.file)));
        }
        let lock = durable_fs::lock_exclusive(&self.path)?;
        let current_bytes = durable_fs::read_if_exists(&self.path)?;
        let mut file = self.snapshot_from(current_bytes.as_deref())?.file;
        let result = change(&mut file);
        let snapshot = self.write_locked(file, current_bytes.as_deref(), &lock)?;
        Ok((snapshot, result))
    }

    /// [`update`](Self::update) on a shared store: `change` sees the latest document (with
    /// its hash) and edits its model; the store keeps the result only if nothing else was
    /// stored meanwhile, else runs it again on what was. An error leaves the document as it is.
    fn update_shared<T>(
        &self,
        shared: &Shared,
        mut change: impl FnMut(&mut Snapshot) -> Result<T, StoreError>,
    ) -> Result<(Snapshot, T), StoreError> {
        let mut outcome = None;
        let stored = shared
            .documents
            .update(EXEC_APPROVALS_DOCUMENT, &mut |current| {
                let attempt = self.snapshot_from(current).and_then(|mut snapshot| {
                    let value = change(&mut snapshot)?;
                    self.fill_required_fields(&mut snapshot.file);
                    Ok((value, to_file_bytes(&snapshot.file)?))
                });
                match attempt {
                    Ok((value, bytes)) => {
                        outcome = Some(Ok(value));
                        (current != Some(bytes.as_slice())).then_some(bytes)
                    }
                    Err(error) => {
                        outcome = Some(Err(error));
                        None
                    }
                }
            })
            .map_err(StoreError::Shared)?;
        let value = outcome.unwrap_or_else(|| {
            Err(StoreError::Shared(
                gatehouse_approvals::StoreError::Backend(
                    "the shared store stored nothing and applied no change".into(),
                ),
            ))
        })?;
        Ok((self.snapshot_from(stored.as_deref())?, value))
    }

    fn write_locked(
        &self,
        mut file: ExecApprovalsFile,
        current_bytes: Option<&[u8]>,
        lock: &WriteLock,
    ) -> Result<Snapshot, StoreError> {
        self.fill_required_fields(&mut file);
        let bytes = to_file_bytes(&file)?;
        let mode_ok = durable_fs::file_mode(&self.path)? == Some(durable_fs::PRIVATE_FILE_MODE);
        if current_bytes != Some(bytes.as_slice()) || !mode_ok {
            durable_fs::replace_atomically(&self.path, &bytes, lock)?;
        }
        self.snapshot_from(Some(&bytes))
    }

    fn fill_required_fields(&self, file: &mut ExecApprovalsFile) {
        let socket = file.socket.get_or_insert_with(SocketConfig::default);
        if socket.path.as_deref().is_none_or(|p| p.trim().is_empty()) {
            socket.path = Some(
                self.path
                    .with_file_name(DEFAULT_SOCKET_NAME)
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        if socket.token.as_ref().is_none_or(SocketToken::is_blank) {
            socket.token = Some(SocketToken::generate());
        }
        for agent in file.agents.values_mut() {
            for item in agent.allowlist.iter_mut().flatten() {
                if let AllowlistItem::Entry(entry) = item {
                    entry.id.get_or_insert_with(new_id);
                }
            }
        }
    }

    /// The name snapshots and errors give the document: the file, or the shared row.
    fn origin(&self) -> PathBuf {
        match self.shared {
            Some(_) => PathBuf::from(SHARED_ORIGIN),
            None => self.path.clone(),
        }
    }

    fn snapshot_from(&self, bytes: Option<&[u8]>) -> Result<Snapshot, StoreError> {
        snapshot_at(self.origin(), bytes)
    }
}

/// `bytes` (none: no document yet) parsed as the document `path` names.
fn snapshot_at(path: PathBuf, bytes: Option<&[u8]>) -> Result<Snapshot, StoreError> {
    let hash = hash_bytes(bytes.unwrap_or_default());
    let Some(bytes) = bytes else {
        return Ok(Snapshot {
            path,
            exists: false,
            file: ExecApprovalsFile::default(),
            hash,
            report: LoadReport::default(),
        });
    };
    let text = std::str::from_utf8(bytes).map_err(|err| StoreError::Parse {
        path: path.clone(),
        line: 1,
        column: err.valid_up_to() + 1,
        message: "file is not valid UTF-8".to_owned(),
    })?;
    let parsed = parse_str(text, &path)?;
    Ok(Snapshot {
        path,
        exists: true,
        file: parsed.file,
        hash,
        report: parsed.report,
    })
}

/// The allowlists allow-always decisions persist to.
impl AllowlistStore for ExecApprovalsStore {
    fn add_allow_always(
        &self,
        agent_id: &str,
        pattern: &str,
        now_ms: u64,
    ) -> Result<AddedEntry, gatehouse_approvals::StoreError> {
        let entry = NewAllowlistEntry {
            pattern,
            arg_pattern: None,
            source: Some(ALLOW_ALWAYS_SOURCE),
            now_ms,
        };
        Ok(self.add_allowlist_entry(agent_id, entry)?)
    }
}

impl Snapshot {
    /// The shared document's `bytes` (as a tool that does not follow it reads them once, e.g.
    /// `gatehouse doctor`), parsed as a gateway would.
    pub fn of_shared_document(bytes: Option<&[u8]>) -> Result<Snapshot, StoreError> {
        snapshot_at(PathBuf::from(SHARED_ORIGIN), bytes)
    }

    /// The view to send to clients: same content and hash, token replaced.
    pub fn redacted(&self) -> RedactedSnapshot {
        let mut file = self.file.clone();
        if let Some(token) = file.socket.as_mut().and_then(|s| s.token.as_mut()) {
            *token = SocketToken::new(REDACTED_TOKEN);
        }
        RedactedSnapshot {
            file,
            hash: self.hash.clone(),
            exists: self.exists,
        }
    }
}

/// sha256 hex of file bytes: the `baseHash` currency.
pub fn hash_bytes(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}

/// Serializes the model as OpenClaw writes it: two-space JSON with `version` first and a
/// trailing newline.
pub fn to_file_bytes(file: &ExecApprovalsFile) -> Result<Vec<u8>, StoreError> {
    #[derive(Serialize)]
    struct OnDisk<'a> {
        version: u32,
        #[serde(flatten)]
        file: &'a ExecApprovalsFile,
    }
    let mut bytes = serde_json::to_vec_pretty(&OnDisk { version: 1, file }).map_err(|source| {
        StoreError::Encode {
            what: "exec-approvals.json",
            source,
        }
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn keep_stored_token(next: &mut ExecApprovalsFile, current: Option<&ExecApprovalsFile>) {
    let incoming_usable = next
        .socket
        .as_ref()
        .and_then(|s| s.token.as_ref())
        .is_some_and(|t| !t.is_blank() && !t.is_redaction_marker());
    if incoming_usable {
        return;
    }
    let stored = current
        .and_then(|c| c.socket.as_ref())
        .and_then(|s| s.token.clone());
    next.socket.get_or_insert_with(SocketConfig::default).token = stored;
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Writes `hit` on the entry it names, the agent's own or else the `*` one; false when neither
/// holds it any more.
fn record_hit(file: &mut ExecApprovalsFile, agent_id: &str, hit: &AllowlistHit<'_>) -> bool {
    for key in [agent_id, super::parse::WILDCARD_AGENT_ID] {
        let Some(agent) = file.agents.get_mut(key) else {
            continue;
        };
        let entry = agent
            .allowlist
            .iter_mut()
            .flatten()
            .find_map(|item| match item {
                AllowlistItem::Entry(e) if e.same_rule(hit.pattern, hit.arg_pattern) => Some(e),
                _ => None,
            });
        if let Some(entry) = entry {
            // Two agents' uses of one `*` entry may be written in either order: keep the later.
            if entry.last_used_at.is_some_and(|at| at > hit.used_at_ms) {
                return true;
            }
            entry.last_used_at = Some(hit.used_at_ms);
            entry.last_used_command = Some(hit.command.to_owned());
            entry.last_resolved_path = hit.resolved_path.map(str::to_owned);
            return true;
        }
    }
    false
}
