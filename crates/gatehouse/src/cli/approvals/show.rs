//! How `gatehouse approvals` shows the gateway's answers to a person: one line per approval in
//! a listing (under a header, with times relative and exact), a labelled block for one approval, a table of allowlist entries. Commands, paths
//! and reasons come from agents and chat users, so each passes through the same visibility rules
//! as the Control UI and chat prompts before it reaches the terminal.

use gatehouse_chat::sanitize::{make_visible, one_line};
use serde_json::Value;

use crate::cli::listing::{Table, when};

/// The most characters of a command a listing line shows.
const LINE_COMMAND_CHARS: usize = 120;

/// Approvals under a header, one per row: id, state, decision, agent, when created (relative
/// to `now_ms` and exact), command.
pub(super) fn approvals_table(approvals: &[Value], now_ms: u64) -> Table {
    let mut table = Table::new(["ID", "STATE", "DECISION", "AGENT", "CREATED", "COMMAND"]);
    for approval in approvals {
        table.row([
            field(&approval["id"]),
            field(&approval["state"]),
            field(&approval["decision"]),
            field(&approval["request"]["agentId"]),
            approval["createdAtMs"]
                .as_u64()
                .map_or_else(|| "-".to_owned(), |ms| when(ms, now_ms)),
            one_line(
                approval["request"]["command"].as_str().unwrap_or(""),
                LINE_COMMAND_CHARS,
            ),
        ]);
    }
    table
}

/// One approval, a field per line; the command in full, shown as it would run.
pub(super) fn approval(approval: &Value) -> String {
    let request = &approval["request"];
    let mut out = String::new();
    let mut row = |label: &str, value: String| out.push_str(&format!("{label:<10} {value}\n"));
    row("id", field(&approval["id"]));
    row("state", state(approval));
    row(
        "agent",
        format!(
            "{} (session {})",
            field(&request["agentId"]),
            field(&request["sessionKey"])
        ),
    );
    row("cwd", field(&request["cwd"]));
    row("resolved", field(&request["resolvedPath"]));
    row(
        "policy",
        format!(
            "security {}, ask {}",
            field(&request["security"]),
            field(&request["ask"])
        ),
    );
    row("created", time(&approval["createdAtMs"]));
    row("expires", time(&approval["expiresAtMs"]));
    if !approval["resolvedAtMs"].is_null() {
        row("settled", time(&approval["resolvedAtMs"]));
    }
    if let Some(offered) = approval["allowedDecisions"]
        .as_array()
        .filter(|offered| !offered.is_empty())
    {
        let offered: Vec<String> = offered.iter().map(field).collect();
        row("answers", offered.join(", "));
    }
    let command = make_visible(request["command"].as_str().unwrap_or(""));
    row("command", command.replace('\n', "\n           "));
    let summary = &request["summary"];
    if !summary.is_null() {
        let programs = summary["programs"].as_array().cloned().unwrap_or_default();
        let lines: Vec<String> = programs
            .iter()
            .enumerate()
            .map(|(index, program)| format!("{}. {}", index + 1, program_line(program)))
            .collect();
        row("runs", lines.join("\n           "));
        row(
            "env",
            list(&summary["envNames"]).unwrap_or_else(|| "-".to_owned()),
        );
        row(
            "always",
            list(&summary["allowAlwaysPatterns"]).map_or_else(
                || "allow-always stores nothing (approve this exact command)".to_owned(),
                |patterns| format!("allow-always stores {patterns}"),
            ),
        );
    }
    out
}

/// One program of the chain: its words, where it resolved and through what, and what lets it
/// run or why a person decides.
fn program_line(program: &Value) -> String {
    let words: Vec<String> = program["argv"]
        .as_array()
        .map(|argv| argv.iter().map(field).collect())
        .unwrap_or_default();
    let path = match &program["resolvedPath"] {
        Value::Null => "unresolved".to_owned(),
        other => field(other),
    };
    let through = program["lookedThrough"]
        .as_array()
        .filter(|through| !through.is_empty())
        .map(|through| {
            let through: Vec<String> = through.iter().map(field).collect();
            format!(" via {}", through.join(" → "))
        })
        .unwrap_or_default();
    let verdict = match &program["satisfiedBy"] {
        Value::Null => format!("needs a person: {}", field(&program["reason"])),
        by => field(by),
    };
    one_line(
        &format!("{} [{path}{through}] — {verdict}", words.join(" ")),
        400,
    )
}

/// A non-empty list of strings, comma-separated; `None` when empty or absent.
fn list(values: &Value) -> Option<String> {
    let values: Vec<String> = values.as_array()?.iter().map(field).collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// What a `resolve` did: applied, or who had already answered what.
pub(super) fn resolution(answer: &Value) -> String {
    let id = field(&answer["id"]);
    let winner = field(&answer["decision"]);
    if answer["applied"] == true {
        let mut line = format!("{id}: {winner}");
        if let Some(added) = answer["allowlistAdded"]
            .as_array()
            .filter(|a| !a.is_empty())
        {
            line.push_str(&format!(" ({} allowlist entries added)", added.len()));
        }
        if let Some(error) = answer["allowlistError"].as_str() {
            line.push_str(&format!(
                "; the allowlist was not written: {}",
                one_line(error, 300)
            ));
        }
        line
    } else {
        format!(
            "{id}: not applied: already answered {winner} by {}",
            field(&answer["resolvedBy"])
        )
    }
}

/// An agent's allowlist: a count, then a table of id, pattern, when each entry last let a
/// command run (relative to `now_ms` and exact) and that command.
pub(super) fn allowlist(answer: &Value, now_ms: u64) -> String {
    let agent = field(&answer["agent"]);
    let entries = answer["allowlist"].as_array().cloned().unwrap_or_default();
    if entries.is_empty() {
        return format!("agent {agent}: no allowlist entries\n");
    }
    let mut table = Table::new(["ID", "PATTERN", "LAST USED", "LAST COMMAND"]);
    for entry in &entries {
        let mut pattern = field(&entry["pattern"]);
        if let Some(args) = entry["argPattern"].as_str() {
            pattern.push_str(&format!(" (arguments {})", one_line(args, 80)));
        }
        let (last, command) = match entry["lastUsedAt"].as_u64() {
            Some(ms) => (
                when(ms, now_ms),
                one_line(entry["lastUsedCommand"].as_str().unwrap_or("-"), 80),
            ),
            None => ("never".to_owned(), "-".to_owned()),
        };
        table.row([field(&entry["id"]), pattern, last, command]);
    }
    format!(
        "agent {agent}: {} allowlist entries\n{table}",
        entries.len()
    )
}

/// A short value on one line, `-` when absent.
fn field(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(text) => one_line(text, 200),
        other => one_line(&other.to_string(), 200),
    }
}

/// The state, with the decision, who gave it and why when settled.
fn state(approval: &Value) -> String {
    let mut state = field(&approval["state"]);
    if !approval["decision"].is_null() {
        state.push_str(&format!(
            ": {} by {}",
            field(&approval["decision"]),
            field(&approval["resolvedBy"])
        ));
    }
    if let Some(reason) = approval["reason"].as_str() {
        state.push_str(&format!(" ({})", one_line(reason, 200)));
    }
    state
}

/// Relative to now and exact.
fn time(ms: &Value) -> String {
    ms.as_u64()
        .map_or_else(|| "-".to_owned(), |ms| when(ms, crate::cli::now_ms()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_escape_sequence_in_a_command_never_reaches_the_terminal() {
        let approval = json!({"id": "3f0c", "state": "pending",
            "request": {"agentId": "main", "command": "ls\u{1b}[2J\u{202e}x"}});
        let listed = approvals_table(std::slice::from_ref(&approval), 0).to_string();
        for shown in [listed, super::approval(&approval)] {
            assert!(!shown.contains('\u{1b}'), "{shown:?}");
            assert!(!shown.contains('\u{202e}'), "{shown:?}");
            assert!(shown.contains("ls"), "{shown:?}");
        }
    }

    /// Issue 29: approvers see every program of a chain, the variables' names and what
    /// allow-always would store, not only the first program.
    #[test]
    fn shows_every_program_of_the_chain_the_variables_and_what_allow_always_stores() {
        let shown = super::approval(&json!({"id": "3f0c", "state": "pending",
            "request": {"agentId": "main", "command": "git status && ./deploy.sh",
                "summary": {
                    "programs": [
                        {"argv": ["git", "status"], "resolvedPath": "/usr/bin/git",
                         "lookedThrough": [], "satisfiedBy": "allowlist", "reason": "ok"},
                        {"argv": ["./deploy.sh"], "resolvedPath": null,
                         "lookedThrough": ["/usr/bin/nice"], "satisfiedBy": null,
                         "reason": "no-allowlist-match: ./deploy.sh"}],
                    "envNames": ["CI", "TARGET"],
                    "allowAlwaysPatterns": []}}}));
        assert!(
            shown.contains(
                "runs       1. git status [/usr/bin/git] — allowlist\n           \
                 2. ./deploy.sh [unresolved via /usr/bin/nice] — needs a person: \
                 no-allowlist-match: ./deploy.sh\n"
            ),
            "{shown}"
        );
        assert!(shown.contains("env        CI, TARGET\n"), "{shown}");
        assert!(
            shown.contains("always     allow-always stores nothing"),
            "{shown}"
        );
    }

    #[test]
    fn lists_approvals_under_a_header_with_relative_and_exact_times() {
        let approval = json!({"id": "3f0c1a2b", "state": "allowed", "decision": "allow-once",
            "createdAtMs": 1_795_242_061_000_u64,
            "request": {"agentId": "main", "command": "make deploy"}});
        assert_eq!(
            approvals_table(&[approval], 1_795_242_241_000).to_string(),
            "ID        STATE    DECISION    AGENT  CREATED                              COMMAND\n\
             3f0c1a2b  allowed  allow-once  main   3 min ago (2026-11-21 06:21:01 UTC)  make deploy\n"
        );
    }

    #[test]
    fn shows_when_each_allowlist_entry_last_ran_a_command() {
        let shown = allowlist(
            &json!({"agent": "main", "allowlist": [
            {"id": "a1", "pattern": "/usr/bin/git", "lastUsedAt": 1_795_242_061_000_u64,
             "lastUsedCommand": "git status"},
            {"id": "b2", "pattern": "/usr/bin/make"}]}),
            1_795_242_061_000 + 2 * 3_600_000,
        );
        assert_eq!(
            shown,
            "agent main: 2 allowlist entries\n\
             ID  PATTERN        LAST USED                          LAST COMMAND\n\
             a1  /usr/bin/git   2 h ago (2026-11-21 06:21:01 UTC)  git status\n\
             b2  /usr/bin/make  never                              -\n"
        );
    }
}
