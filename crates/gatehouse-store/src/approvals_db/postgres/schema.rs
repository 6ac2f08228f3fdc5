//! The PostgreSQL schema and its migrations.
//!
//! `gatehouse_schema` records each migration applied. Every replica migrates on start, all
//! migrations in one transaction under a transaction-scoped advisory lock: replicas starting at
//! once take turns, and each migration is applied exactly once. A database migrated by a newer
//! Gatehouse is refused, as the SQLite store refuses one, since writing could break the
//! invariants of a schema this build does not know.
//!
//! The tables hold what the SQLite store's do, with the same checks; ids are compared
//! byte-wise (`COLLATE "C"`), as SQLite compares them, so listings break ties alike.

use deadpool_postgres::Object;

use super::ops::Queries;

use crate::error::StoreError;

/// The advisory lock key migrations are applied under (`"gatehous"` as a big-endian i64), so
/// it cannot be taken by accident by another application's small integer keys.
const MIGRATION_LOCK: i64 = 0x6761_7465_686f_7573;

/// Migrations in order; entry `n` moves the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: approvals, their delivered messages and the tool grants allow-always made, as the
    // SQLite store's seventh version holds them, plus each UUID id's short id, unique by
    // constraint: replicas do not see each other's short ids in memory.
    r#"
    CREATE TABLE approvals (
        id              text COLLATE "C" PRIMARY KEY,
        short_id        bigint,
        command         text NOT NULL,
        argv_json       text NOT NULL,
        cwd             text,
        env_keys_json   text NOT NULL,
        host            text,
        agent_id        text,
        session_key     text,
        resolved_path   text,
        security        text CHECK (security IN ('deny', 'allowlist', 'full')),
        ask             text CHECK (ask IN ('off', 'on-miss', 'always')),
        has_turn_source boolean NOT NULL,
        turn_channel    text,
        turn_to         text,
        turn_account_id text,
        turn_thread_id  text,
        binding_hash    text,
        binding_json    text,
        state           text NOT NULL
                        CHECK (state IN ('pending', 'allowed', 'denied', 'expired', 'cancelled')),
        decision        text CHECK (decision IN ('allow-once', 'allow-always', 'deny')),
        resolved_by     text,
        reason          text,
        created_at_ms   bigint NOT NULL,
        expires_at_ms   bigint NOT NULL,
        resolved_at_ms  bigint,
        consumed_at_ms  bigint,
        requested_by    text,
        summary_json    text,
        tool_json       text,
        CHECK ((state = 'pending') = (resolved_at_ms IS NULL)),
        CHECK ((state IN ('allowed', 'denied')) = (decision IS NOT NULL)),
        CHECK (state <> 'allowed' OR decision <> 'deny'),
        CHECK (state <> 'denied' OR decision = 'deny'),
        CHECK (consumed_at_ms IS NULL OR (state = 'allowed' AND decision = 'allow-once')),
        CHECK ((binding_hash IS NULL) = (binding_json IS NULL))
    );
    CREATE UNIQUE INDEX approvals_short_id ON approvals (short_id);
    CREATE INDEX approvals_by_prefix ON approvals (lower(id) text_pattern_ops);
    CREATE INDEX approvals_by_state ON approvals (state, created_at_ms, id);
    CREATE INDEX approvals_by_agent ON approvals (agent_id, created_at_ms, id);
    CREATE INDEX approvals_by_created ON approvals (created_at_ms, id);
    CREATE INDEX approvals_by_resolution ON approvals (resolved_at_ms) WHERE state <> 'pending';

    CREATE TABLE approval_messages (
        seq         bigserial PRIMARY KEY,
        approval_id text COLLATE "C" NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
        channel     text NOT NULL,
        account_id  text,
        chat_id     text NOT NULL,
        message_id  text NOT NULL,
        thread_id   text
    );
    CREATE UNIQUE INDEX approval_messages_unique ON approval_messages
        (approval_id, channel, coalesce(account_id, ''), chat_id, message_id);

    CREATE TABLE tool_grants (
        id            text COLLATE "C" PRIMARY KEY,
        agent_id      text NOT NULL,
        tool          text NOT NULL,
        scope         text NOT NULL CHECK (scope IN ('tool', 'paths', 'hosts')),
        scope_json    text NOT NULL,
        created_at_ms bigint NOT NULL,
        granted_by    text
    );
    CREATE INDEX tool_grants_by_created ON tool_grants (created_at_ms, id);
    "#,
    // 2: whether each replica can reach an approver, heartbeated (`presence`), so a request
    // on one replica is not expired for want of a route another replica has. Dated by the
    // server's clock, so replicas' clocks do not matter.
    r#"
    CREATE TABLE gatehouse_routes (
        replica   text COLLATE "C" PRIMARY KEY,
        reachable boolean NOT NULL,
        seen_at   timestamptz NOT NULL
    );
    "#,
];

/// The schema version this build writes.
pub(super) const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`CURRENT_VERSION`], or refuses one newer than this build.
pub(super) async fn migrate(client: &mut Object) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.batch_execute(&format!(
        "SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); \
         CREATE TABLE IF NOT EXISTS gatehouse_schema ( \
             version    bigint PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())"
    ))
    .await?;
    let version = recorded_version(&tx).await?;
    let pending = MIGRATIONS
        .iter()
        .zip(1_i64..)
        .skip(usize::try_from(version).unwrap_or(usize::MAX));
    for (sql, to) in pending {
        tracing::info!(
            from = to - 1,
            to,
            "Migrating the approvals database (PostgreSQL)."
        );
        tx.batch_execute(sql).await?;
        tx.execute("INSERT INTO gatehouse_schema (version) VALUES ($1)", &[&to])
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The database's schema version, 0 before any gateway migrated it, refused when newer than
/// this build; writes nothing.
pub(super) async fn schema_version(q: &impl Queries) -> Result<i64, StoreError> {
    let rows = q
        .rows("SELECT to_regclass('gatehouse_schema') IS NOT NULL", &[])
        .await?;
    let migrated: bool = match rows.first() {
        Some(row) => row.try_get(0)?,
        None => false,
    };
    if !migrated {
        return Ok(0);
    }
    recorded_version(q).await
}

/// The newest migration `gatehouse_schema` records, refused when newer than this build.
async fn recorded_version(q: &impl Queries) -> Result<i64, StoreError> {
    let rows = q
        .rows(
            "SELECT coalesce(max(version), 0) FROM gatehouse_schema",
            &[],
        )
        .await?;
    let version: i64 = match rows.first() {
        Some(row) => row.try_get(0)?,
        None => 0,
    };
    if version > CURRENT_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            supported: CURRENT_VERSION,
        });
    }
    Ok(version)
}
