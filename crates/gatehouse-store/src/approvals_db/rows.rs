//! Rows as stored and as returned: the column list, decoding (a row that does not decode is
//! reported as corrupt, never guessed at) and the queries that read whole records.
//!
//! Shared by the read connections and the writer, which reads back what it wrote inside its
//! transaction. Statements go through the connection's prepared-statement cache: the same few
//! statements run thousands of times a second under load.

use std::sync::LazyLock;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalRequest, ApprovalState, DeliveredMessage, ListFilter, ListOrder,
    RunBinding, TurnSource,
};
use rusqlite::{Connection, OptionalExtension as _, Row, params};
use uuid::Uuid;

use super::ids::id_order;
use crate::error::StoreError;

/// Every column of `approvals`, in [`RawRow::read`]'s order.
pub(super) const COLUMNS: &str = "id, command, argv_json, cwd, env_keys_json, host, agent_id, session_key, \
     resolved_path, security, ask, has_turn_source, turn_channel, turn_to, turn_account_id, \
     turn_thread_id, binding_hash, binding_json, state, decision, resolved_by, reason, \
     created_at_ms, expires_at_ms, resolved_at_ms, consumed_at_ms, requested_by, summary_json, tool_json";

/// Times are u64 in the API and INTEGER (i64) in SQLite; saturating is exact for any real time.
pub(super) fn sql_ms(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// `ms` as it reads back after [`sql_ms`] stored it.
pub(super) fn stored_ms(ms: u64) -> u64 {
    ms.min(i64::MAX.unsigned_abs())
}

pub(super) fn limit_param(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Makes `%`, `_` and `\` in a user-supplied prefix literal for `LIKE ... ESCAPE '\'`.
fn escape_like(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len());
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(super) fn encode(values: &[String], what: &'static str) -> Result<String, StoreError> {
    serde_json::to_string(values).map_err(|source| StoreError::Encode { what, source })
}

/// Reads one approval through the id index (see `ids`); params `id_order`, `id`.
pub(super) static FETCH_SQL: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM approvals WHERE id_order = ?1 AND id = ?2"));

pub(super) fn fetch(conn: &Connection, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
    let raw = conn
        .prepare_cached(&FETCH_SQL)?
        .query_row(params![id_order(id), id], RawRow::read)
        .optional()?;
    raw.map(|raw| raw.into_record(conn)).transpose()
}

/// Runs `sql`, an `UPDATE` of at most the one row `id` names, and reads that row as the update
/// left it, in the same transaction: `None` when it changed nothing. Not `UPDATE … RETURNING`:
/// SQLite gathers returned rows in a temporary b-tree it builds per execution, which costs the
/// writer more than a second lookup through the id index.
pub(super) fn update_then_fetch(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    id: &str,
) -> Result<Option<ApprovalRecord>, StoreError> {
    if conn.prepare_cached(sql)?.execute(params)? == 0 {
        return Ok(None);
    }
    fetch(conn, id)
}

pub(super) fn fetch_required(conn: &Connection, id: &str) -> Result<ApprovalRecord, StoreError> {
    fetch(conn, id)?.ok_or_else(|| StoreError::NotFound {
        approval_id: id.to_owned(),
    })
}

/// Approvals whose id starts with `prefix`, ignoring ASCII case, oldest first.
pub(super) fn find_by_prefix(
    conn: &Connection,
    prefix: &str,
    limit: usize,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let pattern = format!("{}%", escape_like(prefix));
    query_many(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM approvals WHERE id LIKE ?1 ESCAPE '\\' \
             ORDER BY created_at_ms, id LIMIT ?2"
        ),
        rusqlite::params![pattern, limit_param(limit)],
    )
}

/// Every stored id; SQLite reads them from the smallest index holding them, not the table.
const ALL_IDS_SQL: &str = "SELECT id FROM approvals";

/// The short id of every stored id that is a UUID (see [`super::short_id`]).
pub(super) fn short_ids(conn: &Connection) -> Result<Vec<u32>, StoreError> {
    let mut stmt = conn.prepare(ALL_IDS_SQL)?;
    let mut rows = stmt.query([])?;
    let mut shorts = Vec::new();
    while let Some(row) = rows.next()? {
        // Only ids the manager wrote can collide with one it is about to write, and those are
        // UUIDs; any other text is no one's short id.
        if let Ok(text) = row.get_ref(0)?.as_str()
            && let Ok(id) = Uuid::try_parse(text)
        {
            shorts.push(gatehouse_approvals::short_id(&id));
        }
    }
    Ok(shorts)
}

/// Approvals matching `filter`, oldest first.
pub(super) fn list(
    conn: &Connection,
    filter: &ListFilter,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let state = filter.state.map(ApprovalState::as_str);
    let limit = limit_param(filter.limit);
    let sql = list_sql(filter);
    match (state, filter.agent_id.as_deref()) {
        (None, None) => query_many(conn, &sql, rusqlite::params![limit]),
        (Some(state), None) => query_many(conn, &sql, rusqlite::params![limit, state]),
        (None, Some(agent)) => query_many(conn, &sql, rusqlite::params![limit, agent]),
        (Some(state), Some(agent)) => {
            query_many(conn, &sql, rusqlite::params![limit, state, agent])
        }
    }
}

/// One statement per combination of filters, rather than `(?1 IS NULL OR state = ?1)`, which
/// SQLite can only answer by reading every row and sorting them: each of these walks an index
/// in the order asked for and stops at the limit (see the schema's second migration).
pub(super) fn list_sql(filter: &ListFilter) -> String {
    let condition = match (filter.state.is_some(), filter.agent_id.is_some()) {
        (false, false) => "",
        (true, false) => "WHERE state = ?2",
        (false, true) => "WHERE agent_id = ?2",
        (true, true) => "WHERE state = ?2 AND agent_id = ?3",
    };
    let direction = match filter.order {
        ListOrder::OldestFirst => "ASC",
        ListOrder::NewestFirst => "DESC",
    };
    format!(
        "SELECT {COLUMNS} FROM approvals {condition} \
         ORDER BY created_at_ms {direction}, id {direction} LIMIT ?1"
    )
}

fn query_many(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let raws: Vec<RawRow> = {
        let mut stmt = conn.prepare_cached(sql)?;
        stmt.query_map(params, RawRow::read)?
            .collect::<Result<_, _>>()?
    };
    raws.into_iter().map(|raw| raw.into_record(conn)).collect()
}

/// A record's delivered messages. Sorted by `seq` in Rust, not with `ORDER BY seq`: SQLite
/// re-prepares that statement on every run (its plan depends on the bound id), which cost more
/// than the rest of reading a record.
const MESSAGES_SQL: &str = "SELECT seq, channel, account_id, chat_id, message_id, thread_id \
     FROM approval_messages WHERE approval_id_order = ?1 AND approval_id = ?2";

fn messages(conn: &Connection, id: &str) -> Result<Vec<DeliveredMessage>, StoreError> {
    let mut stmt = conn.prepare_cached(MESSAGES_SQL)?;
    let rows = stmt.query_map(params![id_order(id), id], |row| {
        let message = DeliveredMessage {
            channel: row.get(1)?,
            account_id: row.get(2)?,
            chat_id: row.get(3)?,
            message_id: row.get(4)?,
            thread_id: row.get(5)?,
        };
        Ok((row.get::<_, i64>(0)?, message))
    })?;
    let mut messages: Vec<(i64, DeliveredMessage)> = rows.collect::<Result<_, _>>()?;
    messages.sort_unstable_by_key(|(seq, _)| *seq);
    Ok(messages.into_iter().map(|(_, message)| message).collect())
}

/// A row as stored: text columns not yet interpreted. Interpretation can fail, and a row that
/// fails is reported as corrupt rather than guessed at.
struct RawRow {
    id: String,
    command: String,
    argv_json: String,
    cwd: Option<String>,
    env_keys_json: String,
    host: Option<String>,
    agent_id: Option<String>,
    session_key: Option<String>,
    resolved_path: Option<String>,
    security: Option<String>,
    ask: Option<String>,
    has_turn_source: bool,
    turn_source: TurnSource,
    binding_hash: Option<String>,
    binding_json: Option<String>,
    state: String,
    decision: Option<String>,
    resolved_by: Option<String>,
    reason: Option<String>,
    created_at_ms: i64,
    expires_at_ms: i64,
    resolved_at_ms: Option<i64>,
    consumed_at_ms: Option<i64>,
    requested_by: Option<String>,
    summary_json: Option<String>,
    tool_json: Option<String>,
}

impl RawRow {
    fn read(row: &Row<'_>) -> rusqlite::Result<RawRow> {
        Ok(RawRow {
            id: row.get(0)?,
            command: row.get(1)?,
            argv_json: row.get(2)?,
            cwd: row.get(3)?,
            env_keys_json: row.get(4)?,
            host: row.get(5)?,
            agent_id: row.get(6)?,
            session_key: row.get(7)?,
            resolved_path: row.get(8)?,
            security: row.get(9)?,
            ask: row.get(10)?,
            has_turn_source: row.get(11)?,
            turn_source: TurnSource {
                channel: row.get(12)?,
                to: row.get(13)?,
                account_id: row.get(14)?,
                thread_id: row.get(15)?,
            },
            binding_hash: row.get(16)?,
            binding_json: row.get(17)?,
            state: row.get(18)?,
            decision: row.get(19)?,
            resolved_by: row.get(20)?,
            reason: row.get(21)?,
            created_at_ms: row.get(22)?,
            expires_at_ms: row.get(23)?,
            resolved_at_ms: row.get(24)?,
            consumed_at_ms: row.get(25)?,
            requested_by: row.get(26)?,
            summary_json: row.get(27)?,
            tool_json: row.get(28)?,
        })
    }

    fn into_record(self, conn: &Connection) -> Result<ApprovalRecord, StoreError> {
        let id = self.id;
        let corrupt = |column: &'static str, detail: String| StoreError::CorruptRow {
            approval_id: id.clone(),
            column,
            detail,
        };
        let time = |column: &'static str, ms: i64| {
            u64::try_from(ms).map_err(|_| corrupt(column, format!("negative time {ms}")))
        };
        let decode_list = |column: &'static str, text: &str| {
            serde_json::from_str::<Vec<String>>(text).map_err(|e| corrupt(column, e.to_string()))
        };
        let request = ApprovalRequest {
            command: self.command,
            argv: decode_list("argv_json", &self.argv_json)?,
            cwd: self.cwd,
            env_keys: decode_list("env_keys_json", &self.env_keys_json)?,
            host: self.host,
            agent_id: self.agent_id,
            session_key: self.session_key,
            resolved_path: self.resolved_path,
            security: self
                .security
                .map(|s| s.parse().map_err(|e| corrupt("security", format!("{e}"))))
                .transpose()?,
            ask: self
                .ask
                .map(|s| s.parse().map_err(|e| corrupt("ask", format!("{e}"))))
                .transpose()?,
            turn_source: self.has_turn_source.then_some(self.turn_source),
            binding: match (self.binding_hash, self.binding_json) {
                (Some(hash), Some(json)) => Some(RunBinding { hash, json }),
                (None, None) => None,
                _ => return Err(corrupt("binding_json", "hash without json".to_owned())),
            },
            requested_by: self.requested_by,
            summary: self
                .summary_json
                .map(|text| super::summary::decode(&text).map_err(|e| corrupt("summary_json", e)))
                .transpose()?,
            tool: self
                .tool_json
                .map(|text| super::tools::decode_tool(&text).map_err(|e| corrupt("tool_json", e)))
                .transpose()?,
        };
        let messages = messages(conn, &id)?;
        Ok(ApprovalRecord {
            state: self
                .state
                .parse()
                .map_err(|e| corrupt("state", format!("{e}")))?,
            decision: self
                .decision
                .map(|d| d.parse().map_err(|e| corrupt("decision", format!("{e}"))))
                .transpose()?,
            request,
            resolved_by: self.resolved_by,
            reason: self.reason,
            created_at_ms: time("created_at_ms", self.created_at_ms)?,
            expires_at_ms: time("expires_at_ms", self.expires_at_ms)?,
            resolved_at_ms: self
                .resolved_at_ms
                .map(|ms| time("resolved_at_ms", ms))
                .transpose()?,
            consumed_at_ms: self
                .consumed_at_ms
                .map(|ms| time("consumed_at_ms", ms))
                .transpose()?,
            messages,
            id,
        })
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::*;

    #[test]
    fn reads_messages_without_re_preparing_the_statement() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        for id in ["a", "b", "c"] {
            messages(&conn, id).unwrap();
        }
        let stmt = conn.prepare_cached(MESSAGES_SQL).unwrap();
        assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0);
    }

    /// The steps of `sql`'s query plan, bound with `params`.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let params = ["1"; 8];
        let steps: Vec<String> = stmt
            .query_map(
                rusqlite::params_from_iter(params.iter().take(stmt.parameter_count())),
                |row| row.get(3),
            )
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        steps.join("; ")
    }

    #[test]
    fn every_lookup_by_id_searches_the_ordered_id_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        for sql in [
            FETCH_SQL.as_str(),
            MESSAGES_SQL,
            super::super::write_ops::RESOLVE_SQL,
            super::super::write_ops::CONSUME_SQL,
        ] {
            let plan = plan(&conn, sql);
            assert!(
                plan.contains("(id_order=? AND id=?)")
                    || plan.contains("(approval_id_order=? AND approval_id=?)"),
                "{sql}: {plan}"
            );
        }
    }

    #[test]
    fn the_statements_on_every_approval_build_no_temporary_b_tree() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        for sql in [
            super::super::write_ops::INSERT_SQL.as_str(),
            super::super::write_ops::RESOLVE_SQL,
            super::super::write_ops::CONSUME_SQL,
            FETCH_SQL.as_str(),
            MESSAGES_SQL,
        ] {
            let mut stmt = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
            let count = stmt.parameter_count();
            let opcodes: Vec<String> = stmt
                .query_map(
                    rusqlite::params_from_iter(std::iter::repeat_n("1", count)),
                    |row| row.get(1),
                )
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                !opcodes.iter().any(|op| op == "OpenEphemeral"),
                "{sql}: {opcodes:?}"
            );
        }
    }

    #[test]
    fn short_ids_are_read_from_an_index_not_the_table() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let plan = plan(&conn, ALL_IDS_SQL);
        assert!(plan.contains("COVERING INDEX"), "{plan}");
    }

    #[test]
    fn every_listing_walks_an_index_in_order_without_sorting() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let states = [None, Some(ApprovalState::Pending)];
        let agents = [None, Some("main".to_owned())];
        let orders = [ListOrder::OldestFirst, ListOrder::NewestFirst];
        for state in states {
            for agent_id in &agents {
                for order in orders {
                    let filter = ListFilter {
                        state,
                        agent_id: agent_id.clone(),
                        limit: 10,
                        order,
                    };
                    let plan = plan(&conn, &list_sql(&filter));
                    assert!(plan.contains("USING INDEX"), "{filter:?}: {plan}");
                    assert!(!plan.contains("TEMP B-TREE"), "{filter:?}: {plan}");
                }
            }
        }
    }
}
