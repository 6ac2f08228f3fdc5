//! The PostgreSQL store's statements: each write in its own transaction, every state change an
//! `UPDATE … WHERE state = 'pending'` (or the allow-once condition) that the server serializes
//! per row, so across replicas the first committed answer wins and a later one changes nothing.
//!
//! A record is read with its delivered messages in one statement (a JSON aggregate), so a read
//! is one round trip and one snapshot. Statements are prepared once per pooled connection.

use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;

use deadpool_postgres::{ClientWrapper, Transaction};
use gatehouse_approvals::{
    ApprovalRecord, ConsumeOutcome, DeliveredMessage, ListFilter, ListOrder, NewApproval,
    Resolution, ResolveOutcome, StoredGrant,
};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::super::rows::{COLUMNS, RawRow, encode, escape_like, limit_param, sql_ms};
use super::super::tools::{GRANT_COLUMNS, StoredGrantColumns, encode_tool, grant_row};
use super::super::write_ops::{answered_by, lost_to, not_consumed, pending_record};
use super::events::{self, REQUESTED};
use super::feed::notify;
use crate::error::StoreError;

/// Parameters as tokio-postgres takes them.
type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A connection or a transaction on one: where a statement runs.
pub(super) trait Queries: Sync {
    /// Runs `sql` (prepared once per connection) and returns its rows.
    fn rows<'a>(
        &'a self,
        sql: &'a str,
        params: Params<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send + 'a>>;
}

/// Both run a statement alike: prepared once per connection, then queried.
macro_rules! queries_through_the_statement_cache {
    ($($runner:ty),*) => {$(
        impl Queries for $runner {
            fn rows<'a>(
                &'a self,
                sql: &'a str,
                params: Params<'a>,
            ) -> Pin<Box<dyn Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send + 'a>>
            {
                Box::pin(async move {
                    let statement = self.prepare_cached(sql).await?;
                    self.query(&statement, params).await
                })
            }
        }
    )*};
}
queries_through_the_statement_cache!(ClientWrapper, Transaction<'_>);

/// A record's columns ([`COLUMNS`]) and then its delivered messages, oldest first, as one JSON
/// array of `[channel, account_id, chat_id, message_id, thread_id]`.
pub(super) static RECORD: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{COLUMNS}, (SELECT coalesce(json_agg(json_build_array(m.channel, m.account_id, \
         m.chat_id, m.message_id, m.thread_id) ORDER BY m.seq), '[]')::text \
         FROM approval_messages m WHERE m.approval_id = approvals.id)"
    )
});

/// The record a row of [`RECORD`] holds.
fn record(row: &Row) -> Result<ApprovalRecord, StoreError> {
    record_from(row, 0)
}

/// The record a row holds in [`RECORD`]'s columns from column `at` on.
pub(super) fn record_from(row: &Row, at: usize) -> Result<ApprovalRecord, StoreError> {
    let raw = RawRow {
        id: row.try_get(at)?,
        command: row.try_get(at + 1)?,
        argv_json: row.try_get(at + 2)?,
        cwd: row.try_get(at + 3)?,
        env_keys_json: row.try_get(at + 4)?,
        host: row.try_get(at + 5)?,
        agent_id: row.try_get(at + 6)?,
        session_key: row.try_get(at + 7)?,
        resolved_path: row.try_get(at + 8)?,
        security: row.try_get(at + 9)?,
        ask: row.try_get(at + 10)?,
        has_turn_source: row.try_get(at + 11)?,
        turn_source: gatehouse_approvals::TurnSource {
            channel: row.try_get(at + 12)?,
            to: row.try_get(at + 13)?,
            account_id: row.try_get(at + 14)?,
            thread_id: row.try_get(at + 15)?,
        },
        binding_hash: row.try_get(at + 16)?,
        binding_json: row.try_get(at + 17)?,
        state: row.try_get(at + 18)?,
        decision: row.try_get(at + 19)?,
        resolved_by: row.try_get(at + 20)?,
        reason: row.try_get(at + 21)?,
        created_at_ms: row.try_get(at + 22)?,
        expires_at_ms: row.try_get(at + 23)?,
        resolved_at_ms: row.try_get(at + 24)?,
        consumed_at_ms: row.try_get(at + 25)?,
        requested_by: row.try_get(at + 26)?,
        summary_json: row.try_get(at + 27)?,
        tool_json: row.try_get(at + 28)?,
    };
    let messages_json: String = row.try_get(at + 29)?;
    let messages = decode_messages(&messages_json).map_err(|detail| StoreError::CorruptRow {
        approval_id: raw.id.clone(),
        column: "approval_messages",
        detail,
    })?;
    raw.into_record(messages)
}

type MessageColumns = (String, Option<String>, String, String, Option<String>);

fn decode_messages(text: &str) -> Result<Vec<DeliveredMessage>, String> {
    let rows: Vec<MessageColumns> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(
            |(channel, account_id, chat_id, message_id, thread_id)| DeliveredMessage {
                channel,
                account_id,
                chat_id,
                message_id,
                thread_id,
            },
        )
        .collect())
}

fn records(rows: &[Row]) -> Result<Vec<ApprovalRecord>, StoreError> {
    rows.iter().map(record).collect()
}

/// The short id of `id` when it is a UUID, as the unique `short_id` column keeps it.
fn short_id_of(id: &str) -> Option<i64> {
    Uuid::try_parse(id)
        .ok()
        .map(|uuid| i64::from(gatehouse_approvals::short_id(&uuid)))
}

const INSERT_SQL: &str = "INSERT INTO approvals (id, short_id, command, argv_json, cwd, \
     env_keys_json, host, agent_id, session_key, resolved_path, security, ask, has_turn_source, \
     turn_channel, turn_to, turn_account_id, turn_thread_id, binding_hash, binding_json, state, \
     created_at_ms, expires_at_ms, requested_by, summary_json, tool_json) VALUES ($1, $2, $3, \
     $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, 'pending', $20, \
     $21, $22, $23, $24)";

/// Stores a new pending approval. The primary key refuses an id that exists in any state, the
/// short id's unique index one whose short id another approval holds.
pub(super) async fn insert(
    tx: &impl Queries,
    origin: &str,
    approval: NewApproval,
) -> Result<ApprovalRecord, StoreError> {
    let r = &approval.request;
    let turn = r.turn_source.clone().unwrap_or_default();
    let argv = encode(&r.argv, "argv")?;
    let env_keys = encode(&r.env_keys, "env keys")?;
    let summary = r.summary.as_ref().map(super::super::summary::encode);
    let tool = encode_tool(r.tool.as_ref())?;
    let inserted = tx
        .rows(
            INSERT_SQL,
            &[
                &approval.id,
                &short_id_of(&approval.id),
                &r.command,
                &argv,
                &r.cwd,
                &env_keys,
                &r.host,
                &r.agent_id,
                &r.session_key,
                &r.resolved_path,
                &r.security.map(|s| s.as_str()),
                &r.ask.map(|a| a.as_str()),
                &r.turn_source.is_some(),
                &turn.channel,
                &turn.to,
                &turn.account_id,
                &turn.thread_id,
                &r.binding.as_ref().map(|b| &b.hash),
                &r.binding.as_ref().map(|b| &b.json),
                &sql_ms(approval.created_at_ms),
                &sql_ms(approval.expires_at_ms),
                &r.requested_by,
                &summary,
                &tool,
            ],
        )
        .await;
    match inserted.map_err(StoreError::from) {
        Ok(_) => {
            events::append(tx, &approval.id, REQUESTED).await?;
            notify(tx, origin, &approval.id).await?;
            Ok(pending_record(approval))
        }
        Err(StoreError::Postgres(error)) if error.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
            let approval_id = approval.id;
            Err(match error.constraint() {
                Some("approvals_short_id") => StoreError::ShortIdInUse { approval_id },
                Some("approvals_pkey") => StoreError::DuplicateId { approval_id },
                _ => StoreError::Postgres(error),
            })
        }
        Err(other) => Err(other),
    }
}

/// The approval with this id.
pub(super) async fn fetch(
    q: &impl Queries,
    id: &str,
) -> Result<Option<ApprovalRecord>, StoreError> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {} FROM approvals WHERE id = $1", *RECORD));
    let rows = q.rows(&SQL, &[&id]).await?;
    rows.first().map(record).transpose()
}

async fn fetch_required(q: &impl Queries, id: &str) -> Result<ApprovalRecord, StoreError> {
    fetch(q, id).await?.ok_or_else(|| StoreError::NotFound {
        approval_id: id.to_owned(),
    })
}

/// Moves a pending approval to the resolution's state, or reports the earlier winner. An
/// applied allow-always of a tool approval stores its grant in the same transaction.
pub(super) async fn resolve(
    tx: &Transaction<'_>,
    origin: &str,
    id: &str,
    resolution: &Resolution,
    at_ms: u64,
) -> Result<ResolveOutcome, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE approvals SET state = $2, decision = $3, resolved_by = $4, reason = $5, \
             resolved_at_ms = $6 WHERE id = $1 AND state = 'pending' RETURNING {}",
            *RECORD
        )
    });
    let (resolved_by, reason) = answered_by(resolution);
    let rows = tx
        .rows(
            &SQL,
            &[
                &id,
                &resolution.target_state().as_str(),
                &resolution.decision().map(|d| d.as_str()),
                &resolved_by,
                &reason,
                &sql_ms(at_ms),
            ],
        )
        .await?;
    if let Some(row) = rows.first() {
        let record = record(row)?;
        store_grant(tx, &record).await?;
        events::append(tx, id, record.state.as_str()).await?;
        notify(tx, origin, id).await?;
        return Ok(ResolveOutcome::Applied(record));
    }
    Ok(lost_to(resolution, fetch_required(tx, id).await?))
}

async fn store_grant(tx: &Transaction<'_>, record: &ApprovalRecord) -> Result<(), StoreError> {
    let Some(row) = grant_row(record)? else {
        return Ok(());
    };
    tx.rows(
        "INSERT INTO tool_grants (id, agent_id, tool, scope, scope_json, created_at_ms, \
         granted_by) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
        &[
            &row.id,
            &row.agent_id,
            &row.tool,
            &row.scope,
            &row.scope_json,
            &row.created_at_ms,
            &row.granted_by,
        ],
    )
    .await?;
    Ok(())
}

/// Takes the single run of an allowed `allow-once` approval.
pub(super) async fn consume_allow_once(
    tx: &Transaction<'_>,
    id: &str,
    at_ms: u64,
) -> Result<ConsumeOutcome, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE approvals SET consumed_at_ms = $2 WHERE id = $1 AND state = 'allowed' \
             AND decision = 'allow-once' AND consumed_at_ms IS NULL RETURNING {}",
            *RECORD
        )
    });
    let rows = tx.rows(&SQL, &[&id, &sql_ms(at_ms)]).await?;
    if let Some(row) = rows.first() {
        return Ok(ConsumeOutcome::Consumed(record(row)?));
    }
    Ok(not_consumed(fetch_required(tx, id).await?))
}

/// Remembers a chat message showing the approval; the same message twice is a no-op.
pub(super) async fn record_delivery(
    tx: &Transaction<'_>,
    id: &str,
    message: &DeliveredMessage,
) -> Result<(), StoreError> {
    let inserted = tx
        .rows(
            "INSERT INTO approval_messages (approval_id, channel, account_id, chat_id, \
             message_id, thread_id) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[
                &id,
                &message.channel,
                &message.account_id,
                &message.chat_id,
                &message.message_id,
                &message.thread_id,
            ],
        )
        .await;
    match inserted.map_err(StoreError::from) {
        Err(StoreError::Postgres(error))
            if error.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) =>
        {
            Err(StoreError::NotFound {
                approval_id: id.to_owned(),
            })
        }
        other => other.map(drop),
    }
}

/// Cancels every pending approval and returns them, oldest first.
pub(super) async fn cancel_all_pending(
    tx: &Transaction<'_>,
    reason: &str,
    at_ms: u64,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE approvals SET state = 'cancelled', reason = $1, resolved_at_ms = $2 \
             WHERE state = 'pending' RETURNING {}",
            *RECORD
        )
    });
    let mut cancelled = records(&tx.rows(&SQL, &[&reason, &sql_ms(at_ms)]).await?)?;
    cancelled.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
    for record in &cancelled {
        events::append(tx, &record.id, record.state.as_str()).await?;
    }
    Ok(cancelled)
}

/// Deletes up to `limit` terminal approvals resolved before `cutoff_ms`, oldest first, with
/// their messages; pending rows are never pruned.
pub(super) async fn prune_terminal_before(
    tx: &Transaction<'_>,
    cutoff_ms: u64,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let rows = tx
        .rows(
            "DELETE FROM approvals WHERE id IN (SELECT id FROM approvals \
             WHERE state <> 'pending' AND resolved_at_ms < $1 ORDER BY resolved_at_ms LIMIT $2) \
             RETURNING id",
            &[&sql_ms(cutoff_ms), &limit_param(limit)],
        )
        .await?;
    // Run events stand for no approval either: they go with the history of the same age.
    tx.rows(
        "DELETE FROM approval_events WHERE seq IN (SELECT seq FROM approval_events \
         WHERE kind = 'run' AND at_ms < $1 LIMIT $2)",
        &[&sql_ms(cutoff_ms), &limit_param(limit)],
    )
    .await?;
    // Digests stand for no one approval: they go with the history of the same age, once done.
    tx.rows(
        "DELETE FROM chat_outbox WHERE seq IN (SELECT seq FROM chat_outbox \
         WHERE approval_id IS NULL AND updated_at_ms < $1 \
         AND state IN ('finished', 'skipped', 'lost') LIMIT $2)",
        &[&sql_ms(cutoff_ms), &limit_param(limit)],
    )
    .await?;
    rows.iter()
        .map(|row| row.try_get(0).map_err(StoreError::from))
        .collect()
}

/// Approvals whose id starts with `prefix`, ignoring ASCII case, oldest first.
pub(super) async fn find_by_prefix(
    q: &impl Queries,
    prefix: &str,
    limit: usize,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {} FROM approvals WHERE lower(id) LIKE $1 ESCAPE '\\' \
             ORDER BY created_at_ms, id LIMIT $2",
            *RECORD
        )
    });
    let pattern = format!("{}%", escape_like(&prefix.to_ascii_lowercase()));
    records(&q.rows(&SQL, &[&pattern, &limit_param(limit)]).await?)
}

/// The short id of every stored UUID id.
pub(super) async fn short_ids(q: &impl Queries) -> Result<Vec<u32>, StoreError> {
    let rows = q
        .rows(
            "SELECT short_id FROM approvals WHERE short_id IS NOT NULL",
            &[],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let short: i64 = row.try_get(0)?;
            u32::try_from(short).map_err(|_| StoreError::CorruptRow {
                approval_id: format!("(short id {short})"),
                column: "short_id",
                detail: "not a 32-bit short id".to_owned(),
            })
        })
        .collect()
}

/// Approvals matching `filter`, in its order; ties in creation time broken by id, in the same
/// direction, as the SQLite store does.
pub(super) async fn list(
    q: &impl Queries,
    filter: &ListFilter,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let condition = match (filter.state.is_some(), filter.agent_id.is_some()) {
        (false, false) => "",
        (true, false) => "WHERE state = $2",
        (false, true) => "WHERE agent_id = $2",
        (true, true) => "WHERE state = $2 AND agent_id = $3",
    };
    let direction = match filter.order {
        ListOrder::OldestFirst => "ASC",
        ListOrder::NewestFirst => "DESC",
    };
    let sql = format!(
        "SELECT {} FROM approvals {condition} \
         ORDER BY created_at_ms {direction}, id {direction} LIMIT $1",
        *RECORD
    );
    let limit = limit_param(filter.limit);
    let state = filter.state.map(|s| s.as_str());
    let rows = match (state, filter.agent_id.as_deref()) {
        (None, None) => q.rows(&sql, &[&limit]).await?,
        (Some(state), None) => q.rows(&sql, &[&limit, &state]).await?,
        (None, Some(agent)) => q.rows(&sql, &[&limit, &agent]).await?,
        (Some(state), Some(agent)) => q.rows(&sql, &[&limit, &state, &agent]).await?,
    };
    records(&rows)
}

fn grant(row: &Row) -> Result<StoredGrant, StoreError> {
    StoredGrantColumns {
        id: row.try_get(0)?,
        agent_id: row.try_get(1)?,
        tool: row.try_get(2)?,
        scope: row.try_get(3)?,
        scope_json: row.try_get(4)?,
        created_at_ms: row.try_get(5)?,
        granted_by: row.try_get(6)?,
    }
    .decode()
}

/// Deletes a grant and returns it as it was.
pub(super) async fn revoke_grant(
    tx: &Transaction<'_>,
    id: &str,
) -> Result<Option<StoredGrant>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("DELETE FROM tool_grants WHERE id = $1 RETURNING {GRANT_COLUMNS}")
    });
    let rows = tx.rows(&SQL, &[&id]).await?;
    rows.first().map(grant).transpose()
}

/// Every grant, oldest first.
pub(super) async fn grants(q: &impl Queries) -> Result<Vec<StoredGrant>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {GRANT_COLUMNS} FROM tool_grants ORDER BY created_at_ms, id")
    });
    q.rows(&SQL, &[]).await?.iter().map(grant).collect()
}
