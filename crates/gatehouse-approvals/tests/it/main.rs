//! The one integration-test binary of `gatehouse-approvals`: real files, a real SQLite store.

// Helpers here are test code too; clippy.toml's test allowance only reaches `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Callers that stop waiting leave nothing half-done.
mod abandoned;
// Allow-once: one run, replays refused.
mod allow_once;
// The approval binding over real files, symlinks and scripts.
mod binding;
// Event sequence numbers and slow subscribers.
mod events;
// Timeouts and the grace period on paused time.
mod expiry;
// Tool approvals' allow-always grants: stored with the decision, listed, revoked.
mod grants;
// Every state transition through the manager and the store.
mod lifecycle;
// Lookup by id or prefix and its distinct errors.
mod lookup;
// Concurrent resolvers: exactly one winner.
mod race;
// Restart cancellation from a reopened database.
mod restart;
// History pruned while the manager runs.
mod retention;
// Short ids name one approval: chosen ids sharing one are refused until pruning.
mod short_ids;
// A store that refuses a write: announced approvals are withdrawn.
mod store_failure;
// Shared fixtures: a manager on a real store in a temp dir.
mod support;
