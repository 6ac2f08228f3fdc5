//! Signed chat requests already taken, shared by every gateway on the database, so a request
//! captured on its way to one replica is refused as a replay at all of them (Slack's HTTP
//! mode; docs/high-availability.md, "Chat on replicas"). One statement decides: the server
//! serializes inserts of one key, so exactly one gateway records it first.

use super::super::rows::sql_ms;
use super::ops::Queries;
use crate::error::StoreError;

/// How many expired keys one call removes at most, so pruning never holds a request up.
const PRUNED_PER_CALL: i64 = 100;

/// Records `key` until `expires_at_ms`: true when no gateway had recorded it, or its record
/// had expired by `now_ms` (then it is recorded anew). Expired keys are pruned on the way,
/// skipping those another gateway is pruning.
pub(super) async fn first_delivery(
    q: &impl Queries,
    key: &str,
    expires_at_ms: u64,
    now_ms: u64,
) -> Result<bool, StoreError> {
    let now = sql_ms(now_ms);
    q.rows(
        "DELETE FROM chat_requests_seen WHERE key IN (SELECT key FROM chat_requests_seen \
         WHERE expires_at_ms <= $1 AND key <> $2 ORDER BY expires_at_ms LIMIT $3 \
         FOR UPDATE SKIP LOCKED)",
        &[&now, &key, &PRUNED_PER_CALL],
    )
    .await?;
    let recorded = q
        .rows(
            "INSERT INTO chat_requests_seen (key, expires_at_ms) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET expires_at_ms = EXCLUDED.expires_at_ms \
             WHERE chat_requests_seen.expires_at_ms <= $3 RETURNING key",
            &[&key, &sql_ms(expires_at_ms), &now],
        )
        .await?;
    Ok(!recorded.is_empty())
}
