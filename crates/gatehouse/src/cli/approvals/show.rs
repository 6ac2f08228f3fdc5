//! How `gatehouse approvals` shows the gateway's answers to a person: one line per approval in
//! a listing, a labelled block for one approval, a table of allowlist entries. Commands, paths
//! and reasons come from agents and chat users, so each passes through the same visibility rules
//! as the Control UI and chat prompts before it reaches the terminal.

use gatehouse_chat::render::utc_timestamp;
use gatehouse_chat::sanitize::{make_visible, one_line};
use serde_json::Value;

/// The most characters of a command a listing line shows.
const LINE_COMMAND_CHARS: usize = 120;

/// One approval per line: id, state, decision, agent, command.
pub(super) fn approval_line(approval: &Value) -> String {
    format!(
        "{}  {:<9} {:<12} {:<10} {}",
        field(&approval["id"]),
        field(&approval["state"]),
        field(&approval["decision"]),
        field(&approval["request"]["agentId"]),
        one_line(
            approval["request"]["command"].as_str().unwrap_or(""),
            LINE_COMMAND_CHARS
        )
    )
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
    out
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

/// An agent's allowlist: id, pattern, and the last run each entry allowed.
pub(super) fn allowlist(answer: &Value) -> String {
    let agent = field(&answer["agent"]);
    let entries = answer["allowlist"].as_array().cloned().unwrap_or_default();
    if entries.is_empty() {
        return format!("agent {agent}: no allowlist entries\n");
    }
    let mut out = format!("agent {agent}: {} allowlist entries\n", entries.len());
    for entry in &entries {
        let mut pattern = field(&entry["pattern"]);
        if let Some(args) = entry["argPattern"].as_str() {
            pattern.push_str(&format!(" (arguments {})", one_line(args, 80)));
        }
        let last = match entry["lastUsedAt"].as_u64() {
            Some(ms) => format!(
                "last used {} by {}",
                utc_timestamp(ms / 1000),
                one_line(entry["lastUsedCommand"].as_str().unwrap_or("-"), 80)
            ),
            None => "never used".to_owned(),
        };
        out.push_str(&format!("{}  {pattern}  {last}\n", field(&entry["id"])));
    }
    out
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

fn time(ms: &Value) -> String {
    ms.as_u64()
        .map_or_else(|| "-".to_owned(), |ms| utc_timestamp(ms / 1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_escape_sequence_in_a_command_never_reaches_the_terminal() {
        let approval = json!({"id": "3f0c", "state": "pending",
            "request": {"agentId": "main", "command": "ls\u{1b}[2J\u{202e}x"}});
        for shown in [approval_line(&approval), super::approval(&approval)] {
            assert!(!shown.contains('\u{1b}'), "{shown:?}");
            assert!(!shown.contains('\u{202e}'), "{shown:?}");
            assert!(shown.contains("ls"), "{shown:?}");
        }
    }

    /// Issue 36: the CLI marks the characters chat cards and the Control UI mark, beyond the
    /// familiar zero-width and bidi ones (a musical format control, a Mongolian selector).
    #[test]
    fn marks_every_character_the_shared_definition_hides() {
        let approval = json!({"id": "3f0c", "state": "pending",
            "request": {"agentId": "main", "command": "ls\u{1d173}x\u{180b}y"}});
        for shown in [approval_line(&approval), super::approval(&approval)] {
            assert!(
                shown.contains("ls[U+1D173 FORMAT]x[U+180B IGNORABLE]y"),
                "{shown:?}"
            );
        }
    }

    #[test]
    fn shows_when_each_allowlist_entry_last_ran_a_command() {
        let shown = allowlist(&json!({"agent": "main", "allowlist": [
            {"id": "a1", "pattern": "/usr/bin/git", "lastUsedAt": 1_795_242_061_000_u64,
             "lastUsedCommand": "git status"},
            {"id": "b2", "pattern": "/usr/bin/make"}]}));
        assert_eq!(
            shown,
            "agent main: 2 allowlist entries\n\
             a1  /usr/bin/git  last used 2026-11-21 06:21:01 UTC by git status\n\
             b2  /usr/bin/make  never used\n"
        );
    }
}
