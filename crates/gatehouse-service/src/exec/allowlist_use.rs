//! Records which allowlist entry let each `system.run` go ahead without a person
//! (`lastUsedAt`, `lastUsedCommand`, `lastResolvedPath` in `exec-approvals.json`), so operators
//! pruning entries by their last use do not remove ones in use.
//!
//! A use is recorded off the run's path: the file is replaced (fsynced, under its lock) on a
//! blocking thread, and uses that arrive while a replacement is under way are written together in
//! the next one, keeping the latest use of each entry. Each entry is marked at most once a
//! [`MARK_EVERY`]: every replacement is a new version of the file, which every request then
//! re-reads and every agent's policy is rebuilt from, so marks on each run would cost every
//! request. A failure is logged and loses only these marks, never a decision.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use gatehouse_policy::exec::AllowlistEntry;
use gatehouse_store::approvals_file::{AllowlistHit, ExecApprovalsStore};

/// How often one entry's last use is written at most: `lastUsedAt` is to the minute.
const MARK_EVERY: Duration = Duration::from_secs(60);

/// An entry as one agent uses it: (agent, pattern, argPattern).
type EntryKey = (String, String, Option<String>);

/// The uses waiting to be written, and whether a writer is already on its way.
#[derive(Debug)]
pub(crate) struct AllowlistUse {
    file: ExecApprovalsStore,
    queue: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    /// The latest use of each entry, not yet written.
    uses: HashMap<EntryKey, Use>,
    /// When each entry's use was last queued; bounded by the number of entries agents use.
    marked: HashMap<EntryKey, Instant>,
    writing: bool,
}

#[derive(Debug)]
struct Use {
    used_at_ms: u64,
    command: String,
    resolved_path: Option<String>,
}

/// One run that an allowlist entry let through.
pub(crate) struct EntryUse<'a> {
    pub(crate) agent_id: &'a str,
    pub(crate) entry: &'a AllowlistEntry,
    pub(crate) used_at_ms: u64,
    pub(crate) command: &'a str,
    pub(crate) resolved_path: Option<String>,
}

impl AllowlistUse {
    pub(crate) fn new(file: ExecApprovalsStore) -> Self {
        Self {
            file,
            queue: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `used` and, unless a writer is already running, starts one on the blocking pool.
    /// Must run inside a tokio runtime.
    pub(crate) fn record(self: &Arc<Self>, used: EntryUse<'_>) {
        let key = (
            used.agent_id.to_owned(),
            used.entry.pattern.clone(),
            used.entry.arg_pattern.clone(),
        );
        let mut queue = self.lock();
        let now = Instant::now();
        if queue
            .marked
            .get(&key)
            .is_some_and(|at| now.duration_since(*at) < MARK_EVERY)
        {
            return;
        }
        queue.marked.insert(key.clone(), now);
        queue.uses.insert(
            key,
            Use {
                used_at_ms: used.used_at_ms,
                command: used.command.to_owned(),
                resolved_path: used.resolved_path,
            },
        );
        if std::mem::replace(&mut queue.writing, true) {
            return;
        }
        drop(queue);
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || this.write_queued());
    }

    /// Writes batches until the queue is empty, then lets the next use start a writer. If a
    /// write panics, the flag is lowered all the same, so later uses start a writer again.
    fn write_queued(&self) {
        let _lowered = LowerOnPanic(self);
        loop {
            let uses = {
                let mut queue = self.lock();
                if queue.uses.is_empty() {
                    // Under the lock that `record` checks it with: a use queued after this
                    // starts a writer of its own.
                    queue.writing = false;
                    return;
                }
                std::mem::take(&mut queue.uses)
            };
            let hits: Vec<(&str, AllowlistHit<'_>)> = uses
                .iter()
                .map(|((agent, pattern, arg_pattern), used)| {
                    let hit = AllowlistHit {
                        pattern,
                        arg_pattern: arg_pattern.as_deref(),
                        used_at_ms: used.used_at_ms,
                        command: &used.command,
                        resolved_path: used.resolved_path.as_deref(),
                    };
                    (agent.as_str(), hit)
                })
                .collect();
            if let Err(error) = self.file.record_allowlist_hits(&hits) {
                tracing::warn!(%error, "Allowlist entries' last use could not be recorded.");
            }
        }
    }
}

/// Lowers the writing flag when the writer unwinds; a writer that returns lowers it itself.
struct LowerOnPanic<'a>(&'a AllowlistUse);

impl Drop for LowerOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().writing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_store::approvals_file::NewAllowlistEntry;

    use super::*;

    /// Final review: a mark on every allowlisted run rewrote the approvals file each time, and
    /// each new version cost every request a re-read and every agent a policy rebuild.
    #[tokio::test]
    async fn marks_an_entry_at_most_once_a_minute() {
        let dir = tempfile::tempdir().unwrap();
        let file = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
        let new = NewAllowlistEntry {
            pattern: "/usr/bin/git",
            arg_pattern: None,
            source: None,
            now_ms: 1,
        };
        file.add_allowlist_entry("main", new).unwrap();
        let recorder = Arc::new(AllowlistUse::new(file.clone()));
        let entry = AllowlistEntry::new("/usr/bin/git");
        for (at, command) in [(10, "git status"), (20, "git log")] {
            recorder.record(EntryUse {
                agent_id: "main",
                entry: &entry,
                used_at_ms: at,
                command,
                resolved_path: None,
            });
        }
        let last_command = || {
            let snapshot = file.read().unwrap();
            let value = serde_json::to_value(&snapshot.file).unwrap();
            value["agents"]["main"]["allowlist"][0]["lastUsedCommand"].clone()
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while last_command().is_null() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(last_command(), "git status");
    }
}
