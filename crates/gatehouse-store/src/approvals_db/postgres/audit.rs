//! The audit log in the database (`audit_records`, `audit_head`): one hash chain every gateway
//! on the database appends to, in the file log's format, checked by its verifier
//! (docs/audit.md, "In the database").
//!
//! **One chain, no forks, no gaps.** Each append locks the one row of `audit_head` (`FOR
//! UPDATE`), which names the last record's seq and line hash, builds the next records after it
//! in Rust (the file log's encoder: one format, one hash rule), inserts them and moves the head,
//! all in the caller's transaction. A second append, from this gateway or another, waits on the
//! row lock until the first commits or rolls back, then reads the head as it was left: seqs are
//! taken in commit order, and a rolled-back transition takes its record (and its seq) with it.
//!
//! **Records of transitions are the transition's.** The store appends a transition's record in
//! the transaction that makes it ([`transition`]), so each is committed exactly when its
//! transition is. Other records come through [`PgAuditLog`] in a transaction of their own.
//!
//! Records never leave with their approval: pruning history deletes approvals, not the chain.

use std::path::Path;

use deadpool_postgres::{Pool, Transaction};
use gatehouse_approvals::ApprovalRecord;
use tokio_postgres::IsolationLevel;

use super::ops::Queries;
use super::schema;
use crate::audit::rows::RowChain;
use crate::audit::{
    AuditError, AuditEvent, AuditFuture, AuditRecord, ChainTip, SharedAuditLog, Transition,
    VerifyReport, encode_line, transition_event,
};
use crate::error::StoreError;

/// The records' table, as verdicts name it.
const RECORDS_LABEL: &str = "postgres:audit_records";
/// The head row's table, as verdicts name it.
const HEAD_LABEL: &str = "postgres:audit_head";
/// Rows read per statement while verifying, so memory stays bounded however long the chain.
const VERIFY_PAGE: i64 = 5_000;

/// Appends the record of `transition` of `record` (as it stands after it), dated `at_ms`, in
/// the transition's transaction.
pub(super) async fn transition(
    tx: &impl Queries,
    record: &ApprovalRecord,
    transition: Transition,
    at_ms: u64,
) -> Result<(), StoreError> {
    append(tx, vec![(at_ms, transition_event(record, transition))]).await
}

/// Appends `events` as the next records of the chain, in the caller's transaction: two round
/// trips, the head row locked from the first until the transaction ends.
pub(super) async fn append(
    tx: &impl Queries,
    events: Vec<(u64, AuditEvent)>,
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let rows = tx
        .rows("SELECT last_seq, line_hash FROM audit_head FOR UPDATE", &[])
        .await?;
    let Some(head) = rows.first() else {
        return Err(missing_head());
    };
    let last_seq: i64 = head.try_get(0)?;
    let mut tip = ChainTip {
        seq: u64::try_from(last_seq).unwrap_or_default(),
        line_hash: head.try_get(1)?,
    };
    let mut seqs = Vec::with_capacity(events.len());
    let mut approvals = Vec::with_capacity(events.len());
    let mut lines = Vec::with_capacity(events.len());
    for (at_ms, event) in events {
        approvals.push(event.approval_id.clone());
        let record = AuditRecord::after(&tip, at_ms, event);
        let encoded = encode_line(&record).map_err(|source| StoreError::Encode {
            what: "an audit record",
            source,
        })?;
        tip = ChainTip {
            seq: record.seq,
            line_hash: encoded.line_hash,
        };
        seqs.push(i64::try_from(record.seq).unwrap_or(i64::MAX));
        // serde_json writes UTF-8.
        lines.push(String::from_utf8_lossy(&encoded.bytes).into_owned());
    }
    let head_seq = i64::try_from(tip.seq).unwrap_or(i64::MAX);
    tx.rows(
        "WITH added AS (INSERT INTO audit_records (seq, approval_id, line) \
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])) \
         UPDATE audit_head SET last_seq = $4, line_hash = $5",
        &[&seqs, &approvals, &lines, &head_seq, &tip.line_hash],
    )
    .await?;
    Ok(())
}

fn missing_head() -> StoreError {
    StoreError::CorruptRow {
        approval_id: "(audit log)".to_owned(),
        column: "audit_head",
        detail: "the head row is missing".to_owned(),
    }
}

/// The database log as the gateway and `gatehouse audit` use it.
#[derive(Debug, Clone)]
pub struct PgAuditLog {
    /// Verdicts and tails.
    reads: Pool,
    /// Appends: a pool of its own, whose connections are opened by the runtime that appends
    /// (the gateway's audit writer runs its own, so it can finish its queue while the
    /// gateway's runtime stops).
    appends: Pool,
}

impl PgAuditLog {
    pub(super) fn new(reads: Pool, appends: Pool) -> Self {
        PgAuditLog { reads, appends }
    }

    /// Checks the chain in one snapshot (the head and every row as of one moment, so records
    /// committing meanwhile are neither half seen nor past the head).
    async fn verify_chain(&self) -> Result<VerifyReport, AuditError> {
        let mut client = self.reads.get().await.map_err(StoreError::from)?;
        if !schema::table_exists(&*client, "audit_head")
            .await
            .map_err(AuditError::from)?
        {
            return Err(AuditError::NotInDatabase);
        }
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(StoreError::from)?;
        let report = walk_rows(&tx).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(report)
    }

    async fn last_lines(&self, count: usize) -> Result<Vec<Vec<u8>>, AuditError> {
        let client = self.reads.get().await.map_err(StoreError::from)?;
        let client: &deadpool_postgres::ClientWrapper = &client;
        if !schema::table_exists(client, "audit_records")
            .await
            .map_err(AuditError::from)?
        {
            return Err(AuditError::NotInDatabase);
        }
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        let rows = client
            .rows(
                "SELECT line FROM audit_records ORDER BY seq DESC LIMIT $1",
                &[&limit],
            )
            .await
            .map_err(StoreError::from)?;
        let mut lines = rows
            .iter()
            .map(|row| row.try_get::<_, String>(0).map(String::into_bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(StoreError::from)?;
        lines.reverse();
        Ok(lines)
    }

    async fn append_events(&self, events: Vec<(u64, AuditEvent)>) -> Result<(), AuditError> {
        let mut client = self.appends.get().await.map_err(StoreError::from)?;
        let tx = client.transaction().await.map_err(StoreError::from)?;
        append(&tx, events).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }
}

/// Reads the head row, then every record in seq order, a page at a time, through the file
/// log's walk.
async fn walk_rows(tx: &Transaction<'_>) -> Result<VerifyReport, AuditError> {
    let head = tx
        .rows("SELECT last_seq, line_hash FROM audit_head", &[])
        .await
        .map_err(StoreError::from)?;
    let head = match head.first() {
        Some(row) => {
            let seq: i64 = row.try_get(0).map_err(StoreError::from)?;
            let hash: String = row.try_get(1).map_err(StoreError::from)?;
            Some((u64::try_from(seq).unwrap_or_default(), hash))
        }
        None => None,
    };
    let mut chain = RowChain::new(Path::new(RECORDS_LABEL), Path::new(HEAD_LABEL), head);
    let mut after = i64::MIN;
    'pages: loop {
        let rows = tx
            .rows(
                "SELECT seq, line FROM audit_records WHERE seq > $1 ORDER BY seq LIMIT $2",
                &[&after, &VERIFY_PAGE],
            )
            .await
            .map_err(StoreError::from)?;
        for row in &rows {
            let seq: i64 = row.try_get(0).map_err(StoreError::from)?;
            let line: String = row.try_get(1).map_err(StoreError::from)?;
            after = seq;
            if !chain.push(u64::try_from(seq).unwrap_or_default(), line.as_bytes()) {
                break 'pages;
            }
        }
        if rows.len() < usize::try_from(VERIFY_PAGE).unwrap_or(usize::MAX) {
            break;
        }
    }
    Ok(chain.finish())
}

impl SharedAuditLog for PgAuditLog {
    fn append(&self, events: Vec<(u64, AuditEvent)>) -> AuditFuture<'_, ()> {
        Box::pin(self.append_events(events))
    }

    fn verify(&self) -> AuditFuture<'_, VerifyReport> {
        Box::pin(self.verify_chain())
    }

    fn tail(&self, count: usize) -> AuditFuture<'_, Vec<Vec<u8>>> {
        Box::pin(self.last_lines(count))
    }
}
