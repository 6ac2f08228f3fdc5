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

use std::time::{Duration, Instant};

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
    // 2: the event log every gateway numbers approval events by (see `events`): one row per
    // creation and per settling, written in the transition's transaction, numbered by the
    // counter row `event_log` (whose row lock makes the numbers follow commit order), and
    // the instance id naming this database's sequence to clients.
    r#"
    CREATE TABLE event_log (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        instance text NOT NULL,
        last_seq bigint NOT NULL CHECK (last_seq >= 0)
    );
    INSERT INTO event_log (instance, last_seq) VALUES (gen_random_uuid()::text, 0);

    CREATE TABLE approval_events (
        seq         bigint PRIMARY KEY,
        approval_id text COLLATE "C" NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
        kind        text NOT NULL
                    CHECK (kind IN ('requested', 'allowed', 'denied', 'expired', 'cancelled'))
    );
    CREATE INDEX approval_events_by_approval ON approval_events (approval_id);
    "#,
    // 3: the chat outbox, as the SQLite store's eighth version holds it, and the button tokens
    // of cards sent, so a gateway taking the chat connections over honours presses on cards
    // another sent (docs/high-availability.md, "Chat on replicas").
    r#"
    CREATE TABLE chat_outbox (
        seq              bigserial PRIMARY KEY,
        key              text COLLATE "C" NOT NULL UNIQUE,
        approval_id      text COLLATE "C" REFERENCES approvals (id) ON DELETE CASCADE,
        kind             text NOT NULL
                         CHECK (kind IN ('card', 'prompt', 'notice', 'fallback', 'digest')),
        channel          text NOT NULL,
        account_id       text,
        direct           boolean NOT NULL,
        target           text NOT NULL,
        thread_id        text,
        state            text NOT NULL CHECK (state IN ('queued', 'sending', 'delivered',
                                                        'finished', 'skipped', 'lost')),
        attempts         bigint NOT NULL CHECK (attempts >= 0),
        chat_id          text,
        message_id       text,
        last_error       text,
        last_error_at_ms bigint,
        retry_at_ms      bigint,
        claimed_by       text,
        lease_until_ms   bigint,
        created_at_ms    bigint NOT NULL,
        updated_at_ms    bigint NOT NULL,
        CHECK ((approval_id IS NULL) = (kind = 'digest')),
        CHECK (state <> 'delivered' OR message_id IS NOT NULL),
        CHECK ((chat_id IS NULL) = (message_id IS NULL))
    );
    CREATE INDEX chat_outbox_by_approval ON chat_outbox (approval_id);
    CREATE INDEX chat_outbox_open ON chat_outbox (seq)
        WHERE state IN ('queued', 'sending', 'delivered');
    CREATE INDEX chat_outbox_troubled ON chat_outbox (updated_at_ms)
        WHERE last_error IS NOT NULL;

    CREATE TABLE chat_buttons (
        key           text COLLATE "C" PRIMARY KEY,
        secret        bytea NOT NULL,
        approval_id   text COLLATE "C" NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
        decision      text NOT NULL CHECK (decision IN ('allow-once', 'allow-always', 'deny')),
        channel       text NOT NULL,
        expires_at_ms bigint NOT NULL,
        in_channel    text,
        in_account_id text,
        in_chat_id    text,
        in_message_id text,
        in_thread_id  text,
        CHECK ((in_chat_id IS NULL) = (in_message_id IS NULL)),
        CHECK ((in_chat_id IS NULL) = (in_channel IS NULL))
    );
    CREATE INDEX chat_buttons_by_approval ON chat_buttons (approval_id);
    "#,
    // 4: per-host state replicas share (the exec approvals document, the chat sessions), one
    // row per document, its bytes exactly as the file would hold them; `version` grows with
    // each change, for compare-and-swap writes.
    r#"
    CREATE TABLE gatehouse_documents (
        name    text COLLATE "C" PRIMARY KEY,
        body    bytea NOT NULL,
        version bigint NOT NULL CHECK (version > 0)
    );
    "#,
    // 5: whether each replica can reach an approver, heartbeated (`presence`), so a request
    // on one replica is not expired for want of a route another replica has. Dated by the
    // server's clock, so replicas' clocks do not matter.
    r#"
    CREATE TABLE gatehouse_routes (
        replica   text COLLATE "C" PRIMARY KEY,
        reachable boolean NOT NULL,
        seen_at   timestamptz NOT NULL
    );
    "#,
    // 6: run events (`exec.running`, `exec.finished`, `exec.denied`) in the event log, so
    // they take their place in the one sequence every replica announces and replays (see
    // `events`): a row of kind `run` names no approval, holds the run's id and its event as
    // the service encoded it, and is dated for pruning. Additive: a build before this one
    // reads the log joined to `approvals`, skipping run rows as if pruned.
    r#"
    ALTER TABLE approval_events ALTER COLUMN approval_id DROP NOT NULL;
    ALTER TABLE approval_events DROP CONSTRAINT approval_events_kind_check;
    ALTER TABLE approval_events
        ADD COLUMN run_id   text,
        ADD COLUMN run_body text,
        ADD COLUMN at_ms    bigint,
        ADD CONSTRAINT approval_events_kind_check
            CHECK (kind IN ('requested', 'allowed', 'denied', 'expired', 'cancelled', 'run')),
        ADD CONSTRAINT approval_events_subject_check
            CHECK ((kind = 'run') = (approval_id IS NULL)
               AND (kind = 'run') = (run_id IS NOT NULL)
               AND (kind = 'run') = (run_body IS NOT NULL)
               AND (kind = 'run') = (at_ms IS NOT NULL));
    CREATE INDEX approval_events_runs_by_age ON approval_events (at_ms) WHERE kind = 'run';
    "#,
    // 7: the audit log every gateway appends to (see `audit`): each record's line exactly as
    // the file log would hold it (its seq, prev and hash inside), and the head row naming the
    // last record's seq and line hash, locked by each append so the chain neither forks nor
    // skips. No foreign key: records outlive the approvals history prunes. Replicas of the
    // previous build may run across it: nothing of theirs reads these tables, and their
    // transitions are recorded in their own files until they are upgraded.
    r#"
    CREATE TABLE audit_head (
        only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        last_seq  bigint NOT NULL CHECK (last_seq >= 0),
        line_hash text NOT NULL
    );
    INSERT INTO audit_head (last_seq, line_hash)
        VALUES (0, '0000000000000000000000000000000000000000000000000000000000000000');

    CREATE TABLE audit_records (
        seq         bigint PRIMARY KEY CHECK (seq > 0),
        approval_id text COLLATE "C",
        line        text NOT NULL
    );
    CREATE INDEX audit_records_by_approval ON audit_records (approval_id);
    "#,
    // 8: signed chat requests already taken (Slack's request signatures; see `replays`), so
    // a captured request is refused at every replica, not only at the one that took it.
    // Rows live until the platform's own window would refuse the request anyway. Additive:
    // a build before this one never reads it (its replicas refuse those requests unless they
    // hold the chat lease).
    r#"
    CREATE TABLE chat_requests_seen (
        key           text COLLATE "C" PRIMARY KEY,
        expires_at_ms bigint NOT NULL
    );
    CREATE INDEX chat_requests_seen_by_expiry ON chat_requests_seen (expires_at_ms);
    "#,
];

/// The schema version this build writes.
pub(super) const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migrations a replica of the previous build cannot keep running across, and what each
/// brings: after one, every transition must also write something that build does not (2: the
/// event log's row, without which the other replicas never hear of the transition; 4: the
/// allowlists and session levels, which that build would go on reading from and writing to
/// its own files; 7: the audit record, which that build would write to its own file, leaving
/// its transitions out of the one chain; 8: Slack's shared replay memory, which an old lease
/// holder would not consult, taking once more a signed request a new replica took). They are
/// applied only once no other gateway is
/// connected to the database (docs/high-availability.md, "Backups and upgrades"). The other
/// migrations only add what the previous build does not use, so a rolling upgrade crosses
/// them.
const STOP_EVERY_REPLICA: &[(i64, &str)] = &[
    (2, "the event log every transition appends to"),
    (4, "allowlists and session levels in the database"),
    (7, "the audit chain every transition appends its record to"),
    (
        8,
        "Slack request signatures remembered against replays by every replica",
    ),
];

/// How often a start waiting for the other gateways to disconnect looks again.
const DISCONNECT_POLL: Duration = Duration::from_millis(500);

/// Brings the database to [`CURRENT_VERSION`], or refuses one newer than this build. Across
/// a migration in [`STOP_EVERY_REPLICA`] it first waits up to `upgrade_wait` for every other
/// gateway to disconnect, holding the migration lock (so gateways of this build starting at
/// the same time wait on it, and are not counted), and refuses if some are still there.
pub(super) async fn migrate(client: &mut Object, upgrade_wait: Duration) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.batch_execute(&format!(
        "SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); \
         CREATE TABLE IF NOT EXISTS gatehouse_schema ( \
             version    bigint PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())"
    ))
    .await?;
    let version = recorded_version(&tx).await?;
    if let Some((migration, brings)) = stop_every_replica_after(version) {
        let connected = other_gateways_after(&tx, upgrade_wait).await?;
        if !connected.is_empty() {
            return Err(StoreError::ReplicasStillConnected {
                migration,
                brings,
                connected,
            });
        }
    }
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

/// The first migration in [`STOP_EVERY_REPLICA`] a database at `version` is due; none for a
/// database no gateway has migrated yet (no replica of an earlier build to break).
pub(super) fn stop_every_replica_after(version: i64) -> Option<(i64, &'static str)> {
    STOP_EVERY_REPLICA
        .iter()
        .find(|(to, _)| version > 0 && *to > version && *to <= CURRENT_VERSION)
        .copied()
}

/// Waits up to `wait` until no other gateway's connection is open on the database; the
/// connections still open then (none: they all went).
async fn other_gateways_after(q: &impl Queries, wait: Duration) -> Result<Vec<String>, StoreError> {
    let deadline = Instant::now() + wait;
    loop {
        let connected = other_gateways(q).await?;
        if connected.is_empty() || Instant::now() >= deadline {
            return Ok(connected);
        }
        tracing::warn!(
            connected = connected.len(),
            "Waiting for the other gateways to disconnect before migrating the approvals \
             database: stop every replica of the previous build."
        );
        tokio::time::sleep(DISCONNECT_POLL).await;
    }
}

/// The other gateways' connections to this database, as "address since start time": those
/// with this connection's `application_name` (every replica's URL gives the same), except the
/// ones waiting for the migration lock (gateways of this build, starting at the same time).
/// Inside a transaction the server keeps the first activity snapshot it took, so each look
/// clears it first.
async fn other_gateways(q: &impl Queries) -> Result<Vec<String>, StoreError> {
    q.rows("SELECT pg_stat_clear_snapshot()", &[]).await?;
    let rows = q
        .rows(
            "SELECT coalesce(host(client_addr), 'local socket') || ' connected since ' || \
             to_char(backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' \
             FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND backend_type = 'client backend' \
             AND application_name = current_setting('application_name') \
             AND (wait_event_type IS DISTINCT FROM 'Lock' OR wait_event IS DISTINCT FROM 'advisory') \
             ORDER BY backend_start",
            &[],
        )
        .await?;
    rows.iter()
        .map(|row| row.try_get(0).map_err(StoreError::from))
        .collect()
}

/// The database's schema version, 0 before any gateway migrated it, refused when newer than
/// this build; writes nothing.
pub(super) async fn schema_version(q: &impl Queries) -> Result<i64, StoreError> {
    if !table_exists(q, "gatehouse_schema").await? {
        return Ok(0);
    }
    recorded_version(q).await
}

/// Whether the connection's schema has the table `name`; writes nothing.
pub(super) async fn table_exists(q: &impl Queries, name: &str) -> Result<bool, StoreError> {
    let rows = q
        .rows("SELECT to_regclass($1) IS NOT NULL", &[&name])
        .await?;
    Ok(match rows.first() {
        Some(row) => row.try_get(0)?,
        None => false,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_migrations_that_need_every_replica_stopped_are_waited_for() {
        let due: Vec<_> = (0..=CURRENT_VERSION)
            .map(|version| stop_every_replica_after(version).map(|(to, _)| to))
            .collect();
        // From a fresh database, and from the current version, nothing; from 5 and 6 (the
        // routes and run events are crossed by a rolling upgrade), the audit chain's; from 7
        // the shared replay memory's.
        assert_eq!(
            due,
            [
                None,
                Some(2),
                Some(4),
                Some(4),
                Some(7),
                Some(7),
                Some(7),
                Some(8),
                None
            ]
        );
    }
}
