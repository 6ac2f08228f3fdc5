//! Feeds the hash-chained audit log from the request path without making requests wait on its
//! fsyncs: records go through a channel to one writer thread, in the order they were sent.
//!
//! The writer commits in groups: it appends the records that arrive within [`GROUP_WINDOW`] of
//! the first, then fsyncs once and moves the head. A sync costs two fsyncs (the log, and the
//! head rewritten in place; it was four disk operations while the head was replaced by rename),
//! so a sync per record fell ever further behind under load and its fsyncs delayed the approvals
//! database's on the same disk; with the window a record is on
//! disk at most a few milliseconds after it was queued, and there are at most a few hundred
//! syncs a second however busy the gateway is. Requests never wait for any of this: the audit
//! log records what happened, and approvals and decisions are durable in the approvals
//! database before anyone is told of them. Dropping the [`Auditor`] (the gateway stopping)
//! waits for the writer to append and sync what is queued, so a shutdown loses no record.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gatehouse_store::audit::{
    AuditError, AuditEvent, AuditKind, AuditLog, AuditOptions, SyncPolicy,
};
use serde_json::Value;

use crate::error::ServiceError;

/// How long the writer gathers records after the first of a group before it syncs them.
const GROUP_WINDOW: Duration = Duration::from_millis(5);

/// Most records appended before the writer fsyncs even though more are queued.
const MAX_GROUP: NonZeroU32 = match NonZeroU32::new(256) {
    Some(records) => records,
    None => NonZeroU32::MIN,
};

/// The sending side; cheap to share.
#[derive(Debug)]
pub(crate) struct Auditor {
    /// `None` only while dropping, so the writer sees the channel close.
    sender: Option<mpsc::Sender<(u64, AuditEvent)>>,
    /// Joined on drop: the writer drains the channel and syncs before it ends.
    writer: Option<JoinHandle<()>>,
    /// The active log file, for operators reading it (`audit.verify`, `audit.tail`).
    path: PathBuf,
}

impl Auditor {
    /// Opens (verifying and repairing a torn tail) the log at `path` and starts its writer.
    pub(crate) fn open(path: &Path) -> Result<Self, ServiceError> {
        let options = AuditOptions {
            sync: SyncPolicy::Batched {
                max_unsynced: MAX_GROUP,
            },
            ..AuditOptions::default()
        };
        let (log, report) = AuditLog::open(path, options).map_err(refused)?;
        if let Some(torn) = &report.torn_tail {
            tracing::warn!(line = torn.line, path = %path.display(), "Removed a torn audit record left by a crash.");
        }
        let (sender, receiver) = mpsc::channel::<(u64, AuditEvent)>();
        let writer = std::thread::Builder::new()
            .name("gatehouse-audit".into())
            .spawn(move || write_groups(&log, &receiver))
            .map_err(|error| ServiceError::Internal {
                reason: format!("cannot start the audit writer: {error}"),
            })?;
        Ok(Self {
            sender: Some(sender),
            writer: Some(writer),
            path: path.to_owned(),
        })
    }

    /// What [`Auditor::open`] would refuse in the log at `path`, as the same error, found
    /// without creating, repairing or locking anything.
    pub(crate) fn check(path: &Path) -> Result<(), ServiceError> {
        AuditLog::check(path).map(drop).map_err(refused)
    }

    /// The active log file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one record, stamped now.
    pub(crate) fn record(
        &self,
        kind: AuditKind,
        approval_id: Option<&str>,
        run_id: Option<&str>,
        payload: Value,
    ) {
        let mut event = AuditEvent::new(kind, payload);
        event.approval_id = approval_id.map(str::to_owned);
        event.run_id = run_id.map(str::to_owned);
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| {
                u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
            });
        let sent = self
            .sender
            .as_ref()
            .is_some_and(|sender| sender.send((at_ms, event)).is_ok());
        if !sent {
            tracing::error!("Audit writer stopped; record not written.");
        }
    }
}

/// The log's refusal as a store error. Its message names the file (every open error does),
/// so the path is not repeated.
fn refused(error: AuditError) -> ServiceError {
    ServiceError::store(error)
}

impl Drop for Auditor {
    fn drop(&mut self) {
        drop(self.sender.take());
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::error!("The audit writer panicked; records queued at the end may be lost.");
        }
    }
}

/// The writer thread: waits for a record, appends it, lets [`GROUP_WINDOW`] pass, appends every
/// record queued meanwhile, fsyncs once, and repeats until every sender is gone. It sleeps
/// through the window rather than waiting on the channel, so senders do not wake it per record.
fn write_groups(log: &AuditLog, receiver: &mpsc::Receiver<(u64, AuditEvent)>) {
    let append = |(at_ms, event)| {
        if let Err(error) = log.append(at_ms, event) {
            tracing::error!(error = %error, "Audit record not written.");
        }
    };
    while let Ok(first) = receiver.recv() {
        append(first);
        std::thread::sleep(GROUP_WINDOW);
        receiver.try_iter().for_each(append);
        if let Err(error) = log.sync() {
            tracing::error!(error = %error, "Audit records not synced.");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_record_queued_just_before_the_gateway_stops_is_on_disk_once_it_has_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(gatehouse_store::audit::LOG_FILE_NAME);
        let auditor = Auditor::open(&path).unwrap();
        for n in 0..3 {
            auditor.record(AuditKind::Request, None, None, json!({"n": n}));
        }
        drop(auditor);
        let report = gatehouse_store::audit::verify(&path).unwrap();
        assert!(report.is_valid(), "{report:?}");
        assert_eq!(report.records, 3);
        assert_eq!(
            report.anchored_seq,
            Some(3),
            "synced and anchored, not only written"
        );
    }
}
