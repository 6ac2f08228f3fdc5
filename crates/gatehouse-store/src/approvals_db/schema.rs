//! The approvals database schema and its migrations.
//!
//! `PRAGMA user_version` records how many migrations have run. Each migration runs in its own
//! transaction, so a crash mid-migration leaves the previous version intact. A database newer
//! than this build is refused rather than written, since writing could violate its invariants.

use rusqlite::{Connection, TransactionBehavior};

use super::ids;
use crate::error::StoreError;

/// Migrations in order; entry `n` moves the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: approvals with their request, lifecycle and consumption; delivered messages.
    r#"
    CREATE TABLE approvals (
        id              TEXT PRIMARY KEY NOT NULL,
        command         TEXT NOT NULL,
        argv_json       TEXT NOT NULL,
        cwd             TEXT,
        env_keys_json   TEXT NOT NULL,
        host            TEXT,
        agent_id        TEXT,
        session_key     TEXT,
        resolved_path   TEXT,
        security        TEXT CHECK (security IN ('deny', 'allowlist', 'full')),
        ask             TEXT CHECK (ask IN ('off', 'on-miss', 'always')),
        has_turn_source INTEGER NOT NULL CHECK (has_turn_source IN (0, 1)),
        turn_channel    TEXT,
        turn_to         TEXT,
        turn_account_id TEXT,
        turn_thread_id  TEXT,
        binding_hash    TEXT,
        binding_json    TEXT,
        state           TEXT NOT NULL
                        CHECK (state IN ('pending', 'allowed', 'denied', 'expired', 'cancelled')),
        decision        TEXT CHECK (decision IN ('allow-once', 'allow-always', 'deny')),
        resolved_by     TEXT,
        reason          TEXT,
        created_at_ms   INTEGER NOT NULL,
        expires_at_ms   INTEGER NOT NULL,
        resolved_at_ms  INTEGER,
        consumed_at_ms  INTEGER,
        CHECK ((state = 'pending') = (resolved_at_ms IS NULL)),
        CHECK ((state IN ('allowed', 'denied')) = (decision IS NOT NULL)),
        CHECK (state <> 'allowed' OR decision <> 'deny'),
        CHECK (state <> 'denied' OR decision = 'deny'),
        CHECK (consumed_at_ms IS NULL OR (state = 'allowed' AND decision = 'allow-once')),
        CHECK ((binding_hash IS NULL) = (binding_json IS NULL))
    ) STRICT;
    CREATE INDEX approvals_by_state ON approvals (state, created_at_ms);
    CREATE INDEX approvals_by_agent ON approvals (agent_id, created_at_ms);
    CREATE INDEX approvals_by_resolution ON approvals (resolved_at_ms) WHERE state <> 'pending';

    CREATE TABLE approval_messages (
        seq         INTEGER PRIMARY KEY,
        approval_id TEXT NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
        channel     TEXT NOT NULL,
        account_id  TEXT,
        chat_id     TEXT NOT NULL,
        message_id  TEXT NOT NULL,
        thread_id   TEXT
    ) STRICT;
    CREATE UNIQUE INDEX approval_messages_unique
        ON approval_messages (approval_id, channel, ifnull(account_id, ''), chat_id, message_id);
    "#,
    // 2: listings walk an index in the order they return, newest or oldest first, and stop at
    // their limit; before, a listing without a filter read and sorted the whole history.
    r#"
    DROP INDEX approvals_by_state;
    DROP INDEX approvals_by_agent;
    CREATE INDEX approvals_by_state ON approvals (state, created_at_ms, id);
    CREATE INDEX approvals_by_agent ON approvals (agent_id, created_at_ms, id);
    CREATE INDEX approvals_by_created ON approvals (created_at_ms, id);
    "#,
    // 3: who asked, so the requester can still see its approvals after a restart. Rows from
    // before have none: only operators see those.
    r#"
    ALTER TABLE approvals ADD COLUMN requested_by TEXT;
    "#,
    // 4: approvals are found by `(id_order, id)` (see `ids`): an index on the random id alone
    // took a write to a random page per approval. SQLite cannot drop a primary key, so both
    // tables are rebuilt, and messages point at their approval through the same pair.
    r#"
    ALTER TABLE approval_messages RENAME TO approval_messages_v3;
    ALTER TABLE approvals RENAME TO approvals_v3;

    CREATE TABLE approvals (
        id              TEXT NOT NULL,
        id_order        INTEGER NOT NULL,
        command         TEXT NOT NULL,
        argv_json       TEXT NOT NULL,
        cwd             TEXT,
        env_keys_json   TEXT NOT NULL,
        host            TEXT,
        agent_id        TEXT,
        session_key     TEXT,
        resolved_path   TEXT,
        security        TEXT CHECK (security IN ('deny', 'allowlist', 'full')),
        ask             TEXT CHECK (ask IN ('off', 'on-miss', 'always')),
        has_turn_source INTEGER NOT NULL CHECK (has_turn_source IN (0, 1)),
        turn_channel    TEXT,
        turn_to         TEXT,
        turn_account_id TEXT,
        turn_thread_id  TEXT,
        binding_hash    TEXT,
        binding_json    TEXT,
        state           TEXT NOT NULL
                        CHECK (state IN ('pending', 'allowed', 'denied', 'expired', 'cancelled')),
        decision        TEXT CHECK (decision IN ('allow-once', 'allow-always', 'deny')),
        resolved_by     TEXT,
        reason          TEXT,
        created_at_ms   INTEGER NOT NULL,
        expires_at_ms   INTEGER NOT NULL,
        resolved_at_ms  INTEGER,
        consumed_at_ms  INTEGER,
        requested_by    TEXT,
        CHECK ((state = 'pending') = (resolved_at_ms IS NULL)),
        CHECK ((state IN ('allowed', 'denied')) = (decision IS NOT NULL)),
        CHECK (state <> 'allowed' OR decision <> 'deny'),
        CHECK (state <> 'denied' OR decision = 'deny'),
        CHECK (consumed_at_ms IS NULL OR (state = 'allowed' AND decision = 'allow-once')),
        CHECK ((binding_hash IS NULL) = (binding_json IS NULL))
    ) STRICT;
    INSERT INTO approvals
        SELECT id, gatehouse_id_order(id), command, argv_json, cwd, env_keys_json, host,
               agent_id, session_key, resolved_path, security, ask, has_turn_source,
               turn_channel, turn_to, turn_account_id, turn_thread_id, binding_hash,
               binding_json, state, decision, resolved_by, reason, created_at_ms,
               expires_at_ms, resolved_at_ms, consumed_at_ms, requested_by
        FROM approvals_v3;
    -- Built after the copy, in one sorted pass (the old ids all order as 0, so inserting
    -- into it row by row lands at random); before the messages, whose key it is.
    CREATE UNIQUE INDEX approvals_by_id ON approvals (id_order, id);

    CREATE TABLE approval_messages (
        seq               INTEGER PRIMARY KEY,
        approval_id_order INTEGER NOT NULL,
        approval_id       TEXT NOT NULL,
        channel           TEXT NOT NULL,
        account_id        TEXT,
        chat_id           TEXT NOT NULL,
        message_id        TEXT NOT NULL,
        thread_id         TEXT,
        FOREIGN KEY (approval_id_order, approval_id)
            REFERENCES approvals (id_order, id) ON DELETE CASCADE
    ) STRICT;
    -- A message whose approval is gone (only a hand edit with foreign keys off leaves one)
    -- shows nothing anyone can find, and would fail the new key: it is not carried over.
    INSERT INTO approval_messages
        SELECT seq, gatehouse_id_order(approval_id), approval_id, channel, account_id, chat_id,
               message_id, thread_id
        FROM approval_messages_v3
        WHERE approval_id IN (SELECT id FROM approvals_v3);

    DROP TABLE approval_messages_v3;
    DROP TABLE approvals_v3;
    CREATE INDEX approvals_by_state ON approvals (state, created_at_ms, id);
    CREATE INDEX approvals_by_agent ON approvals (agent_id, created_at_ms, id);
    CREATE INDEX approvals_by_created ON approvals (created_at_ms, id);
    CREATE INDEX approvals_by_resolution ON approvals (resolved_at_ms) WHERE state <> 'pending';
    CREATE UNIQUE INDEX approval_messages_unique ON approval_messages
        (approval_id_order, approval_id, channel, ifnull(account_id, ''), chat_id, message_id);
    "#,
    // 5: the same tables with each column's allowed values checked by `=` comparisons instead of
    // `IN` lists: SQLite evaluates `x IN (three or more constants)` by filling a temporary
    // b-tree with the list each time the statement runs, which was four b-trees per insert
    // and two per decision, on the writer thread every approval waits for. Both tables are
    // rebuilt, as in 4, because renaming the parent takes the children's foreign keys with it.
    r#"
    ALTER TABLE approval_messages RENAME TO approval_messages_v4;
    ALTER TABLE approvals RENAME TO approvals_v4;

    CREATE TABLE approvals (
        id              TEXT NOT NULL,
        id_order        INTEGER NOT NULL,
        command         TEXT NOT NULL,
        argv_json       TEXT NOT NULL,
        cwd             TEXT,
        env_keys_json   TEXT NOT NULL,
        host            TEXT,
        agent_id        TEXT,
        session_key     TEXT,
        resolved_path   TEXT,
        security        TEXT
                        CHECK (security = 'deny' OR security = 'allowlist' OR security = 'full'),
        ask             TEXT CHECK (ask = 'off' OR ask = 'on-miss' OR ask = 'always'),
        -- Two values: SQLite compares them one by one, as it does any list of two or fewer.
        has_turn_source INTEGER NOT NULL CHECK (has_turn_source IN (0, 1)),
        turn_channel    TEXT,
        turn_to         TEXT,
        turn_account_id TEXT,
        turn_thread_id  TEXT,
        binding_hash    TEXT,
        binding_json    TEXT,
        state           TEXT NOT NULL
                        CHECK (state = 'pending' OR state = 'allowed' OR state = 'denied'
                               OR state = 'expired' OR state = 'cancelled'),
        decision        TEXT CHECK (decision = 'allow-once' OR decision = 'allow-always'
                                    OR decision = 'deny'),
        resolved_by     TEXT,
        reason          TEXT,
        created_at_ms   INTEGER NOT NULL,
        expires_at_ms   INTEGER NOT NULL,
        resolved_at_ms  INTEGER,
        consumed_at_ms  INTEGER,
        requested_by    TEXT,
        CHECK ((state = 'pending') = (resolved_at_ms IS NULL)),
        CHECK ((state = 'allowed' OR state = 'denied') = (decision IS NOT NULL)),
        CHECK (state <> 'allowed' OR decision <> 'deny'),
        CHECK (state <> 'denied' OR decision = 'deny'),
        CHECK (consumed_at_ms IS NULL OR (state = 'allowed' AND decision = 'allow-once')),
        CHECK ((binding_hash IS NULL) = (binding_json IS NULL))
    ) STRICT;
    INSERT INTO approvals (
            id, id_order, command, argv_json, cwd, env_keys_json, host, agent_id,
            session_key, resolved_path, security, ask, has_turn_source, turn_channel, turn_to,
            turn_account_id, turn_thread_id, binding_hash, binding_json, state, decision,
            resolved_by, reason, created_at_ms, expires_at_ms, resolved_at_ms, consumed_at_ms,
            requested_by)
        SELECT
            id, id_order, command, argv_json, cwd, env_keys_json, host, agent_id,
            session_key, resolved_path, security, ask, has_turn_source, turn_channel, turn_to,
            turn_account_id, turn_thread_id, binding_hash, binding_json, state, decision,
            resolved_by, reason, created_at_ms, expires_at_ms, resolved_at_ms, consumed_at_ms,
            requested_by
        FROM approvals_v4;
    -- Index names go with their renamed table; the messages copied next need this one.
    DROP INDEX approvals_by_id;
    CREATE UNIQUE INDEX approvals_by_id ON approvals (id_order, id);

    CREATE TABLE approval_messages (
        seq               INTEGER PRIMARY KEY,
        approval_id_order INTEGER NOT NULL,
        approval_id       TEXT NOT NULL,
        channel           TEXT NOT NULL,
        account_id        TEXT,
        chat_id           TEXT NOT NULL,
        message_id        TEXT NOT NULL,
        thread_id         TEXT,
        FOREIGN KEY (approval_id_order, approval_id)
            REFERENCES approvals (id_order, id) ON DELETE CASCADE
    ) STRICT;
    INSERT INTO approval_messages
        SELECT seq, approval_id_order, approval_id, channel, account_id, chat_id, message_id,
               thread_id
        FROM approval_messages_v4
        WHERE (approval_id_order, approval_id) IN (SELECT id_order, id FROM approvals_v4);

    DROP TABLE approval_messages_v4;
    DROP TABLE approvals_v4;
    CREATE INDEX approvals_by_state ON approvals (state, created_at_ms, id);
    CREATE INDEX approvals_by_agent ON approvals (agent_id, created_at_ms, id);
    CREATE INDEX approvals_by_created ON approvals (created_at_ms, id);
    CREATE INDEX approvals_by_resolution ON approvals (resolved_at_ms) WHERE state <> 'pending';
    CREATE UNIQUE INDEX approval_messages_unique ON approval_messages
        (approval_id_order, approval_id, channel, ifnull(account_id, ''), chat_id, message_id);
    "#,
    // 6: what approvers are shown of what runs (every program of the chain, the request's
    // variable names, what allow-always would store), as JSON. Rows from before have none.
    r#"
    ALTER TABLE approvals ADD COLUMN summary_json TEXT;
    "#,
    // 7: tool calls other than exec commands (`tools.call.request`): what was asked, as this
    // store's JSON (NULL for exec approvals), and the grants their allow-always answers made.
    // A grant takes its approval's id and outlives it: pruning history keeps every grant.
    r#"
    ALTER TABLE approvals ADD COLUMN tool_json TEXT;
    CREATE TABLE tool_grants (
        id            TEXT PRIMARY KEY NOT NULL,
        agent_id      TEXT NOT NULL,
        tool          TEXT NOT NULL,
        scope         TEXT NOT NULL CHECK (scope = 'tool' OR scope = 'paths' OR scope = 'hosts'),
        scope_json    TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        granted_by    TEXT
    ) STRICT;
    CREATE INDEX tool_grants_by_created ON tool_grants (created_at_ms, id);
    "#,
    // 8: the chat outbox: every chat message about an approval, recorded before it is sent,
    // with each attempt and its outcome (see `outbox`). Copies already delivered for approvals
    // still pending are carried over, so the start that cancels those approvals edits them.
    r#"
    CREATE TABLE chat_outbox (
        seq               INTEGER PRIMARY KEY,
        key               TEXT NOT NULL,
        approval_id_order INTEGER,
        approval_id       TEXT,
        kind              TEXT NOT NULL
                          CHECK (kind = 'card' OR kind = 'prompt' OR kind = 'notice'
                                 OR kind = 'fallback' OR kind = 'digest'),
        channel           TEXT NOT NULL,
        account_id        TEXT,
        direct            INTEGER NOT NULL CHECK (direct IN (0, 1)),
        target            TEXT NOT NULL,
        thread_id         TEXT,
        state             TEXT NOT NULL
                          CHECK (state = 'queued' OR state = 'sending' OR state = 'delivered'
                                 OR state = 'finished' OR state = 'skipped' OR state = 'lost'),
        attempts          INTEGER NOT NULL CHECK (attempts >= 0),
        chat_id           TEXT,
        message_id        TEXT,
        last_error        TEXT,
        last_error_at_ms  INTEGER,
        retry_at_ms       INTEGER,
        claimed_by        TEXT,
        lease_until_ms    INTEGER,
        created_at_ms     INTEGER NOT NULL,
        updated_at_ms     INTEGER NOT NULL,
        CHECK ((approval_id IS NULL) = (approval_id_order IS NULL)),
        CHECK ((approval_id IS NULL) = (kind = 'digest')),
        CHECK (state <> 'delivered' OR message_id IS NOT NULL),
        CHECK ((chat_id IS NULL) = (message_id IS NULL)),
        FOREIGN KEY (approval_id_order, approval_id)
            REFERENCES approvals (id_order, id) ON DELETE CASCADE
    ) STRICT;
    CREATE UNIQUE INDEX chat_outbox_by_key ON chat_outbox (key);
    CREATE INDEX chat_outbox_by_approval ON chat_outbox (approval_id_order, approval_id);
    CREATE INDEX chat_outbox_open ON chat_outbox (seq)
        WHERE state = 'queued' OR state = 'sending' OR state = 'delivered';
    CREATE INDEX chat_outbox_troubled ON chat_outbox (updated_at_ms)
        WHERE last_error IS NOT NULL;
    INSERT INTO chat_outbox (key, approval_id_order, approval_id, kind, channel, account_id,
            direct, target, thread_id, state, attempts, chat_id, message_id, created_at_ms,
            updated_at_ms)
        SELECT 'm' || m.seq, m.approval_id_order, m.approval_id, 'card', m.channel,
               m.account_id, 0, m.chat_id, m.thread_id, 'delivered', 1, m.chat_id,
               m.message_id, a.created_at_ms, a.created_at_ms
        FROM approval_messages m
        JOIN approvals a ON (a.id_order, a.id) = (m.approval_id_order, m.approval_id)
        WHERE a.state = 'pending'
        ORDER BY m.seq;
    "#,
];

/// The schema version this build writes.
pub(crate) const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`CURRENT_VERSION`]. A new database runs every migration too, as one
/// creation: only an existing database's steps are announced as upgrades.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    ids::define_sql_function(conn)?;
    let mut creating = false;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = schema_version(&tx)?;
        let Some(sql) = usize::try_from(version)
            .ok()
            .and_then(|v| MIGRATIONS.get(v))
        else {
            return Ok(());
        };
        if version == 0 {
            creating = true;
            tracing::info!(
                version = CURRENT_VERSION,
                "Creating the approvals database."
            );
        } else if !creating {
            // A rebuild takes seconds per million approvals, during which nothing else starts.
            tracing::info!(
                from = version,
                to = version + 1,
                "Upgrading the approvals database schema."
            );
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
    }
}

/// The database's schema version, refused when it is newer than this build: writing could
/// break the invariants of a schema it does not know. Shared by the migration and by the
/// read-only check, so the two refuse the same databases.
pub(crate) fn schema_version(conn: &Connection) -> Result<i64, StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > CURRENT_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: CURRENT_VERSION,
        });
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_columns(conn: &Connection, index: &str) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
            .unwrap();
        stmt.query_map([index], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn a_first_version_database_keeps_its_rows_and_gains_the_later_columns_and_indexes() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO approvals (id, command, argv_json, env_keys_json, has_turn_source, \
             state, created_at_ms, expires_at_ms) \
             VALUES ('kept', 'ls', '[]', '[]', 0, 'pending', 1, 2)",
            [],
        )
        .unwrap();

        migrate(&mut conn).unwrap();

        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, CURRENT_VERSION);
        let kept: (String, Option<String>) = conn
            .query_row("SELECT id, requested_by FROM approvals", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap();
        assert_eq!(kept, ("kept".to_owned(), None));
        assert_eq!(
            index_columns(&conn, "approvals_by_state"),
            ["state", "created_at_ms", "id"]
        );
        assert_eq!(
            index_columns(&conn, "approvals_by_agent"),
            ["agent_id", "created_at_ms", "id"]
        );
        assert_eq!(
            index_columns(&conn, "approvals_by_created"),
            ["created_at_ms", "id"]
        );
    }

    #[test]
    fn a_third_version_database_keeps_its_rows_and_messages_under_the_ordered_id_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        // As the store opens it: with foreign keys enforced, a careless rebuild would cascade.
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        for sql in &MIGRATIONS[..3] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 3).unwrap();
        let minted = gatehouse_approvals::mint_approval_id(1_234).to_string();
        // Left by a hand edit with foreign keys off; it must not stop the upgrade.
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        conn.execute(
            "INSERT INTO approval_messages (approval_id, channel, chat_id, message_id) \
             VALUES ('gone', 'slack', 'C1', 'm0')",
            [],
        )
        .unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        for id in ["foreign", minted.as_str()] {
            conn.execute(
                "INSERT INTO approvals (id, command, argv_json, env_keys_json, has_turn_source, \
                 state, created_at_ms, expires_at_ms, requested_by) \
                 VALUES (?1, 'ls', '[]', '[]', 0, 'pending', 1, 2, 'agent')",
                [id],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO approval_messages (approval_id, channel, chat_id, message_id) \
                 VALUES (?1, 'slack', 'C1', ?1)",
                [id],
            )
            .unwrap();
        }

        migrate(&mut conn).unwrap();

        let orders: Vec<(String, i64, i64)> = conn
            .prepare(
                "SELECT a.id, a.id_order, count(m.seq) FROM approvals a \
                 JOIN approval_messages m ON (m.approval_id_order, m.approval_id) = (a.id_order, a.id) \
                 GROUP BY a.id ORDER BY a.id_order",
            )
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            orders,
            [("foreign".to_owned(), 0, 1), (minted.clone(), 1_234, 1)]
        );
        let record = super::super::rows::fetch(&conn, &minted).unwrap().unwrap();
        assert_eq!(record.request.requested_by.as_deref(), Some("agent"));
        assert_eq!(record.messages.len(), 1);
        assert_eq!(index_columns(&conn, "approvals_by_id"), ["id_order", "id"]);
        assert_eq!(
            index_columns(&conn, "approvals_by_resolution"),
            ["resolved_at_ms"]
        );
        let leftovers: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%_v3'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(leftovers, 0);
        // Messages still go with their approval.
        conn.execute("DELETE FROM approvals WHERE id = 'foreign'", [])
            .unwrap();
        let messages: i64 = conn
            .query_row("SELECT count(*) FROM approval_messages", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(messages, 1);
    }

    /// The columns of `table`, in order.
    fn columns(conn: &Connection, table: &str) -> Vec<String> {
        conn.prepare(&format!(
            "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
        ))
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    /// Every row of `table`, each column quoted, in rowid order: a rebuild must keep them all.
    fn dump(conn: &Connection, table: &str) -> Vec<String> {
        dump_columns(conn, table, &columns(conn, table))
    }

    /// Every row of `table` in these `columns`: what a migration that adds columns must keep.
    fn dump_columns(conn: &Connection, table: &str, columns: &[String]) -> Vec<String> {
        let quoted: Vec<String> = columns.iter().map(|c| format!("quote({c})")).collect();
        conn.prepare(&format!(
            "SELECT {} FROM {table} ORDER BY rowid",
            quoted.join(" || ',' || ")
        ))
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    #[test]
    fn a_fourth_version_database_keeps_every_row_and_message_and_still_refuses_unknown_values() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        ids::define_sql_function(&conn).unwrap();
        for sql in &MIGRATIONS[..4] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 4).unwrap();
        conn.execute_batch(
            "INSERT INTO approvals (id, id_order, command, argv_json, cwd, env_keys_json, \
             agent_id, security, ask, has_turn_source, turn_channel, turn_to, binding_hash, \
             binding_json, state, decision, resolved_by, created_at_ms, expires_at_ms, \
             resolved_at_ms, consumed_at_ms, requested_by) VALUES \
             ('ran', 7, 'make deploy', '[\"make\"]', '/srv', '[]', 'main', 'allowlist', \
              'on-miss', 1, 'slack', 'C1', 'h', '{}', 'allowed', 'allow-once', 'op', 1, 2, 3, \
              4, 'agent'), \
             ('waiting', 9, 'ls', '[]', NULL, '[]', NULL, NULL, NULL, 0, NULL, NULL, NULL, \
              NULL, 'pending', NULL, NULL, 5, 6, NULL, NULL, NULL); \
             INSERT INTO approval_messages (approval_id_order, approval_id, channel, chat_id, \
             message_id) VALUES (7, 'ran', 'slack', 'C1', 'm1'), (9, 'waiting', 'slack', \
             'C1', 'm2');",
        )
        .unwrap();
        let approval_columns = columns(&conn, "approvals");
        let message_columns = columns(&conn, "approval_messages");
        let approvals = dump_columns(&conn, "approvals", &approval_columns);
        let messages = dump_columns(&conn, "approval_messages", &message_columns);

        migrate(&mut conn).unwrap();

        assert_eq!(
            dump_columns(&conn, "approvals", &approval_columns),
            approvals
        );
        assert_eq!(
            dump_columns(&conn, "approval_messages", &message_columns),
            messages
        );
        // Columns added since version 4 are empty for these rows.
        let added: Vec<String> = columns(&conn, "approvals")
            .into_iter()
            .filter(|column| !approval_columns.contains(column))
            .collect();
        assert_eq!(added, ["summary_json", "tool_json"]);
        assert_eq!(
            dump_columns(&conn, "approvals", &added),
            ["NULL,NULL", "NULL,NULL"]
        );
        for (column, value) in [("state", "'bogus'"), ("security", "'some'"), ("ask", "'x'")] {
            let changed = conn.execute(
                &format!("UPDATE approvals SET {column} = {value} WHERE id = 'waiting'"),
                [],
            );
            assert!(changed.is_err(), "{column} = {value} was accepted");
        }
        let leftovers: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%_v4'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(leftovers, 0);
        assert_eq!(index_columns(&conn, "approvals_by_id"), ["id_order", "id"]);
        // Messages still go with their approval.
        conn.execute("DELETE FROM approvals WHERE id = 'ran'", [])
            .unwrap();
        assert_eq!(
            dump_columns(&conn, "approval_messages", &message_columns).len(),
            1
        );
    }

    #[test]
    fn a_fifth_version_database_keeps_every_row_and_gains_tool_requests_and_grants() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        ids::define_sql_function(&conn).unwrap();
        for sql in &MIGRATIONS[..5] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute_batch(
            "INSERT INTO approvals (id, id_order, command, argv_json, env_keys_json, \
             has_turn_source, state, created_at_ms, expires_at_ms) VALUES \
             ('old', 3, 'ls', '[]', '[]', 0, 'pending', 1, 2);",
        )
        .unwrap();
        let kept = columns(&conn, "approvals");
        let before = dump(&conn, "approvals");

        migrate(&mut conn).unwrap();

        assert_eq!(dump_columns(&conn, "approvals", &kept), before);
        let tool: Option<String> = conn
            .query_row(
                "SELECT tool_json FROM approvals WHERE id = 'old'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(tool, None);
        let refused = conn.execute(
            "INSERT INTO tool_grants (id, agent_id, tool, scope, scope_json, created_at_ms) \
             VALUES ('g', 'main', 'write', 'everything', '[]', 1)",
            [],
        );
        assert!(refused.is_err(), "an unknown scope was accepted");
    }
}
