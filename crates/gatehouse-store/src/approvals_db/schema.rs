//! The approvals database schema and its migrations.
//!
//! `PRAGMA user_version` records how many migrations have run. Each migration runs in its own
//! transaction, so a crash mid-migration leaves the previous version intact. A database newer
//! than this build is refused rather than written, since writing could violate its invariants.

use rusqlite::{Connection, TransactionBehavior};

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
];

/// The schema version this build writes.
pub(crate) const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`CURRENT_VERSION`].
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version > CURRENT_VERSION {
            return Err(StoreError::SchemaTooNew {
                found: version,
                supported: CURRENT_VERSION,
            });
        }
        let Some(sql) = usize::try_from(version)
            .ok()
            .and_then(|v| MIGRATIONS.get(v))
        else {
            return Ok(());
        };
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
    }
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
}
