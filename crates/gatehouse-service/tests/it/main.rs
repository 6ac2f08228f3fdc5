//! Integration tests of `gatehouse-service`, one binary: the use cases on a real SQLite store,
//! a real audit log and real files, resolving through the fakes' loopback DNS server.

// Helpers here are test code too; clippy.toml's test allowance only reaches `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The service set up in a temp dir, with a publisher and callers of each kind.
mod support;
// Two services sharing per-host state through PostgreSQL: `/elevated` levels.
mod shared_state;
// `tools.call.check`: files, URLs through DNS, exec, parameters, audit.
mod tool_check;
// `tools.call.request`, grants and `tools.call.finished`.
mod tool_request;
