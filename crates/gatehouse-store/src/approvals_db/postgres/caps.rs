//! `gateway.limits.maxPendingPerAgent` and `maxPendingPerToken` held across every gateway
//! sharing the database: each gateway counts the approvals it created in memory, which two
//! replicas could each fill, so a shared store counts the pending rows again inside the
//! insert's transaction.
//!
//! Two replicas inserting for one token at once must not both count the same rows and both
//! pass: the count runs under a transaction-scoped advisory lock on the token, so inserts of one
//! token take turns (other tokens' do not wait), and the lock is held until the insert commits.

use gatehouse_approvals::ApprovalRequest;

use super::ops::Queries;
use crate::error::StoreError;

/// The caps a shared store enforces; see `PgOptions::pending_caps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingCaps {
    /// Pending approvals one agent may hold, counted per token.
    pub per_agent: usize,
    /// Pending approvals one token may hold over every agent it names.
    pub per_token: usize,
}

/// The advisory lock class of the per-token locks (`"ghpc"`), apart from the migration lock,
/// which uses the single-key space.
const LOCK_CLASS: i32 = 0x6768_7063;

/// Refuses `request` when its token or its agent already holds its cap of pending approvals,
/// counted over every gateway; holds the token's lock until the transaction ends. A request
/// without a token (none the service makes) is not counted.
pub(super) async fn check(
    tx: &impl Queries,
    caps: PendingCaps,
    request: &ApprovalRequest,
) -> Result<(), StoreError> {
    let Some(token) = request.requested_by.as_deref() else {
        return Ok(());
    };
    let agent = request.agent_id.as_deref().unwrap_or_default();
    tx.rows(
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[&LOCK_CLASS, &token],
    )
    .await?;
    let rows = tx
        .rows(
            "SELECT count(*) FILTER (WHERE coalesce(agent_id, '') = $2), count(*) \
             FROM approvals WHERE state = 'pending' AND requested_by = $1",
            &[&token, &agent],
        )
        .await?;
    let (for_agent, for_token): (i64, i64) = match rows.first() {
        Some(row) => (row.try_get(0)?, row.try_get(1)?),
        None => (0, 0),
    };
    let reached = |count: i64, cap: usize| usize::try_from(count).unwrap_or(usize::MAX) >= cap;
    let refused = if reached(for_agent, caps.per_agent) {
        Some((Some(agent.to_owned()), caps.per_agent))
    } else if reached(for_token, caps.per_token) {
        Some((None, caps.per_token))
    } else {
        None
    };
    match refused {
        Some((agent, limit)) => Err(StoreError::PendingLimit {
            token: token.to_owned(),
            agent,
            limit,
        }),
        None => Ok(()),
    }
}
