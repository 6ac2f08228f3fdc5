use std::path::PathBuf;

use gatehouse_hooks::{
    HookEvent, HookOutput, Host, HttpAnswer, IntegrationSettings, Translated, translate,
};
use serde_json::Value;

/// The machine name the tests pass.
pub(crate) const MACHINE: &str = "build-box";

pub(crate) fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture's hook input: the file itself, or the `body` of a captured HTTP hook request.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let text = std::fs::read(fixtures_dir().join(name)).unwrap();
    if name.contains("http-hook-request") {
        let request: Value = serde_json::from_slice(&text).unwrap();
        return serde_json::to_vec(&request["body"]).unwrap();
    }
    text
}

/// Every fixture file of a host's directory (schemas excluded).
pub(crate) fn fixture_names(host_dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join(host_dir))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".json"))
        .map(|name| format!("{host_dir}/{name}"))
        .collect();
    names.sort();
    names
}

pub(crate) fn translate_fixture(host: Host, name: &str) -> Translated {
    translate(
        host,
        &fixture(name),
        &IntegrationSettings::default(),
        MACHINE,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// How a host reads a command hook's output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HostReads {
    Allow,
    Deny(String),
    Ask(String),
    /// No decision: the host's own permission flow.
    NoDecision,
}

/// What `host` does with `output` for `event` (`None`: the event is unknown to the hook), per
/// the contracts verified with Claude Code 2.1.332 and Codex 0.171.0.
pub(crate) fn host_reads(host: Host, event: Option<HookEvent>, output: &HookOutput) -> HostReads {
    if output.exit_code == 2 {
        let stderr = String::from_utf8(output.stderr.clone()).unwrap();
        assert!(!stderr.trim().is_empty(), "exit 2 needs a reason on stderr");
        return HostReads::Deny(stderr);
    }
    assert_eq!(output.exit_code, 0, "any other exit code is a hook failure");
    if output.stdout.is_empty() {
        return match (host, event) {
            (Host::Codex, Some(HookEvent::PreToolUse)) => HostReads::Allow,
            _ => HostReads::NoDecision,
        };
    }
    reads_json(host, &serde_json::from_slice(&output.stdout).unwrap())
}

/// What Claude Code does with an HTTP hook answer.
pub(crate) fn http_reads(answer: &HttpAnswer) -> HostReads {
    assert_eq!(answer.status, 200);
    if answer.body.is_empty() {
        return HostReads::NoDecision;
    }
    reads_json(
        Host::ClaudeCode,
        &serde_json::from_slice(&answer.body).unwrap(),
    )
}

fn reads_json(host: Host, json: &Value) -> HostReads {
    let specific = &json["hookSpecificOutput"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    match specific["hookEventName"].as_str() {
        Some("PreToolUse") => {
            let reason = text(&specific["permissionDecisionReason"]);
            match (host, specific["permissionDecision"].as_str()) {
                (_, Some("deny")) => HostReads::Deny(reason),
                (Host::ClaudeCode, Some("allow")) => HostReads::Allow,
                (Host::ClaudeCode, Some("ask")) => HostReads::Ask(reason),
                other => panic!("not an answer {host} honours: {other:?} in {json}"),
            }
        }
        Some("PermissionRequest") => {
            let decision = &specific["decision"];
            match decision["behavior"].as_str() {
                Some("allow") => HostReads::Allow,
                Some("deny") => HostReads::Deny(text(&decision["message"])),
                other => panic!("not a PermissionRequest decision: {other:?} in {json}"),
            }
        }
        other => panic!("no hookEventName: {other:?} in {json}"),
    }
}

pub(crate) fn is_deny(reads: &HostReads) -> bool {
    matches!(reads, HostReads::Deny(reason) if !reason.trim().is_empty())
}
