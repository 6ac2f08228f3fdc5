//! The event log (`approval_events`): how every gateway agrees on one numbered sequence of
//! approval and run events, and how one that missed notices catches up.
//!
//! **Why a counter row, not a sequence.** A PostgreSQL sequence hands out numbers when a
//! statement runs, not when its transaction commits: a transaction holding 7 can commit after
//! one holding 8, so a reader that saw 8 and then asks for "after 8" would never see 7. Here
//! every append takes the next number by updating the one row of `event_log`, whose row lock
//! is held until the transaction ends: a second append waits for the first to commit (or roll
//! back, which gives its number back), so numbers are taken in commit order and without gaps,
//! and everything up to the number a reader sees in `event_log` is already committed. The
//! price is that transitions append one at a time across all gateways, for about one round
//! trip and a commit each: the append is the transaction's last statement but its
//! notification, so the lock is held as briefly as it can be.
//!
//! An approval's rows hold what happened and to which approval; the event's details are the
//! approval's, which a settled approval never changes again. They leave with their approval
//! when history is pruned (`ON DELETE CASCADE`). A run event's row (kind `run`, since
//! migration 6) holds the run's id and the event as the service encoded it, takes its number
//! from the same counter, so runs and approvals share one order; it is dated and pruned with
//! history of the same age (`ops::prune_terminal_before`).

use std::sync::LazyLock;

use gatehouse_approvals::{LogEntry, LoggedEvent, LoggedEvents, RunNote};
use uuid::Uuid;

use super::listener::APPROVALS;
use super::ops::{Queries, RECORD, record_from};
use crate::error::StoreError;

/// The `kind` of a creation; a settling's is the state the approval settled in.
pub(super) const REQUESTED: &str = "requested";
/// The `kind` of a run event.
const RUN: &str = "run";

/// Appends an event for approval `id` to the log, in the caller's transaction.
pub(super) async fn append(tx: &impl Queries, id: &str, kind: &str) -> Result<(), StoreError> {
    tx.rows(
        "WITH next AS (UPDATE event_log SET last_seq = last_seq + 1 RETURNING last_seq) \
         INSERT INTO approval_events (seq, approval_id, kind) SELECT last_seq, $1, $2 FROM next",
        &[&id, &kind],
    )
    .await?;
    Ok(())
}

/// Appends a run's event, in the caller's transaction, and wakes the other gateways (as
/// `origin`) in the same statement; returns its number.
pub(super) async fn append_run(
    tx: &impl Queries,
    origin: &str,
    note: &RunNote,
    at_ms: u64,
) -> Result<u64, StoreError> {
    let run_id = note.run_id.to_string();
    let at_ms = i64::try_from(at_ms).unwrap_or(i64::MAX);
    let wake = format!("{origin} {run_id}");
    let rows = tx
        .rows(
            "WITH next AS (UPDATE event_log SET last_seq = last_seq + 1 RETURNING last_seq), \
             appended AS (INSERT INTO approval_events (seq, kind, run_id, run_body, at_ms) \
                 SELECT last_seq, $1, $2, $3, $4 FROM next RETURNING seq) \
             SELECT seq, pg_notify($5, $6)::text FROM appended",
            &[&RUN, &run_id, &note.body, &at_ms, &APPROVALS, &wake],
        )
        .await?;
    let Some(row) = rows.first() else {
        return Err(missing_counter());
    };
    let seq: i64 = row.try_get(0)?;
    Ok(u64::try_from(seq).unwrap_or_default())
}

/// The log's instance id: the one the migration created, and the database's oid. A database
/// restored from a `pg_dump` is a new database with the same rows: events written after the
/// dump are lost with the old one and their numbers will be handed out again, so a client
/// holding one of them must not take the restored log's numbers for the ones it saw; the new
/// oid gives it a new instance, and it replays from the start (docs/high-availability.md,
/// "Backups and upgrades").
pub(super) async fn instance(q: &impl Queries) -> Result<String, StoreError> {
    let rows = q
        .rows(
            "SELECT instance || '.' || (SELECT oid FROM pg_database \
             WHERE datname = current_database())::text FROM event_log",
            &[],
        )
        .await?;
    match rows.first() {
        Some(row) => Ok(row.try_get(0)?),
        None => Err(missing_counter()),
    }
}

/// The number of the last event appended (and committed).
pub(super) async fn head(q: &impl Queries) -> Result<u64, StoreError> {
    let rows = q.rows("SELECT last_seq FROM event_log", &[]).await?;
    let Some(row) = rows.first() else {
        return Err(missing_counter());
    };
    let last: i64 = row.try_get(0)?;
    Ok(u64::try_from(last).unwrap_or_default())
}

/// The events after `after` up to the head read first, oldest first, at most `limit`: every
/// one of them was committed before the head was read, so none can appear later below it.
///
/// Each event's approval is looked up by its key (the `LATERAL … LIMIT 1`, which PostgreSQL
/// cannot flatten into a join): a plain join let the planner, short of fresh statistics, hash
/// the whole approvals table for every read, so each read cost time in proportion to the
/// history kept (`event_log::catching_up_looks_each_approval_up_by_key_however_long_the_history`).
pub(super) async fn after(
    q: &impl Queries,
    after: u64,
    limit: usize,
) -> Result<LoggedEvents, StoreError> {
    // A run event has no approval to look up; an approval event whose approval is gone was
    // pruned.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT e.seq, e.kind, e.run_id, e.run_body, {} FROM (SELECT seq, approval_id, \
             kind, run_id, run_body FROM approval_events WHERE seq > $1 AND seq <= $2 \
             ORDER BY seq LIMIT $3) e \
             LEFT JOIN LATERAL (SELECT * FROM approvals a WHERE a.id = e.approval_id \
             LIMIT 1) approvals ON true \
             WHERE e.kind = '{RUN}' OR approvals.id IS NOT NULL ORDER BY e.seq",
            *RECORD
        )
    });
    let head = head(q).await?;
    let from = i64::try_from(after).unwrap_or(i64::MAX);
    let to = i64::try_from(head).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = q.rows(&SQL, &[&from, &to, &limit]).await?;
    let events = rows
        .iter()
        .map(|row| {
            let seq: i64 = row.try_get(0)?;
            let kind: String = row.try_get(1)?;
            let entry = if kind == RUN {
                LogEntry::Run(run_note(row.try_get(2)?, row.try_get(3)?)?)
            } else {
                LogEntry::Approval {
                    settled: kind != REQUESTED,
                    record: Box::new(record_from(row, 4)?),
                }
            };
            Ok(LoggedEvent {
                seq: u64::try_from(seq).unwrap_or_default(),
                entry,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(LoggedEvents { events, head })
}

/// A run row's note; its id was written from a UUID.
fn run_note(run_id: String, body: String) -> Result<RunNote, StoreError> {
    let run_id = Uuid::try_parse(&run_id).map_err(|error| StoreError::CorruptRow {
        approval_id: "(event log)".to_owned(),
        column: "run_id",
        detail: error.to_string(),
    })?;
    Ok(RunNote { run_id, body })
}

fn missing_counter() -> StoreError {
    StoreError::CorruptRow {
        approval_id: "(event log)".to_owned(),
        column: "event_log",
        detail: "the counter row is missing".to_owned(),
    }
}
