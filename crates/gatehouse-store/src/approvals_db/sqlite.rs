//! [`ApprovalStore`] on an embedded SQLite database.
//!
//! WAL journal with `synchronous=FULL`: a committed answer survives a crash or power loss before
//! anyone is told about it. Each state change is one `UPDATE ... WHERE state = 'pending'` inside
//! an immediate transaction, so concurrent resolvers (threads, or processes sharing the file)
//! get exactly one winner.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, Row, Transaction, TransactionBehavior, params};

use super::record::{
    ApprovalRecord, ApprovalRequest, ApprovalState, ConsumeOutcome, DeliveredMessage, ListFilter,
    NewApproval, Resolution, ResolveOutcome, RunBinding, TurnSource,
};
use super::schema;
use super::store::ApprovalStore;
use crate::durable_fs::open_private;
use crate::error::StoreError;

/// Options for [`SqliteApprovalStore::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long a writer waits for another connection's transaction before failing.
    pub busy_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// The SQLite approval store. One connection, serialized by a mutex; open several stores on the
/// same file for parallelism across processes.
#[derive(Debug)]
pub struct SqliteApprovalStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

const COLUMNS: &str = "id, command, argv_json, cwd, env_keys_json, host, agent_id, session_key, \
     resolved_path, security, ask, has_turn_source, turn_channel, turn_to, turn_account_id, \
     turn_thread_id, binding_hash, binding_json, state, decision, resolved_by, reason, \
     created_at_ms, expires_at_ms, resolved_at_ms, consumed_at_ms";

impl SqliteApprovalStore {
    /// Opens (creating when missing, mode 0600) and migrates the database at `path`.
    pub fn open(path: impl Into<PathBuf>, options: SqliteOptions) -> Result<Self, StoreError> {
        let path = path.into();
        // Create the file ourselves so it is 0600 from its first byte; SQLite gives the -wal and
        // -shm files the database file's mode.
        drop(open_private(&path)?);
        let conn = Connection::open(&path)?;
        conn.busy_timeout(options.busy_timeout)?;
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::io(
                &path,
                "enable WAL",
                std::io::Error::other(format!("journal_mode is {mode}")),
            ));
        }
        conn.pragma_update(None, "synchronous", "FULL")?;
        Self::finish_open(conn, path)
    }

    /// A private database that lives and dies with this value: the real store, without a file,
    /// for tests of the crates above and for `--ephemeral` runs.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::finish_open(Connection::open_in_memory()?, PathBuf::from(":memory:"))
    }

    fn finish_open(mut conn: Connection, path: PathBuf) -> Result<Self, StoreError> {
        conn.pragma_update(None, "foreign_keys", true)?;
        schema::migrate(&mut conn)?;
        Ok(SqliteApprovalStore {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// The database file (`:memory:` for [`SqliteApprovalStore::open_in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs SQLite's own consistency check; `ok` means the file is sound.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let conn = self.conn();
        Ok(conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))?)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the guard cannot leave a transaction open (it rolls back on
        // drop), so the connection is still consistent.
        self.conn
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn write_tx<T>(
        &self,
        body: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let result = body(&tx)?;
        tx.commit()?;
        Ok(result)
    }
}

impl ApprovalStore for SqliteApprovalStore {
    fn insert(&self, approval: &NewApproval) -> Result<ApprovalRecord, StoreError> {
        self.write_tx(|tx| {
            if fetch(tx, &approval.id)?.is_some() {
                return Err(StoreError::DuplicateId {
                    approval_id: approval.id.clone(),
                });
            }
            let r = &approval.request;
            let turn = r.turn_source.clone().unwrap_or_default();
            tx.execute(
                &format!(
                    "INSERT INTO approvals ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \
                     ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, 'pending', NULL, NULL, \
                     NULL, ?19, ?20, NULL, NULL)"
                ),
                params![
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
                ],
            )?;
            fetch_required(tx, &approval.id)
        })
    }

    fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        fetch(&self.conn(), id)
    }

    fn find_by_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let pattern = format!("{}%", escape_like(prefix));
        query_many(
            &self.conn(),
            &format!(
                "SELECT {COLUMNS} FROM approvals WHERE id LIKE ?1 ESCAPE '\\' \
                 ORDER BY created_at_ms, id LIMIT ?2"
            ),
            params![pattern, limit_param(limit)],
        )
    }

    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        query_many(
            &self.conn(),
            &format!(
                "SELECT {COLUMNS} FROM approvals \
                 WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR agent_id = ?2) \
                 ORDER BY created_at_ms, id LIMIT ?3"
            ),
            params![
                filter.state.map(ApprovalState::as_str),
                filter.agent_id,
                limit_param(filter.limit)
            ],
        )
    }

    fn resolve(
        &self,
        id: &str,
        resolution: &Resolution,
        at_ms: u64,
    ) -> Result<ResolveOutcome, StoreError> {
        let (resolved_by, reason) = match resolution {
            Resolution::Decided { resolved_by, .. } => (resolved_by.as_deref(), None),
            Resolution::Expired { reason } | Resolution::Cancelled { reason } => {
                (None, Some(reason.as_str()))
            }
        };
        self.write_tx(|tx| {
            let changed = tx.execute(
                "UPDATE approvals SET state = ?2, decision = ?3, resolved_by = ?4, reason = ?5, \
                 resolved_at_ms = ?6 WHERE id = ?1 AND state = 'pending'",
                params![
                    id,
                    resolution.target_state().as_str(),
                    resolution.decision().map(|d| d.as_str()),
                    resolved_by,
                    reason,
                    sql_ms(at_ms),
                ],
            )?;
            let record = fetch_required(tx, id)?;
            Ok(if changed == 1 {
                ResolveOutcome::Applied(record)
            } else if resolution.matches(&record) {
                ResolveOutcome::Repeated(record)
            } else {
                ResolveOutcome::Rejected { winner: record }
            })
        })
    }

    fn consume_allow_once(&self, id: &str, at_ms: u64) -> Result<ConsumeOutcome, StoreError> {
        self.write_tx(|tx| {
            let changed = tx.execute(
                "UPDATE approvals SET consumed_at_ms = ?2 WHERE id = ?1 AND state = 'allowed' \
                 AND decision = 'allow-once' AND consumed_at_ms IS NULL",
                params![id, sql_ms(at_ms)],
            )?;
            let record = fetch_required(tx, id)?;
            Ok(if changed == 1 {
                ConsumeOutcome::Consumed(record)
            } else if record.consumed_at_ms.is_some() {
                ConsumeOutcome::AlreadyConsumed(record)
            } else {
                ConsumeOutcome::NotAllowOnce(record)
            })
        })
    }

    fn record_delivery(&self, id: &str, message: &DeliveredMessage) -> Result<(), StoreError> {
        self.write_tx(|tx| {
            if fetch(tx, id)?.is_none() {
                return Err(StoreError::NotFound {
                    approval_id: id.to_owned(),
                });
            }
            tx.execute(
                "INSERT OR IGNORE INTO approval_messages \
                 (approval_id, channel, account_id, chat_id, message_id, thread_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    id,
                    message.channel,
                    message.account_id,
                    message.chat_id,
                    message.message_id,
                    message.thread_id
                ],
            )?;
            Ok(())
        })
    }

    fn cancel_all_pending(
        &self,
        reason: &str,
        at_ms: u64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.write_tx(|tx| {
            let ids: Vec<String> = {
                let mut stmt = tx.prepare(
                    "SELECT id FROM approvals WHERE state = 'pending' ORDER BY created_at_ms, id",
                )?;
                stmt.query_map([], |row| row.get(0))?
                    .collect::<Result<_, _>>()?
            };
            tx.execute(
                "UPDATE approvals SET state = 'cancelled', reason = ?1, resolved_at_ms = ?2 \
                 WHERE state = 'pending'",
                params![reason, sql_ms(at_ms)],
            )?;
            ids.iter().map(|id| fetch_required(tx, id)).collect()
        })
    }

    fn prune_terminal_before(&self, cutoff_ms: u64) -> Result<usize, StoreError> {
        self.write_tx(|tx| {
            Ok(tx.execute(
                "DELETE FROM approvals WHERE state <> 'pending' AND resolved_at_ms < ?1",
                params![sql_ms(cutoff_ms)],
            )?)
        })
    }
}

/// Times are u64 in the API and INTEGER (i64) in SQLite; saturating is exact for any real time.
fn sql_ms(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn limit_param(limit: usize) -> i64 {
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

fn encode(values: &[String], what: &'static str) -> Result<String, StoreError> {
    serde_json::to_string(values).map_err(|source| StoreError::Encode { what, source })
}

fn fetch(conn: &Connection, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
    let raw = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"),
            [id],
            RawRow::read,
        )
        .optional()?;
    raw.map(|raw| raw.into_record(conn)).transpose()
}

fn fetch_required(conn: &Connection, id: &str) -> Result<ApprovalRecord, StoreError> {
    fetch(conn, id)?.ok_or_else(|| StoreError::NotFound {
        approval_id: id.to_owned(),
    })
}

fn query_many(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let raws: Vec<RawRow> = {
        let mut stmt = conn.prepare(sql)?;
        stmt.query_map(params, RawRow::read)?
            .collect::<Result<_, _>>()?
    };
    raws.into_iter().map(|raw| raw.into_record(conn)).collect()
}

fn messages(conn: &Connection, id: &str) -> Result<Vec<DeliveredMessage>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT channel, account_id, chat_id, message_id, thread_id FROM approval_messages \
         WHERE approval_id = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([id], |row| {
        Ok(DeliveredMessage {
            channel: row.get(0)?,
            account_id: row.get(1)?,
            chat_id: row.get(2)?,
            message_id: row.get(3)?,
            thread_id: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
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
