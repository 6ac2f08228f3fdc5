//! The one integration-test binary of `gatehouse-hooks`: captured hook inputs of the real
//! hosts, the answers' shapes against the hosts' contracts, and properties over any input.

// Helpers here are test code too; clippy.toml's test allowance only reaches `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

// Every captured Claude Code input maps to its Gatehouse call.
mod claude_code;
// Every captured Codex input maps to its Gatehouse call; patches are made absolute.
mod codex;
// Agent id and session key: derivation, templates, stability.
mod identity;
// Any bytes: never a panic, never an allow when the input is refused.
mod properties;
// Malformed, oversized, unknown: each refused with a readable reason and a deny.
mod refusals;
// Answers in each host's shape, byte for byte.
mod render;
// Codex answers against Codex's published JSON Schemas; Claude Code's against its documented shapes.
mod schemas;
// Fixture loading and the deny/allow readers of rendered outputs.
mod support;
