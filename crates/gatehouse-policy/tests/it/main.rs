//! Integration tests for `gatehouse-policy`, in one binary.

// Helpers outside `#[test]` fns unwrap too: a panic here is a failed assertion, not a crash on
// input (clippy.toml allows it inside test fns only).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod allows; // hand-written `allows_…` lists: what must keep working for agents
mod decision_conformance; // the requirement-rule kinds of tests/conformance/decision-cases.jsonl
mod decisions; // security x ask x analysis through exec::evaluate, segment reports, warnings
mod exec_conformance; // every case of tests/conformance/exec-cases.jsonl through `exec::evaluate`
mod never_panics; // proptest: the analyzer returns a verdict for any input, never panics
mod refusals; // hand-written `denies_…` lists: smuggling, quoting tricks, wrappers, safe bins
mod support; // shared helpers: a temp host with executables, policy builders, `check` lists
