//! Integration tests of `gatehouse-config`, one binary.

// Helpers outside `#[test]` functions unwrap too: a panic in this binary is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Loading: syntax, type, unknown-key and cross-field errors with file, line, column, key.
mod errors;
// Every problem of a file in one load, in file order, none made up while collecting them.
mod every_problem;
// The printed report: source lines, carets, masked secrets, long lines.
mod rendering;
// Loading well-formed configs: values, OpenClaw keys accepted with warnings.
mod loading;
// Secrets: redaction, tokenFile/tokenEnv resolution and permission warnings.
mod secrets;
// The `safe-bin-config` cases of tests/conformance/decision-cases.jsonl.
mod safe_bin_config;
// Conversion into the policy core's inputs: merge order and config paths.
mod convert;
// The repository's config.example.json5 loads cleanly.
mod example;
// Property: loading any text returns a config or an error, never a panic.
mod never_panics;
// Exhaustive: one wrong value anywhere in the example config is one problem, at its path.
mod one_mistake;
// The tool-call gate's keys: files, URLs, always-ask, timeouts, conversations, DNS.
mod tool_call_keys;
// The agent-host hooks' keys: `integrations.claudeCode`, `integrations.codex`.
mod integrations;
// `gateway.store`: SQLite by default, PostgreSQL with one URL source.
mod store_keys;
