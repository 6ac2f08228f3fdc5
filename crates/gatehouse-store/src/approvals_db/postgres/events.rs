//! The event log (`approval_events`): how every gateway agrees on one numbered sequence of
//! approval events, and how one that missed notices catches up.
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
//! Rows hold what happened and to which approval; the event's details are the approval's,
//! which a settled approval never changes again. They leave with their approval when history
//! is pruned (`ON DELETE CASCADE`).

use std::sync::LazyLock;

use gatehouse_approvals::{LoggedEvent, LoggedEvents};

use super::ops::{Queries, RECORD, record_from};
use crate::error::StoreError;

/// The `kind` of a creation; a settling's is the state the approval settled in.
pub(super) const REQUESTED: &str = "requested";

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
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT e.seq, e.kind, {} FROM (SELECT seq, approval_id, kind \
             FROM approval_events WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3) e \
             CROSS JOIN LATERAL (SELECT * FROM approvals a WHERE a.id = e.approval_id \
             LIMIT 1) approvals ORDER BY e.seq",
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
            Ok(LoggedEvent {
                seq: u64::try_from(seq).unwrap_or_default(),
                settled: kind != REQUESTED,
                record: record_from(row, 2)?,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(LoggedEvents { events, head })
}

fn missing_counter() -> StoreError {
    StoreError::CorruptRow {
        approval_id: "(event log)".to_owned(),
        column: "event_log",
        detail: "the counter row is missing".to_owned(),
    }
}
