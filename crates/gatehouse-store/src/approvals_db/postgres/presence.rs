//! Approval routes across replicas (`gatehouse_approvals::RoutePresence`): each replica's row
//! in `gatehouse_routes` says whether it could reach an approver at its last heartbeat, dated
//! by the server's clock; a row not renewed within the reader's `live_for` no longer counts.

use std::time::Duration;

use super::ops::Queries;
use crate::error::StoreError;

/// Rows of replicas silent this long are deleted, so replicas that came and went leave
/// nothing behind; far beyond any `live_for`.
const FORGET_AFTER_SECS: f64 = 3600.0;

/// Records `replica`'s reachability and answers whether another replica recorded within
/// `live_for` that it can reach an approver. One statement, so one round trip.
pub(super) async fn heartbeat(
    q: &impl Queries,
    replica: &str,
    reachable: bool,
    live_for: Duration,
) -> Result<bool, StoreError> {
    let rows = q
        .rows(
            "WITH beat AS ( \
                 INSERT INTO gatehouse_routes (replica, reachable, seen_at) \
                 VALUES ($1, $2, clock_timestamp()) ON CONFLICT (replica) DO UPDATE \
                 SET reachable = EXCLUDED.reachable, seen_at = EXCLUDED.seen_at), \
             forgotten AS ( \
                 DELETE FROM gatehouse_routes \
                 WHERE seen_at < clock_timestamp() - make_interval(secs => $4)) \
             SELECT EXISTS (SELECT 1 FROM gatehouse_routes WHERE replica <> $1 AND reachable \
                 AND seen_at > clock_timestamp() - make_interval(secs => $3))",
            &[
                &replica,
                &reachable,
                &live_for.as_secs_f64(),
                &FORGET_AFTER_SECS,
            ],
        )
        .await?;
    match rows.first() {
        Some(row) => Ok(row.try_get(0)?),
        None => Ok(false),
    }
}
