use gatehouse_hooks::{
    HookError, HookEvent, Host, IntegrationSettings, MAX_INPUT_BYTES, Rejected, translate,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{HostReads, MACHINE, host_reads, http_reads, is_deny};

fn rejected(host: Host, bytes: &[u8]) -> Rejected {
    translate(host, bytes, &IntegrationSettings::default(), MACHINE).unwrap_err()
}

/// `bytes` are refused with `message`, and every output of the refusal is a deny carrying it.
fn check(bytes: &[u8], event: Option<HookEvent>, message: &str) {
    for host in [Host::ClaudeCode, Host::Codex] {
        let rejected = rejected(host, bytes);
        assert_eq!(rejected.event, event, "{message}");
        assert_eq!(rejected.to_string(), message);
        let reads = host_reads(host, rejected.event, &rejected.render(host));
        assert!(is_deny(&reads), "{host}: {reads:?}");
        let HostReads::Deny(reason) = reads else {
            unreachable!()
        };
        assert_eq!(
            reason.trim(),
            format!("Gatehouse refused this call: {message}")
        );
    }
    assert!(is_deny(&http_reads(
        &rejected(Host::ClaudeCode, bytes).render_http()
    )));
}

fn with(fields: serde_json::Value) -> Vec<u8> {
    let mut input = json!({
        "session_id": "s1", "cwd": "/w", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"},
    });
    input
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    serde_json::to_vec(&input).unwrap()
}

#[test]
fn denies_input_it_cannot_read() {
    check(b"", None, "the hook input is empty");
    check(b" \n\t", None, "the hook input is empty");
    check(
        b"{\"session_id\": ",
        None,
        "the hook input is not JSON (line 1, column 15: EOF while parsing a value)",
    );
    check(
        b"\xff\xfe{}",
        None,
        "the hook input is not JSON (line 1, column 1: expected value)",
    );
    check(b"[1, 2]", None, "the hook input is not a JSON object");
    check(
        b"\"PreToolUse\"",
        None,
        "the hook input is not a JSON object",
    );
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let refused = rejected(Host::Codex, deep.as_bytes());
    assert!(
        matches!(refused.error, HookError::NotJson { .. }),
        "{refused}"
    );
}

#[test]
fn denies_input_over_the_limit_without_reading_it() {
    let mut big = with(json!({"tool_input": {"command": "x".repeat(MAX_INPUT_BYTES)}}));
    let len = big.len();
    check(
        &big,
        None,
        &format!("the hook input is {len} bytes, over Gatehouse's limit of 1048576 bytes"),
    );
    // Exactly at the limit is read.
    let at_limit = with(json!({"tool_input": {"command": ""}}));
    let pad = MAX_INPUT_BYTES - at_limit.len();
    big = with(json!({"tool_input": {"command": "x".repeat(pad)}}));
    assert_eq!(big.len(), MAX_INPUT_BYTES);
    assert!(
        translate(
            Host::ClaudeCode,
            &big,
            &IntegrationSettings::default(),
            MACHINE
        )
        .is_ok()
    );
}

#[test]
fn denies_events_it_does_not_answer() {
    check(
        &with(json!({"hook_event_name": "PostToolUse"})),
        None,
        "Gatehouse answers PreToolUse and PermissionRequest hooks only, not \"PostToolUse\"; \
         remove it from the hook settings",
    );
    check(
        &with(json!({"hook_event_name": "pretooluse"})),
        None,
        "Gatehouse answers PreToolUse and PermissionRequest hooks only, not \"pretooluse\"; \
         remove it from the hook settings",
    );
    check(
        &with(json!({"hook_event_name": 1})),
        None,
        "`hook_event_name` in the hook input must be a string",
    );
    let mut input: serde_json::Value = serde_json::from_slice(&with(json!({}))).unwrap();
    input.as_object_mut().unwrap().remove("hook_event_name");
    check(
        &serde_json::to_vec(&input).unwrap(),
        None,
        "the hook input has no `hook_event_name`",
    );
}

#[test]
fn denies_in_the_events_shape_once_the_event_is_known() {
    let pre = Some(HookEvent::PreToolUse);
    check(
        &with(json!({"session_id": null})),
        pre,
        "the hook input has no `session_id`",
    );
    check(
        &with(json!({"cwd": "relative/dir"})),
        pre,
        "`cwd` in the hook input must be an absolute path, not \"relative/dir\"",
    );
    check(
        &with(json!({"tool_name": " "})),
        pre,
        "`tool_name` in the hook input is empty",
    );
    check(
        &with(json!({"tool_input": "ls"})),
        pre,
        "`tool_input` in the hook input must be an object",
    );
    check(
        &with(json!({"tool_use_id": 7})),
        pre,
        "`tool_use_id` in the hook input must be a string",
    );
    check(
        &with(json!({"hook_event_name": "PermissionRequest", "tool_input": {}})),
        Some(HookEvent::PermissionRequest),
        "the Bash call has no `command`",
    );
}

#[test]
fn reads_a_null_tool_input_as_no_arguments() {
    let translated = translate(
        Host::ClaudeCode,
        &with(json!({"tool_name": "mcp__gh__list", "tool_input": null})),
        &IntegrationSettings::default(),
        MACHINE,
    )
    .unwrap();
    assert_eq!(translated.call.params, json!({}));
}
