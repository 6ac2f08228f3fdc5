//! Records which allowlist entry let each `system.run` go ahead without a person
//! (`lastUsedAt`, `lastUsedCommand`, `lastResolvedPath` in `exec-approvals.json`), so operators
//! pruning entries by their last use do not remove ones in use.
//!
//! A use is recorded off the run's path: the file is replaced (fsynced, under its lock) on a
//! blocking thread, and uses that arrive while a replacement is under way are written together in
//! the next one, keeping the latest use of each entry. A failure is logged and loses only these
//! marks, never a decision.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gatehouse_policy::exec::AllowlistEntry;
use gatehouse_store::approvals_file::{AllowlistHit, ExecApprovalsStore};

/// The uses waiting to be written, and whether a writer is already on its way.
#[derive(Debug)]
pub(crate) struct AllowlistUse {
    file: ExecApprovalsStore,
    queue: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    /// The latest use of each (agent, pattern, argPattern).
    uses: HashMap<(String, String, Option<String>), Use>,
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

    /// Writes batches until the queue is empty, then lets the next use start a writer.
    fn write_queued(&self) {
        loop {
            let uses = {
                let mut queue = self.lock();
                if queue.uses.is_empty() {
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
