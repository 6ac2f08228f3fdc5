//! End-to-end tests: they run the real `gatehouse` binary with temporary config files.

// Helpers outside `#[test]` functions unwrap too: a panic in this binary is a failed assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// `gatehouse check`: exit codes, decision JSON shape, `--jsonl` batches, `--approvals`.
mod check;
// tests/conformance/exec-cases.jsonl end to end: config file, approvals file, `check --jsonl`.
mod conformance;
// Config errors and warnings as every subcommand reports them.
mod config_errors;
// `gatehouse serve`: the real binary on a free port with a temporary data directory.
mod serve;
// `gatehouse tools`: JSON shape, removal sources, sub-agents.
mod tools;
// The Control UI in headless Chromium, driven over the DevTools protocol like a person.
mod browser;
// A minimal Chrome DevTools Protocol client for `browser`.
mod cdp;
// Shared helpers: start the server with one token per scope, HTTP and WebSocket clients.
mod gateway;
// `exec.approval.*`, `exec.approvals.*`, policy check and tools over the wire; scope refusals.
mod gateway_approvals;
// `system.run`: policy, approval, binding re-check before spawn, bounded output, timeouts.
mod gateway_run;
// Sandboxed `system.run` under the real bubblewrap: modes, network, environment, elevated.
mod sandbox;
// Client commands: request, run, approvals (incl. allowlist edits).
mod gateway_cli;
// `gatehouse doctor` on configs serve refuses or runs with a risk: errors, warnings, exit codes.
mod doctor;
// The per-request `elevated` param with no chat channel: precedence, closed gates, tool deny.
mod elevated_request;
// Telegram approvals end to end against the in-process Telegram fake: cards, buttons, /approve.
mod telegram;
// `gatehouse audit verify|tail`: exit codes and output on intact and tampered logs.
mod audit;
// `gatehouse setup`: presets from flags and from a person's answers, consent, backups.
mod setup;
// Helpers every chat-channel test shares: create an approval, wait for it to settle.
mod chat_support;
// `gatehouse mcp` driven by the official MCP Python SDK against a real gateway.
mod mcp;
// `gatehouse mcp` under the MCP Inspector's CLI: schema portability, a run and a refusal.
mod mcp_inspector;
// Discord approvals: the real binary against the Discord fake (cards, presses, commands, resume).
mod discord;
// Chat delivery under platform faults (429/5xx windows, lost answers, stalls), bursts, kill -9.
mod delivery;
// Slack approvals in Socket Mode and HTTP mode: the real binary against the Slack fake.
mod slack;
// A new operator's first hour: the CLI finding its gateway, login contexts, status, serve's
// logs, --help examples, completions.
mod first_hour;
// README.md's quickstart run verbatim, approved in headless Chromium.
mod quickstart;
// Each chat guide's dry run against the platform's fake, run verbatim.
mod chat_guides;
// What the docs tests share: a Markdown section's sh blocks, and a reader's shell to run them.
mod docs_shell;
// The tool-call gate: `check --tool`, `tools.call.*` with DNS through the fake, grants.
mod tool_gate;
// Agent hosts asking Gatehouse: `gatehouse hook claude-code|codex`, `POST /hooks/claude-code`,
// and the real Claude Code and Codex CLIs offline against the fake model APIs.
mod agent_hosts;
// Issue 36 on every platform: decisions only on approvals shown on the sender's channel.
mod chat_shown;
// Issue 36: `/elevated` from every place a session can be bound reaches that session.
mod chat_elevated;
// Issue 36: a flood from people who may decide nothing is answered once and delays no card.
mod chat_strangers;
// Issue 36: only a person's own words, from the bot's own workspace or guild, are a command.
mod chat_speakers;
// Issue 36: cards and replies show agent and sender text literally; a cut command says so.
mod chat_markup;
// Issue 35: `/start` and `/help` tell a person their id and whether they are an approver.
mod chat_start;
// Two `gatehouse serve` replicas on one PostgreSQL database: cross-replica decisions and
// waiters, one winner among concurrent answers, a replica killed mid-flight.
mod replicas;
// Issue 34: one event sequence over replicas; `since` replayed on another replica.
mod replica_events;
// Chat on PostgreSQL replicas: one holds the Telegram connection; SIGKILL of it hands chat
// over in seconds with no card twice and no press lost.
mod replica_chat;
// Per-host state shared by two `serve` replicas through PostgreSQL: allowlists and baseHash.
mod replica_state;
// Operating replicas: the database restarted under two `gatehouse serve` processes.
mod replica_ops;
// One audit chain in PostgreSQL for two `serve` replicas: verify by CLI and RPC, tamper named.
mod replica_audit;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What one run of the binary produced.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `gatehouse` with `args`, feeding `stdin`.
pub(crate) fn gatehouse(args: &[&str], stdin: &str) -> Run {
    gatehouse_with_env(args, stdin, &[])
}

/// Runs `gatehouse` with `args` and extra environment variables, feeding `stdin`. The caller's
/// `GATEHOUSE_CONFIG` is never inherited, so a developer's setting cannot change a result.
pub(crate) fn gatehouse_with_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(args)
        .env_remove("GATEHOUSE_CONFIG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A temporary directory holding files written by a test.
pub(crate) struct Files(tempfile::TempDir);

impl Files {
    pub(crate) fn new() -> Self {
        Files(tempfile::tempdir().unwrap())
    }

    /// Writes `name` and returns its path as a string for the command line.
    pub(crate) fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    pub(crate) fn join(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}
