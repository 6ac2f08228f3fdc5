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
//!
//! **Shared by replicas.** When the approvals store is PostgreSQL the chain is in the database
//! ([`Auditor::shared`]): the store appends the record of each approval transition in the
//! transition's own transaction, so the forwarder leaves those to it, and this writer appends
//! the rest, one transaction per group of 50 ms. Its thread runs a runtime of its own, so the
//! queue is still drained while the gateway's runtime stops. A group the database refuses is
//! tried again, with back-off, until it is stored (a few tries once the gateway is stopping).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gatehouse_store::audit::{
    AuditError, AuditEvent, AuditKind, AuditLog, AuditOptions, SharedAuditLog, SyncPolicy,
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
    /// Where the chain is, for operators reading it (`audit.verify`, `audit.tail`).
    destination: Destination,
    /// Set on drop, so a writer retrying a refused group gives up in the end.
    stopping: Arc<AtomicBool>,
}

/// Where the records go.
#[derive(Debug, Clone)]
pub(crate) enum Destination {
    /// The active file of the data directory's log.
    File(PathBuf),
    /// The database every replica shares, whose store records approval transitions itself.
    Database(Arc<dyn SharedAuditLog>),
}

/// How long the database writer gathers records: longer than the file's window, since each
/// group holds the chain's head row, which every replica's transitions also wait for, and these
/// records are not on any request's path.
const DATABASE_GROUP_WINDOW: Duration = Duration::from_millis(50);

/// Tries of a group once the gateway is stopping, before it is given up (and logged).
const TRIES_WHEN_STOPPING: u32 = 3;
/// The longest wait between two tries of a group the database refused.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

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
        let stopping = Arc::default();
        Self::start(
            Destination::File(path.to_owned()),
            stopping,
            move |receiver| {
                write_groups(&log, &receiver);
            },
        )
    }

    /// Appends to the database's chain through `log`, on a writer thread of its own.
    pub(crate) fn shared(log: Arc<dyn SharedAuditLog>) -> Result<Self, ServiceError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(writer_not_started)?;
        let appender = Arc::clone(&log);
        let stopping = Arc::new(AtomicBool::new(false));
        let writer_stopping = Arc::clone(&stopping);
        Self::start(Destination::Database(log), stopping, move |receiver| {
            append_groups(&runtime, &*appender, &receiver, &writer_stopping);
        })
    }

    /// Starts the writer thread `write` on the receiving end of a new channel.
    fn start(
        destination: Destination,
        stopping: Arc<AtomicBool>,
        write: impl FnOnce(mpsc::Receiver<(u64, AuditEvent)>) + Send + 'static,
    ) -> Result<Self, ServiceError> {
        let (sender, receiver) = mpsc::channel::<(u64, AuditEvent)>();
        let writer = std::thread::Builder::new()
            .name("gatehouse-audit".into())
            .spawn(move || write(receiver))
            .map_err(writer_not_started)?;
        Ok(Self {
            sender: Some(sender),
            writer: Some(writer),
            destination,
            stopping,
        })
    }

    /// What [`Auditor::open`] would refuse in the log at `path`, as the same error, found
    /// without creating, repairing or locking anything.
    pub(crate) fn check(path: &Path) -> Result<(), ServiceError> {
        AuditLog::check(path).map(drop).map_err(refused)
    }

    /// Where the chain is.
    pub(crate) fn destination(&self) -> &Destination {
        &self.destination
    }

    /// Whether the store appends the records of approval transitions itself (in their
    /// transactions), so nobody else may.
    pub(crate) fn store_records_transitions(&self) -> bool {
        matches!(self.destination, Destination::Database(_))
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

fn writer_not_started(error: std::io::Error) -> ServiceError {
    ServiceError::Internal {
        reason: format!("cannot start the audit writer: {error}"),
    }
}

/// The log's refusal as a store error. Its message names the file (every open error does),
/// so the path is not repeated.
fn refused(error: AuditError) -> ServiceError {
    ServiceError::store(error)
}

impl Drop for Auditor {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::Relaxed);
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

/// The database writer: like [`write_groups`], a group per [`DATABASE_GROUP_WINDOW`], each
/// appended in one transaction; a refused group is tried again, with back-off, so records are
/// not lost to a database restart.
fn append_groups(
    runtime: &tokio::runtime::Runtime,
    log: &dyn SharedAuditLog,
    receiver: &mpsc::Receiver<(u64, AuditEvent)>,
    stopping: &AtomicBool,
) {
    while let Ok(first) = receiver.recv() {
        let mut group = vec![first];
        std::thread::sleep(DATABASE_GROUP_WINDOW);
        let max = usize::try_from(MAX_GROUP.get()).unwrap_or(usize::MAX);
        group.extend(receiver.try_iter().take(max - 1));
        let mut backoff = GROUP_WINDOW;
        let mut tries_left = TRIES_WHEN_STOPPING;
        while let Err(error) = runtime.block_on(log.append(group.clone())) {
            // Once the gateway is stopping, give up after a few tries.
            if stopping.load(Ordering::Relaxed) {
                tries_left -= 1;
                if tries_left == 0 {
                    tracing::error!(error = %error, records = group.len(), "Audit records not written.");
                    break;
                }
            }
            tracing::warn!(error = %error, records = group.len(), "Audit records not written yet; trying again.");
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_record_queued_just_before_the_gateway_stops_is_in_the_database_once_it_has_stopped() {
        use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};

        let database = gatehouse_fakes::postgres::database().unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let log: Arc<dyn SharedAuditLog> = runtime.block_on(async {
            let store = PgApprovalStore::connect(database.url(), PgOptions::default())
                .await
                .unwrap();
            Arc::new(store.audit_log().unwrap())
        });
        let auditor = Auditor::shared(Arc::clone(&log)).unwrap();
        assert!(auditor.store_records_transitions());
        for n in 0..3 {
            auditor.record(AuditKind::Execution, None, Some("r1"), json!({"n": n}));
        }
        drop(auditor);
        let report = runtime.block_on(log.verify()).unwrap();
        assert!(report.is_valid(), "{report:?}");
        assert_eq!((report.records, report.anchored_seq), (3, Some(3)));
        let tail = runtime.block_on(log.tail(10)).unwrap();
        let last: Value = serde_json::from_slice(&tail[2]).unwrap();
        assert_eq!(
            (last["payload"]["n"].as_u64(), last["runId"].as_str()),
            (Some(2), Some("r1"))
        );
    }

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
