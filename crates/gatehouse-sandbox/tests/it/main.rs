//! The one integration-test binary of `gatehouse-sandbox`: every test runs the real
//! bubblewrap on this host.

// Helpers here are test code too; clippy.toml's test allowance only reaches `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

// The binding: host paths, inodes and mismatches through the mounts.
mod binding;
// The layout against what a real sandbox sees, with links left in mounted directories.
mod differential;
// The run's environment: built, never the gateway's.
mod environment;
// Runs end with their run, their runner and the gateway.
mod lifetime;
// Each isolation mode's visible, hidden, writable and persistent paths.
mod modes;
// Mount sources refused with their reasons, and extra paths.
mod mounts;
// No network unless allowed.
mod network;
// `gatehouse doctor`'s check on this host.
mod probe;
// The fixture: a home, a workspace and a data directory under one temporary root.
mod support;
