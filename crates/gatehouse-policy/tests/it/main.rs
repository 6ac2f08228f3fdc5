//! Integration tests for `gatehouse-policy`, in one binary.

// Helpers outside `#[test]` fns unwrap too: a panic here is a failed assertion, not a crash on
// input (clippy.toml allows it inside test fns only).
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Builders and the `check` renderer shared by the tool-policy tests.
mod tool_support;
// One test per tool-policy rule, each through the public entry point.
mod tool_rules;
// Whole-pipeline table: realistic configs, asserting the set and every removal's source.
mod tool_pipeline;
// Call-time refusal of removed and owner-only tools.
mod tool_call;
// Properties: deny entries never widen, sub-agents never exceed their parent.
mod tool_props;
// MCP and plugin tools: by server, by tool, globs, unregistered tools, impostor plugins.
mod tool_mcp;

// A real temporary tree and a one-line renderer for file checks.
mod file_support;
// File tools on real trees: containment, symlinks, special files, denied files, globs, patches.
mod files;
// URL checks: host forms, address classes, domain lists, resolved addresses.
mod urls;
// proptest: unsafe characters never pass, allowed paths stay under the root and equal
// realpath's answer, every IPv4 spelling is judged as its address.
mod check_props;
// The tool-call gate: policy, parameter kinds, file/URL/exec checks, always-ask, grants.
mod tool_gate;

mod allows; // hand-written `allows_…` lists: what must keep working for agents
mod allows_interpreters; // what the stricter interpreter and shell-flag rules must keep allowing
mod approval_surfaces; // approval views: every program of a chain, env names, patterns, display text
mod binding_props; // proptest: the binding over sed/awk/make words never panics and is stable
mod decision_conformance; // the requirement-rule kinds of tests/conformance/decision-cases.jsonl
mod decisions; // security x ask x analysis through exec::evaluate, segment reports, warnings
mod exec_conformance; // every case of tests/conformance/exec-cases.jsonl through `exec::evaluate`
mod never_panics; // proptest: the analyzer returns a verdict for any input, never panics
mod parser_agreement; // the analyzer reads words, blanks, newlines and comments as bash and dash do
mod refusals; // hand-written `denies_…` lists: smuggling, quoting tricks, wrappers, safe bins
mod refusals_carriers; // carriers never authorize what they carry; interpreters under strictInlineEval
mod refusals_configured; // git, ssh, package managers and tools whose options run programs
mod refusals_interpreters; // shell flags, inline code behind valued options, code on stdin
mod refusals_shell_state; // assignments in front of builtins, -x and other -c letters, request locales
mod rendering; // what runs under `sh -c`: safe bins by absolute path with literal arguments
mod request_env; // the request's own variables: the harmless list, PATH, exact approvals
mod review_regressions; // security review bypasses (`time` builtins, sed, npm, …) and neighbours
mod shell_oracle; // what ran ⊆ what was analysed: generated commands under real bash and dash
mod support; // shared helpers: a temp host with executables, policy builders, `check` lists
