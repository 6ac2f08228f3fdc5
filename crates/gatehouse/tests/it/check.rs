use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::{Files, gatehouse};

const DECISION_KEYS: [&str; 7] = [
    "allowAlwaysPatterns",
    "allowlistSatisfied",
    "analysisOk",
    "decision",
    "reason",
    "requiresApproval",
    "segments",
];

/// Runs `gatehouse check --json <args>` and returns the exit code and the decision.
fn decide(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let run = gatehouse(&all, "");
    let decision = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    (run.code, decision)
}

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

#[test]
fn denies_with_exit_20_and_the_documented_json_shape_when_security_is_deny() {
    let files = Files::new();
    let config = files.write("gh.json5", "{ tools: { exec: { security: 'deny' } } }");
    let (code, decision) = decide(&["--config", &config, "--", "ls -la"]);
    assert_eq!(code, 20);
    assert_eq!(keys(&decision), DECISION_KEYS);
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["allowlistSatisfied"], false);
    assert!(decision["segments"].is_array());
    assert!(decision["allowAlwaysPatterns"].is_array());
}

#[test]
fn prints_a_readable_line_without_json() {
    let files = Files::new();
    let config = files.write("gh.json5", "{ tools: { exec: { security: 'deny' } } }");
    let run = gatehouse(&["check", "--config", &config, "ls"], "");
    assert_eq!(run.code, 20);
    assert!(run.stdout.starts_with("deny: "), "{}", run.stdout);
}

#[test]
fn the_readable_answer_shows_control_characters_as_markers() {
    let run = gatehouse(
        &["check", "--", "ls", "\x1b[31mx\nallow: fake", "\u{202e}y"],
        "",
    );
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    assert!(!run.stdout.contains(['\x1b', '\u{202e}']), "{}", run.stdout);
    assert!(
        run.stdout.contains("\\e[31mx\\nallow: fake"),
        "{}",
        run.stdout
    );
    let builtins = gatehouse(&["check", "true && pwd"], "");
    assert!(
        builtins.stdout.contains("  true -> (shell builtin): "),
        "{}",
        builtins.stdout
    );
}

#[test]
fn exits_quietly_when_its_reader_has_gone() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["check", "ls"])
        .env_remove("GATEHOUSE_CONFIG")
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(141));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn the_readable_answer_names_each_wrapper_looked_through() {
    let (_files, tool, approvals) = allowlisted_tool();
    let run = gatehouse(
        &["check", "--approvals", &approvals, "--", "nice", &tool],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let through: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("through"))
        .collect();
    assert_eq!(through.len(), 1, "{}", run.stdout);
    assert!(
        through[0].starts_with("    through nice -> /"),
        "{}",
        run.stdout
    );
}

#[test]
fn batch_mode_answers_every_line_in_order() {
    let input = concat!(
        "{\"command\": \"ls\"}\n",
        "{\"argv\": []}\n",
        "\n",
        "{\"command\": \"ls\", \"argv\": [\"ls\"]}\n",
        "not json\n",
        "{\"command\": \"ls\", \"colour\": 1}\n",
        "{\"argv\": [\"ls\", \"-la\"], \"cwd\": \"/\", \"env\": {\"PATH\": \"/bin\"}, \"agent\": \"main\"}\n",
    );
    let run = gatehouse(&["check", "--jsonl"], input);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        6,
        "blank lines are skipped, every other line answered"
    );
    for line in &lines {
        assert_eq!(keys(line), DECISION_KEYS);
    }
    let reasons: Vec<&str> = lines
        .iter()
        .map(|l| l["reason"].as_str().unwrap())
        .collect();
    assert!(!reasons[0].starts_with("invalid request"), "{}", reasons[0]);
    assert_eq!(reasons[1], "invalid request: `argv` is empty");
    assert_eq!(
        reasons[2],
        "invalid request: set `command` or `argv`, not both"
    );
    assert!(
        reasons[3].starts_with("invalid request: expected"),
        "{}",
        reasons[3]
    );
    assert!(
        reasons[4].starts_with("invalid request: unknown field `colour`"),
        "{}",
        reasons[4]
    );
    assert!(!reasons[5].starts_with("invalid request"), "{}", reasons[5]);
    for invalid in &lines[1..5] {
        assert_eq!(invalid["decision"], "deny");
    }
}

#[test]
fn batch_mode_applies_each_lines_agent() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ agents: { list: [ { id: 'locked', tools: { exec: { security: 'deny' } } } ] } }",
    );
    let input = "{\"command\": \"ls\", \"agent\": \"locked\"}\n";
    let run = gatehouse(&["check", "--config", &config, "--jsonl"], input);
    let line: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(line["decision"], "deny");
}

/// Operator walkthrough: `--agent nosuch` answered with the global settings, a plausible answer
/// for a typo. Once the config lists agents, an id neither it nor the approvals file names is
/// refused (exit 2), and in a batch its line is a `deny` naming the problem.
#[test]
fn refuses_an_agent_the_config_does_not_list() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ agents: { list: [ { id: 'locked', tools: { exec: { security: 'deny' } } } ] } }",
    );
    let run = gatehouse(
        &["check", "--config", &config, "--agent", "lokced", "ls"],
        "",
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "gatehouse: agent `lokced` is not in `agents.list` (`locked`); an unlisted id gets the \
         global settings, so a typo would answer for the wrong agent\n"
    );
    let input = "{\"command\": \"ls\", \"agent\": \"lokced\"}\n";
    let run = gatehouse(&["check", "--config", &config, "--jsonl"], input);
    let line: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(line["decision"], "deny");
    assert!(
        line["reason"]
            .as_str()
            .unwrap()
            .starts_with("invalid request: agent `lokced` is not in `agents.list`"),
        "{line}"
    );
    // The default agent, an agent the approvals file names, and any id without a list, answer.
    let approvals = files.write(
        "exec-approvals.json",
        r#"{"version": 1, "agents": {"ci": {"allowlist": []}}}"#,
    );
    for args in [
        &["check", "--config", &config, "ls"][..],
        &[
            "check",
            "--config",
            &config,
            "--approvals",
            &approvals,
            "--agent",
            "ci",
            "ls",
        ][..],
        &["check", "--agent", "anything", "ls"][..],
    ] {
        let run = gatehouse(args, "");
        assert_ne!(run.code, 2, "{args:?}: {}", run.stderr);
    }
}

#[test]
fn refuses_a_missing_command_as_a_usage_error() {
    let run = gatehouse(&["check"], "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("COMMAND"), "{}", run.stderr);
}

#[test]
fn reports_an_unreadable_approvals_file_as_exit_2() {
    let files = Files::new();
    let missing = files.join("exec-approvals.json");
    let run = gatehouse(
        &["check", "--approvals", missing.to_str().unwrap(), "ls"],
        "",
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("exec-approvals.json"), "{}", run.stderr);
}

#[test]
fn reports_a_malformed_approvals_file_with_line_and_column() {
    let files = Files::new();
    let approvals = files.write(
        "exec-approvals.json",
        "{\n  \"version\": 1,\n  \"agents\": [\n",
    );
    let run = gatehouse(&["check", "--approvals", &approvals, "ls"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(&format!("{approvals}:")),
        "{}",
        run.stderr
    );
}

#[test]
fn approvals_file_security_deny_wins_over_a_permissive_config() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ tools: { exec: { security: 'full', ask: 'off' } } }",
    );
    let approvals = files.write(
        "exec-approvals.json",
        r#"{"version": 1, "defaults": {"security": "deny"}, "agents": {}}"#,
    );
    let (code, decision) = decide(&["--config", &config, "--approvals", &approvals, "ls"]);
    assert_eq!(code, 20);
    assert_eq!(decision["decision"], "deny");
}

/// Writes an executable at `name` and returns its canonical path.
fn executable(files: &Files, name: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = files.write(name, "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::canonicalize(&path).unwrap().display().to_string()
}

/// Writes an approvals file allowlisting `pattern` for the `main` agent.
fn approvals_allowing(files: &Files, pattern: &str) -> String {
    files.write(
        "exec-approvals.json",
        &format!(r#"{{"version": 1, "agents": {{"main": {{"allowlist": [{{"pattern": "{pattern}"}}]}}}}}}"#),
    )
}

/// A temp dir with an executable `bin/tool` and an approvals file allowlisting it for `main`.
fn allowlisted_tool() -> (Files, String, String) {
    let files = Files::new();
    std::fs::create_dir(files.join("bin")).unwrap();
    let tool = executable(&files, "bin/tool");
    let approvals = approvals_allowing(&files, &tool);
    (files, tool, approvals)
}

#[test]
fn allows_with_exit_0_what_the_approvals_allowlist_covers() {
    let (_files, tool, approvals) = allowlisted_tool();
    let (code, decision) = decide(&["--approvals", &approvals, "--", &tool, "--flag"]);
    assert_eq!(code, 0, "{decision}");
    assert_eq!(decision["decision"], "allow");
    let segment = &decision["segments"][0];
    assert_eq!(segment["argv"], serde_json::json!([tool, "--flag"]));
    assert_eq!(segment["resolvedPath"], tool.as_str());
    assert_eq!(segment["satisfiedBy"], "allowlist");
}

#[test]
fn names_the_wrappers_it_looked_through_so_an_executor_can_check_them() {
    let (_files, tool, approvals) = allowlisted_tool();
    let (code, decision) = decide(&["--approvals", &approvals, "--", "nice", &tool]);
    assert_eq!(code, 0, "{decision}");
    let segment = &decision["segments"][0];
    assert_eq!(segment["resolvedPath"], tool.as_str());
    let through = &segment["lookedThrough"];
    assert_eq!(through[0]["word"], "nice", "{decision}");
    let nice = through[0]["resolvedPath"].as_str().unwrap_or_default();
    assert!(
        nice.starts_with('/') && nice.ends_with("/nice"),
        "{decision}"
    );
    assert_eq!(through.as_array().map(Vec::len), Some(1));
}

#[test]
fn asks_with_exit_10_for_an_allowlist_miss_under_on_miss() {
    let (files, _tool, approvals) = allowlisted_tool();
    let other = files.write("other", "#!/bin/sh\n");
    let (code, decision) = decide(&["--approvals", &approvals, &format!("{other} -x")]);
    assert_eq!(code, 10, "{decision}");
    assert_eq!(decision["decision"], "ask");
    assert_eq!(decision["requiresApproval"], true);
}

#[test]
fn config_ask_always_still_asks_for_an_allowlisted_command() {
    let (files, tool, approvals) = allowlisted_tool();
    let config = files.write("gh.json5", "{ tools: { exec: { ask: 'always' } } }");
    let (code, decision) = decide(&["--config", &config, "--approvals", &approvals, &tool]);
    assert_eq!((code, decision["decision"].as_str()), (10, Some("ask")));
}

#[test]
fn batch_mode_resolves_bare_names_with_the_lines_path() {
    let (files, tool, approvals) = allowlisted_tool();
    let bin = files.join("bin").display().to_string();
    let input = format!(
        "{{\"command\": \"tool\", \"env\": {{\"PATH\": \"{bin}\"}}}}\n{{\"command\": \"tool\", \"env\": {{\"PATH\": \"/nonexistent\"}}}}\n"
    );
    let run = gatehouse(&["check", "--approvals", &approvals, "--jsonl"], &input);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["decision"], "allow", "{}", run.stdout);
    assert_eq!(lines[0]["segments"][0]["resolvedPath"], tool.as_str());
    assert_ne!(lines[1]["decision"], "allow", "{}", run.stdout);
}

#[test]
fn several_arguments_are_an_argv_and_one_is_a_shell_string() {
    let (_, argv) = decide(&["--", "ls", "|", "head"]);
    assert_eq!(argv["segments"].as_array().unwrap().len(), 1);
    assert_eq!(
        argv["segments"][0]["argv"],
        serde_json::json!(["ls", "|", "head"])
    );
    let (_, shell) = decide(&["--", "ls | head"]);
    assert_eq!(shell["segments"].as_array().unwrap().len(), 2);
}

#[test]
fn cwd_decides_what_a_relative_program_resolves_to() {
    let files = Files::new();
    let script = executable(&files, "run.sh");
    let approvals = approvals_allowing(&files, &script);
    let dir = files.join("").display().to_string();
    let (code, decision) = decide(&["--approvals", &approvals, "--cwd", &dir, "./run.sh"]);
    let resolved = decision["segments"][0]["resolvedPath"].as_str();
    assert_eq!((code, resolved), (0, Some(script.as_str())));
    let (code, _) = decide(&["--approvals", &approvals, "--cwd", "/", "./run.sh"]);
    assert_ne!(code, 0);
}
