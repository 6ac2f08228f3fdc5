//! Gatehouse persistence: `exec-approvals.json` and the durable approvals database.
//!
//! Work in progress: lands with the approvals core (issue 4).
