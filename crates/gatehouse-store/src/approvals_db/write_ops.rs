//! The store's write operations, each run inside the writer's batch transaction.
//!
//! Each function sees the database as the operations before it in the same batch left it, so
//! compare-and-swap outcomes are exactly those of one transaction per operation: the first
//! answer in queue order wins. A function that fails leaves its changes to the writer, which
//! rolls them back to the savepoint taken before it.

use std::sync::LazyLock;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalState, ConsumeOutcome, DeliveredMessage, NewApproval, Resolution,
    ResolveOutcome,
};
use rusqlite::{Connection, params};

use super::ids::id_order;
use super::rows::{
    COLUMNS, encode, fetch, fetch_required, limit_param, sql_ms, stored_ms, update_then_fetch,
};
use super::tools::{encode_tool, store_grant};
use crate::error::StoreError;

/// The insert of a new pending approval; `id_order` is ?22 (see `ids`), `summary_json` ?23,
/// `tool_json` ?24.
pub(super) static INSERT_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO approvals (id_order, {COLUMNS}) VALUES (?22, ?1, ?2, ?3, ?4, ?5, ?6, \
         ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, 'pending', NULL, NULL, \
         NULL, ?19, ?20, NULL, NULL, ?21, ?23, ?24)"
    )
});

/// Stores a new pending approval; an id that exists in any state is refused (the id index is
/// unique, so this takes no read first). Returns the record as stored, built from what was written
/// rather than read back, and taking the request over rather than copying it: this runs on
/// every approval's path, on the thread every other write waits for.
pub(super) fn insert(
    conn: &Connection,
    approval: NewApproval,
) -> Result<ApprovalRecord, StoreError> {
    let r = &approval.request;
    let turn = r.turn_source.clone().unwrap_or_default();
    conn.prepare_cached(&INSERT_SQL)?
        .execute(params![
            approval.id,
            r.command,
            encode(&r.argv, "argv")?,
            r.cwd,
            encode(&r.env_keys, "env keys")?,
            r.host,
            r.agent_id,
            r.session_key,
            r.resolved_path,
            r.security.map(|s| s.as_str()),
            r.ask.map(|a| a.as_str()),
            r.turn_source.is_some(),
            turn.channel,
            turn.to,
            turn.account_id,
            turn.thread_id,
            r.binding.as_ref().map(|b| &b.hash),
            r.binding.as_ref().map(|b| &b.json),
            sql_ms(approval.created_at_ms),
            sql_ms(approval.expires_at_ms),
            r.requested_by,
            id_order(&approval.id),
            r.summary.as_ref().map(super::summary::encode),
            encode_tool(r.tool.as_ref())?,
        ])
        .map_err(|error| match &error {
            // Named by its columns, so a unique index added later is not taken for this one.
            rusqlite::Error::SqliteFailure(code, Some(message))
                if code.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    && message.ends_with("approvals.id_order, approvals.id") =>
            {
                StoreError::DuplicateId {
                    approval_id: approval.id.clone(),
                }
            }
            _ => error.into(),
        })?;
    Ok(pending_record(approval))
}

/// The record a store returns for a new approval it has just written: built from what was
/// written rather than read back, and taking the request over rather than copying it (this runs
/// on every approval's path).
pub(super) fn pending_record(approval: NewApproval) -> ApprovalRecord {
    ApprovalRecord {
        id: approval.id,
        request: approval.request,
        state: ApprovalState::Pending,
        decision: None,
        resolved_by: None,
        reason: None,
        // As a read would return them: the column holds at most `i64::MAX`.
        created_at_ms: stored_ms(approval.created_at_ms),
        expires_at_ms: stored_ms(approval.expires_at_ms),
        resolved_at_ms: None,
        consumed_at_ms: None,
        messages: Vec::new(),
    }
}

/// The compare-and-swap from pending; `id_order` is ?7 (see `ids`).
pub(super) const RESOLVE_SQL: &str = "UPDATE approvals SET state = ?2, decision = ?3, \
     resolved_by = ?4, reason = ?5, resolved_at_ms = ?6 \
     WHERE id_order = ?7 AND id = ?1 AND state = 'pending'";

/// The compare-and-swap that takes an allow-once run; `id_order` is ?3.
pub(super) const CONSUME_SQL: &str = "UPDATE approvals SET consumed_at_ms = ?2 \
     WHERE id_order = ?3 AND id = ?1 \
     AND state = 'allowed' AND decision = 'allow-once' AND consumed_at_ms IS NULL";

/// Moves a pending approval to the resolution's state, or reports the earlier winner.
pub(super) fn resolve(
    conn: &Connection,
    id: &str,
    resolution: &Resolution,
    at_ms: u64,
) -> Result<ResolveOutcome, StoreError> {
    let (resolved_by, reason) = answered_by(resolution);
    let applied = update_then_fetch(
        conn,
        RESOLVE_SQL,
        params![
            id,
            resolution.target_state().as_str(),
            resolution.decision().map(|d| d.as_str()),
            resolved_by,
            reason,
            sql_ms(at_ms),
            id_order(id),
        ],
        id,
    )?;
    if let Some(record) = applied {
        // An allow-always of a tool approval and its grant are durable together.
        store_grant(conn, &record)?;
        return Ok(ResolveOutcome::Applied(record));
    }
    Ok(lost_to(resolution, fetch_required(conn, id)?))
}

/// Who answered and why, as the `resolved_by` and `reason` columns keep them.
pub(super) fn answered_by(resolution: &Resolution) -> (Option<&str>, Option<&str>) {
    match resolution {
        Resolution::Decided {
            resolved_by,
            reason,
            ..
        } => (resolved_by.as_deref(), reason.as_deref()),
        Resolution::Expired { reason } | Resolution::Cancelled { reason } => {
            (None, Some(reason.as_str()))
        }
    }
}

/// The answer to a resolution that changed nothing, given the approval as it stands: the same
/// answer again is a repeat, any other is rejected with the winner.
pub(super) fn lost_to(resolution: &Resolution, record: ApprovalRecord) -> ResolveOutcome {
    if resolution.matches(&record) {
        ResolveOutcome::Repeated(record)
    } else {
        ResolveOutcome::Rejected { winner: record }
    }
}

/// Takes the single run of an allowed `allow-once` approval.
pub(super) fn consume_allow_once(
    conn: &Connection,
    id: &str,
    at_ms: u64,
) -> Result<ConsumeOutcome, StoreError> {
    let consumed = update_then_fetch(
        conn,
        CONSUME_SQL,
        params![id, sql_ms(at_ms), id_order(id)],
        id,
    )?;
    if let Some(record) = consumed {
        return Ok(ConsumeOutcome::Consumed(record));
    }
    Ok(not_consumed(fetch_required(conn, id)?))
}

/// The answer to a consumption that changed nothing, given the approval as it stands.
pub(super) fn not_consumed(record: ApprovalRecord) -> ConsumeOutcome {
    if record.consumed_at_ms.is_some() {
        ConsumeOutcome::AlreadyConsumed(record)
    } else {
        ConsumeOutcome::NotAllowOnce(record)
    }
}

/// Remembers a chat message showing the approval; the same message twice is a no-op.
pub(super) fn record_delivery(
    conn: &Connection,
    id: &str,
    message: &DeliveredMessage,
) -> Result<(), StoreError> {
    if fetch(conn, id)?.is_none() {
        return Err(StoreError::NotFound {
            approval_id: id.to_owned(),
        });
    }
    conn.prepare_cached(
        "INSERT OR IGNORE INTO approval_messages \
         (approval_id_order, approval_id, channel, account_id, chat_id, message_id, thread_id) \
         VALUES (?7, ?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        id,
        message.channel,
        message.account_id,
        message.chat_id,
        message.message_id,
        message.thread_id,
        id_order(id),
    ])?;
    Ok(())
}

/// Cancels every pending approval and returns them, oldest first.
pub(super) fn cancel_all_pending(
    conn: &Connection,
    reason: &str,
    at_ms: u64,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let ids: Vec<String> = conn
        .prepare("SELECT id FROM approvals WHERE state = 'pending' ORDER BY created_at_ms, id")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    conn.execute(
        "UPDATE approvals SET state = 'cancelled', reason = ?1, resolved_at_ms = ?2 \
         WHERE state = 'pending'",
        params![reason, sql_ms(at_ms)],
    )?;
    ids.iter().map(|id| fetch_required(conn, id)).collect()
}

/// Deletes up to `limit` terminal approvals resolved before `cutoff_ms`, oldest first (through
/// `approvals_by_resolution`), and returns their ids; pending rows are never pruned.
pub(super) fn prune_terminal_before(
    conn: &Connection,
    cutoff_ms: u64,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "DELETE FROM approvals WHERE rowid IN (SELECT rowid FROM approvals \
         WHERE state <> 'pending' AND resolved_at_ms < ?1 ORDER BY resolved_at_ms LIMIT ?2) \
         RETURNING id",
    )?;
    let ids = stmt
        .query_map(params![sql_ms(cutoff_ms), limit_param(limit)], |row| {
            row.get(0)
        })?
        .collect::<Result<_, _>>()?;
    // Digests stand for no one approval, so they do not go with one: they go with the history
    // of the same age, once done.
    conn.prepare_cached(
        "DELETE FROM chat_outbox WHERE rowid IN (SELECT rowid FROM chat_outbox \
         WHERE approval_id IS NULL AND updated_at_ms < ?1 \
         AND (state = 'finished' OR state = 'skipped' OR state = 'lost') LIMIT ?2)",
    )?
    .execute(params![sql_ms(cutoff_ms), limit_param(limit)])?;
    Ok(ids)
}
