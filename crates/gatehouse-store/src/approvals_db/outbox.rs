//! The chat outbox on SQLite (`gatehouse-approvals`' [`ChatOutbox`] contract): one row per
//! message, each step one conditional `UPDATE` applied only from the state it starts in, run
//! on the writer thread like every other write, so a step is durable before its caller goes on.
//!
//! [`ChatOutbox`]: gatehouse_approvals::ChatOutbox

use gatehouse_approvals::{
    DeliveredMessage, OutboxEntry, OutboxMessage, OutboxRoute, OutboxState, OutboxStep, StepOutcome,
};
use rusqlite::{Connection, Row, params};

use super::ids::id_order;
use super::rows::{limit_param, sql_ms};
use crate::error::StoreError;

/// Every column a read returns, in [`RawEntry::read`]'s order (the PostgreSQL store's too).
pub(super) const COLUMNS: &str = "key, approval_id, kind, channel, account_id, direct, target, thread_id, \
     state, attempts, chat_id, message_id, last_error, last_error_at_ms, retry_at_ms, \
     claimed_by, lease_until_ms, created_at_ms, updated_at_ms";

/// Records each message as queued; a key already stored is left alone.
pub(super) fn plan(
    conn: &Connection,
    messages: &[OutboxMessage],
    at_ms: u64,
) -> Result<(), StoreError> {
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO chat_outbox (key, approval_id_order, approval_id, kind, channel, \
         account_id, direct, target, thread_id, state, attempts, created_at_ms, updated_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', 0, ?10, ?10)",
    )?;
    for message in messages {
        let route = &message.route;
        insert.execute(params![
            message.key,
            message.approval_id.as_deref().map(id_order),
            message.approval_id,
            message.kind,
            route.channel,
            route.account_id,
            route.direct,
            route.target,
            route.thread_id,
            sql_ms(at_ms),
        ])?;
    }
    Ok(())
}

/// Applies `step` to `key` if it is in the state the step starts from.
pub(super) fn record(
    conn: &Connection,
    key: &str,
    step: &OutboxStep,
    at_ms: u64,
) -> Result<StepOutcome, StoreError> {
    let at = sql_ms(at_ms);
    let changed = match step {
        OutboxStep::Sending {
            attempt,
            claimant,
            lease_until_ms,
        } => conn.prepare_cached(
            "UPDATE chat_outbox SET state = 'sending', attempts = ?2, claimed_by = ?3, \
             lease_until_ms = ?4, updated_at_ms = ?5 \
             WHERE key = ?1 AND attempts = ?2 - 1 AND (state = 'queued' OR (state = 'sending' \
             AND (lease_until_ms < ?5 OR claimed_by = ?3)))",
        )?
        .execute(params![key, attempt, claimant, sql_ms(*lease_until_ms), at])?,
        OutboxStep::Delivered { attempt, message } => {
            let changed = conn
                .prepare_cached(
                    "UPDATE chat_outbox SET state = 'delivered', chat_id = ?3, message_id = ?4, \
                     last_error = NULL, last_error_at_ms = NULL, retry_at_ms = NULL, \
                     claimed_by = NULL, lease_until_ms = NULL, updated_at_ms = ?5 \
                     WHERE key = ?1 AND state = 'sending' AND attempts = ?2",
                )?
                .execute(params![key, attempt, message.chat_id, message.message_id, at])?;
            if changed == 1 {
                remember_with_approval(conn, key, message)?;
            }
            changed
        }
        OutboxStep::SendFailed {
            attempt,
            error,
            retry_at_ms,
        } => conn.prepare_cached(
            "UPDATE chat_outbox SET state = 'queued', last_error = ?3, last_error_at_ms = ?4, \
             retry_at_ms = ?5, claimed_by = NULL, lease_until_ms = NULL, updated_at_ms = ?4 \
             WHERE key = ?1 AND state = 'sending' AND attempts = ?2",
        )?
        .execute(params![key, attempt, error, at, sql_ms(*retry_at_ms)])?,
        OutboxStep::Skipped => conn.prepare_cached(
            "UPDATE chat_outbox SET state = 'skipped', claimed_by = NULL, lease_until_ms = NULL, \
             retry_at_ms = NULL, updated_at_ms = ?2 \
             WHERE key = ?1 AND (state = 'queued' OR state = 'sending')",
        )?
        .execute(params![key, at])?,
        OutboxStep::Lost { reason } => conn.prepare_cached(
            "UPDATE chat_outbox SET state = 'lost', last_error = ?2, last_error_at_ms = ?3, \
             claimed_by = NULL, lease_until_ms = NULL, retry_at_ms = NULL, updated_at_ms = ?3 \
             WHERE key = ?1 AND (state = 'queued' OR state = 'sending' OR state = 'delivered')",
        )?
        .execute(params![key, reason, at])?,
        OutboxStep::Finished => conn.prepare_cached(
            "UPDATE chat_outbox SET state = 'finished', last_error = NULL, \
             last_error_at_ms = NULL, retry_at_ms = NULL, updated_at_ms = ?2 \
             WHERE key = ?1 AND state = 'delivered'",
        )?
        .execute(params![key, at])?,
        OutboxStep::FinishFailed { error, retry_at_ms } => conn.prepare_cached(
            "UPDATE chat_outbox SET last_error = ?2, last_error_at_ms = ?3, retry_at_ms = ?4, \
             updated_at_ms = ?3 WHERE key = ?1 AND state = 'delivered'",
        )?
        .execute(params![key, error, at, sql_ms(*retry_at_ms)])?,
    };
    Ok(if changed == 1 {
        StepOutcome::Applied
    } else {
        StepOutcome::Refused
    })
}

/// A delivered approval message is kept with its approval too, where records list their
/// messages. Origin notices are not: they show no command, and a record's messages are where
/// chat looks to see whether an approval was shown in a channel (a decision there needs that).
fn remember_with_approval(
    conn: &Connection,
    key: &str,
    message: &DeliveredMessage,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO approval_messages (approval_id_order, approval_id, channel, \
         account_id, chat_id, message_id, thread_id) \
         SELECT approval_id_order, approval_id, ?2, ?3, ?4, ?5, ?6 FROM chat_outbox \
         WHERE key = ?1 AND approval_id IS NOT NULL AND kind <> 'notice'",
    )?
    .execute(params![
        key,
        message.channel,
        message.account_id,
        message.chat_id,
        message.message_id,
        message.thread_id,
    ])?;
    Ok(())
}

/// Every message not done, oldest first.
pub(super) fn open(conn: &Connection) -> Result<Vec<OutboxEntry>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM chat_outbox \
         WHERE state = 'queued' OR state = 'sending' OR state = 'delivered' ORDER BY seq"
    );
    query(conn, &sql, params![])
}

/// Messages not done whose last step failed, and those lost since `lost_since_ms`, newest
/// change first.
pub(super) fn troubled(
    conn: &Connection,
    lost_since_ms: u64,
    limit: usize,
) -> Result<Vec<OutboxEntry>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM chat_outbox WHERE last_error IS NOT NULL \
         AND (state = 'queued' OR state = 'sending' OR state = 'delivered' \
              OR (state = 'lost' AND updated_at_ms >= ?1)) \
         ORDER BY updated_at_ms DESC, seq DESC LIMIT ?2"
    );
    query(
        conn,
        &sql,
        params![sql_ms(lost_since_ms), limit_param(limit)],
    )
}

fn query(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<OutboxEntry>, StoreError> {
    let raws: Vec<RawEntry> = conn
        .prepare_cached(sql)?
        .query_map(params, RawEntry::read)?
        .collect::<Result<_, _>>()?;
    raws.into_iter().map(RawEntry::decode).collect()
}

/// A row as read, before its words are checked: the PostgreSQL store's rows are decoded by
/// the same code.
pub(super) struct RawEntry {
    pub(super) key: String,
    pub(super) approval_id: Option<String>,
    pub(super) kind: String,
    pub(super) channel: String,
    pub(super) account_id: Option<String>,
    pub(super) direct: bool,
    pub(super) target: String,
    pub(super) thread_id: Option<String>,
    pub(super) state: String,
    pub(super) attempts: i64,
    pub(super) chat_id: Option<String>,
    pub(super) message_id: Option<String>,
    pub(super) last_error: Option<String>,
    pub(super) last_error_at_ms: Option<i64>,
    pub(super) retry_at_ms: Option<i64>,
    pub(super) claimed_by: Option<String>,
    pub(super) lease_until_ms: Option<i64>,
    pub(super) created_at_ms: i64,
    pub(super) updated_at_ms: i64,
}

impl RawEntry {
    fn read(row: &Row<'_>) -> rusqlite::Result<RawEntry> {
        Ok(RawEntry {
            key: row.get(0)?,
            approval_id: row.get(1)?,
            kind: row.get(2)?,
            channel: row.get(3)?,
            account_id: row.get(4)?,
            direct: row.get(5)?,
            target: row.get(6)?,
            thread_id: row.get(7)?,
            state: row.get(8)?,
            attempts: row.get(9)?,
            chat_id: row.get(10)?,
            message_id: row.get(11)?,
            last_error: row.get(12)?,
            last_error_at_ms: row.get(13)?,
            retry_at_ms: row.get(14)?,
            claimed_by: row.get(15)?,
            lease_until_ms: row.get(16)?,
            created_at_ms: row.get(17)?,
            updated_at_ms: row.get(18)?,
        })
    }

    pub(super) fn decode(self) -> Result<OutboxEntry, StoreError> {
        let ms = |value: i64| u64::try_from(value).unwrap_or(0);
        let state = OutboxState::parse(&self.state).ok_or_else(|| StoreError::CorruptRow {
            approval_id: format!("chat message {}", self.key),
            column: "state",
            detail: format!("unknown state {:?}", self.state),
        })?;
        let delivered = match (self.chat_id, self.message_id) {
            (Some(chat_id), Some(message_id)) => Some(DeliveredMessage {
                channel: self.channel.clone(),
                account_id: self.account_id.clone(),
                chat_id,
                message_id,
                thread_id: self.thread_id.clone(),
            }),
            _ => None,
        };
        Ok(OutboxEntry {
            message: OutboxMessage {
                key: self.key,
                approval_id: self.approval_id,
                kind: self.kind,
                route: OutboxRoute {
                    channel: self.channel,
                    account_id: self.account_id,
                    direct: self.direct,
                    target: self.target,
                    thread_id: self.thread_id,
                },
            },
            state,
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            delivered,
            last_error: self.last_error,
            last_error_at_ms: self.last_error_at_ms.map(ms),
            retry_at_ms: self.retry_at_ms.map(ms),
            claim: self.claimed_by.zip(self.lease_until_ms.map(ms)),
            created_at_ms: ms(self.created_at_ms),
            updated_at_ms: ms(self.updated_at_ms),
        })
    }
}
