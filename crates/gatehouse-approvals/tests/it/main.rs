//! The one integration-test binary of `gatehouse-approvals`: real files, a real SQLite store.

// Helpers here are test code too; clippy.toml's test allowance only reaches `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The approval binding over real files, symlinks and scripts.
mod binding;
