use gatehouse_hooks::{
    ApproverContext, HookError, HookEvent, HookToolCall, Host, IntegrationSettings, map_call,
    parse_input,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{MACHINE, fixture_names, translate_fixture};

/// The fixture maps to `tool` with `params`.
fn check(name: &str, tool: &str, params: Value) {
    let call = translate_fixture(Host::ClaudeCode, name).call;
    assert_eq!(
        (call.tool.as_str(), &call.params),
        (tool, &params),
        "{name}"
    );
}

#[test]
fn every_captured_claude_code_input_maps() {
    let names = fixture_names("claude-code");
    assert!(names.len() >= 17, "{names:?}");
    for name in names {
        let translated = translate_fixture(Host::ClaudeCode, &name);
        assert_eq!(translated.call.agent_id, "main", "{name}");
        assert!(
            translated.call.session_key.starts_with("claude-code:"),
            "{name}"
        );
    }
}

#[test]
fn maps_bash_to_exec_in_the_hooks_cwd_with_the_whole_context() {
    let translated = translate_fixture(Host::ClaudeCode, "claude-code/pretooluse-Bash.json");
    assert_eq!(translated.event(), HookEvent::PreToolUse);
    assert_eq!(
        translated.call,
        HookToolCall {
            agent_id: "main".into(),
            session_key: "claude-code:a8aac326-aed7-410b-807e-d5e29c28e48a".into(),
            tool: "exec".into(),
            params: json!({"command": "echo hi > bash_out.txt", "cwd": "/tmp/cc-tools/proj"}),
            call_id: Some("toolu_00".into()),
            context: ApproverContext {
                host: Host::ClaudeCode,
                event: HookEvent::PreToolUse,
                host_tool: "Bash".into(),
                machine: MACHINE.into(),
                project_dir: "/tmp/cc-tools/proj".into(),
                session_id: "a8aac326-aed7-410b-807e-d5e29c28e48a".into(),
                permission_mode: Some("default".into()),
                subagent: None,
                agent_note: Some("Write hi".into()),
                adjustments: vec![],
            },
            route: None,
        }
    );
}

#[test]
fn maps_file_tools_to_their_absolute_paths() {
    check(
        "claude-code/pretooluse-Read.json",
        "read",
        json!({"path": "/tmp/cc-gg/proj/nb.ipynb"}),
    );
    check(
        "claude-code/pretooluse-Write.json",
        "write",
        json!({"path": "/tmp/cc-tools/proj/new.txt", "content": "new\n"}),
    );
    check(
        "claude-code/permissionrequest-Write.json",
        "write",
        json!({"path": "/tmp/cc-p1/proj/pr_write.txt", "content": "x\n"}),
    );
    check(
        "claude-code/pretooluse-Edit.json",
        "edit",
        json!({"path": "/tmp/cc-tools/proj/existing.txt",
               "edits": [{"oldText": "hello", "newText": "hello2"}]}),
    );
    check(
        "claude-code/pretooluse-MultiEdit.json",
        "edit",
        json!({"path": "/tmp/cc-tools/proj/existing.txt",
               "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}),
    );
    check(
        "claude-code/pretooluse-NotebookEdit.json",
        "edit",
        json!({"path": "/tmp/cc-gg/proj/nb.ipynb"}),
    );
}

#[test]
fn maps_glob_and_grep_to_reads_of_their_directory() {
    check(
        "claude-code/pretooluse-Glob.json",
        "read",
        json!({"path": "/tmp/cc-gg/proj"}),
    );
    check(
        "claude-code/pretooluse-Grep.json",
        "read",
        json!({"path": "/tmp/cc-gg/proj"}),
    );
    let grep = translate_fixture(Host::ClaudeCode, "claude-code/pretooluse-Grep.json").call;
    assert_eq!(
        grep.context.adjustments,
        vec![r#"a Grep search for "hello" under this path"#]
    );
}

#[test]
fn maps_web_agent_and_mcp_tools() {
    check(
        "claude-code/pretooluse-WebFetch.json",
        "web_fetch",
        json!({"url": "https://example.com/"}),
    );
    check(
        "claude-code/pretooluse-WebSearch.json",
        "web_search",
        json!({"query": "gatehouse"}),
    );
    for name in [
        "claude-code/pretooluse-Agent.json",
        "claude-code/pretooluse-Agent-called-as-Task.json",
    ] {
        check(
            name,
            "sessions_spawn",
            json!({"task": "do x", "label": "sub"}),
        );
    }
    check(
        "claude-code/pretooluse-mcp__gh__run_command.json",
        "mcp__gh__run_command",
        json!({"command": "ls -la", "cwd": "/tmp"}),
    );
    check(
        "claude-code/pretooluse-mcp__gh__check_command.json",
        "mcp__gh__check_command",
        json!({"command": "rm -rf /"}),
    );
}

#[test]
fn maps_permission_requests_and_http_bodies_without_a_call_id() {
    for name in [
        "claude-code/permissionrequest-Bash.json",
        "claude-code/http-hook-request-PermissionRequest-Bash.json",
    ] {
        let translated = translate_fixture(Host::ClaudeCode, name);
        assert_eq!(translated.event(), HookEvent::PermissionRequest, "{name}");
        assert_eq!(translated.call.tool, "exec", "{name}");
        assert_eq!(translated.call.call_id, None, "{name}");
    }
    let http = translate_fixture(
        Host::ClaudeCode,
        "claude-code/http-hook-request-PreToolUse-Bash.json",
    );
    assert_eq!(
        http.call.params,
        json!({"command": "echo a > h_allow.txt", "cwd": "/tmp/cc-http/proj"})
    );
}

#[test]
fn keeps_fields_it_does_not_read() {
    let translated = translate_fixture(
        Host::ClaudeCode,
        "claude-code/pretooluse-mcp__gh__run_command.json",
    );
    let extra = &translated.input.extra;
    assert_eq!(
        extra["mcp_server"],
        json!({"name": "gh", "source": "dynamic"})
    );
    assert_eq!(extra["effort"], json!({"level": "high"}));
    assert!(extra.contains_key("prompt_id"));
}

/// A PreToolUse input of `tool` with `tool_input`, in `cwd`.
fn input_of(tool: &str, tool_input: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s1", "cwd": "/home/ann/app", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_9",
    }))
    .unwrap()
}

fn map(tool: &str, tool_input: Value) -> Result<HookToolCall, HookError> {
    let input = parse_input(Host::ClaudeCode, &input_of(tool, tool_input)).unwrap();
    map_call(&input, &IntegrationSettings::default(), MACHINE)
}

#[test]
fn joins_a_relative_path_to_the_cwd_and_says_so() {
    let call = map(
        "Read",
        json!({"file_path": "src/../notes.md", "offset": 10}),
    )
    .unwrap();
    assert_eq!(
        call.params,
        json!({"path": "/home/ann/app/src/../notes.md", "offset": 10})
    );
    assert_eq!(
        call.context.adjustments,
        vec![
            r#"the relative path "src/../notes.md" was judged as "/home/ann/app/src/../notes.md" (joined to the hook's cwd)"#
        ]
    );
    assert!(call.description().contains("Gatehouse: the relative path"));
}

#[test]
fn searches_the_cwd_when_glob_names_no_path() {
    let call = map("Glob", json!({"pattern": "**/*.rs"})).unwrap();
    assert_eq!(call.params, json!({"path": "/home/ann/app"}));
}

#[test]
fn denies_paths_it_cannot_place() {
    let invalid = |tool: &str, input: Value| match map(tool, input) {
        Err(HookError::InvalidParam { param, .. }) => param,
        other => panic!("{tool}: {other:?}"),
    };
    assert_eq!(
        invalid("Read", json!({"file_path": "~/.ssh/id_rsa"})),
        "file_path"
    );
    assert_eq!(
        invalid("Write", json!({"file_path": "", "content": ""})),
        "file_path"
    );
    assert_eq!(
        invalid("Glob", json!({"pattern": "../../etc/*"})),
        "pattern"
    );
    assert_eq!(invalid("Glob", json!({"pattern": "/etc/**"})), "pattern");
    assert_eq!(
        invalid("Grep", json!({"pattern": "x", "glob": "~/secrets/*"})),
        "glob"
    );
    assert_eq!(
        invalid("Grep", json!({"pattern": "x", "path": "~root"})),
        "path"
    );
}

#[test]
fn notes_what_the_tool_input_says_beyond_the_params() {
    let call = map(
        "Bash",
        json!({"command": "sleep 60", "run_in_background": true, "description": "wait\u{202e}"}),
    )
    .unwrap();
    assert_eq!(
        call.context.adjustments,
        vec!["the command runs in the background"]
    );
    assert_eq!(call.context.agent_note.as_deref(), Some("wait\u{202e}"));
    // The agent's words are quoted with escapes, so a bidi mark cannot reorder the card.
    assert!(
        call.description()
            .contains(r#"The agent says: "wait\u{202e}""#)
    );
    let spawn = map(
        "Agent",
        json!({"prompt": "p", "description": "d", "subagent_type": "Explore", "model": "haiku"}),
    )
    .unwrap();
    assert_eq!(
        spawn.params,
        json!({"task": "p", "label": "d", "model": "haiku"})
    );
    assert_eq!(
        spawn.context.adjustments,
        vec![r#"spawns a "Explore" sub-agent"#]
    );
}

#[test]
fn denies_unknown_tools_and_missing_or_mistyped_params() {
    for tool in [
        "TodoWrite",
        "LS",
        "bash",
        "Skill",
        "mcp__",
        "mcp__gh",
        "mcp____x",
        "mcp__gh__run\u{202e}",
        "mcp__gh__a b",
        "mcp__gh__a\nb",
    ] {
        let error = map(tool, json!({})).unwrap_err();
        assert!(
            matches!(
                error,
                HookError::UnknownTool { .. } | HookError::BadMcpName { .. }
            ),
            "{tool}: {error:?}"
        );
    }
    assert_eq!(
        map("Bash", json!({})).unwrap_err().to_string(),
        "the Bash call has no `command`"
    );
    assert_eq!(
        map("Write", json!({"file_path": 7, "content": ""}))
            .unwrap_err()
            .to_string(),
        "`file_path` of the Write call must be a string"
    );
    assert_eq!(
        map("Read", json!({"file_path": "/a", "limit": -1}))
            .unwrap_err()
            .to_string(),
        "`limit` of the Read call must be a non-negative integer"
    );
    assert_eq!(
        map("TodoWrite", json!({})).unwrap_err().to_string(),
        "Gatehouse does not know the Claude Code tool \"TodoWrite\", so it refuses it \
         (docs/integrations/ lists the tools it maps)"
    );
}
