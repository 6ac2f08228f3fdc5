use gatehouse_hooks::{HookError, HookEvent, Host, IntegrationSettings, translate};
use gatehouse_policy::files::{PatchOp, parse_patch};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{MACHINE, fixture_names, translate_fixture};

#[test]
fn every_captured_codex_input_maps() {
    let names = fixture_names("codex");
    assert!(names.len() >= 6, "{names:?}");
    for name in names {
        let translated = translate_fixture(Host::Codex, &name);
        assert!(translated.call.session_key.starts_with("codex:"), "{name}");
    }
}

#[test]
fn maps_bash_to_exec_in_the_hooks_cwd() {
    let pre = translate_fixture(Host::Codex, "codex/pretooluse-Bash.json");
    assert_eq!(pre.event(), HookEvent::PreToolUse);
    assert_eq!(pre.call.tool, "exec");
    assert_eq!(
        pre.call.params,
        json!({"command": "echo MDENY > MDENY.txt", "cwd": "/work/wt/research/runs/cx-c7/proj"})
    );
    assert_eq!(pre.call.call_id.as_deref(), Some("call_0"));
    assert_eq!(
        pre.call.session_key,
        "codex:01a2266a-9e82-7ec3-8e2d-01772b1cfd21"
    );
    assert_eq!(
        pre.call.context.permission_mode.as_deref(),
        Some("bypassPermissions")
    );

    let escalated = translate_fixture(Host::Codex, "codex/pretooluse-Bash-escalated.json");
    let asked = translate_fixture(Host::Codex, "codex/permissionrequest-Bash.json");
    assert_eq!(asked.event(), HookEvent::PermissionRequest);
    assert_eq!(asked.call.params, escalated.call.params);
    assert_eq!(asked.call.call_id, None);
    // The model's justification reaches approvers as the agent's words.
    assert_eq!(
        asked.call.context.agent_note.as_deref(),
        Some("write outside workspace")
    );
    // One Codex session, one Gatehouse session, whichever event.
    assert_eq!(asked.call.session_key, escalated.call.session_key);
}

#[test]
fn judges_a_command_where_a_sent_workdir_says_it_runs() {
    let bash = |tool_input: Value| {
        let input = json!({
            "session_id": "s", "cwd": "/w/p", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": tool_input,
        });
        translate(
            Host::Codex,
            &serde_json::to_vec(&input).unwrap(),
            &IntegrationSettings::default(),
            MACHINE,
        )
        .map(|t| t.call.params)
        .map_err(|r| r.error)
    };
    assert_eq!(
        bash(json!({"command": "./run.sh", "workdir": "sub"})).unwrap(),
        json!({"command": "./run.sh", "cwd": "/w/p/sub"})
    );
    assert_eq!(
        bash(json!({"command": "./run.sh", "workdir": "/opt"})).unwrap(),
        json!({"command": "./run.sh", "cwd": "/opt"})
    );
    assert!(matches!(
        bash(json!({"command": "ls", "workdir": "~"})),
        Err(HookError::InvalidParam {
            param: "workdir",
            ..
        })
    ));
}

#[test]
fn maps_mcp_tools_with_their_arguments() {
    for name in [
        "codex/pretooluse-mcp__gh__run_command.json",
        "codex/permissionrequest-mcp__gh__run_command.json",
    ] {
        let call = translate_fixture(Host::Codex, name).call;
        assert_eq!(call.tool, "mcp__gh__run_command", "{name}");
        assert_eq!(
            call.params,
            json!({"command": "ls", "cwd": "/tmp"}),
            "{name}"
        );
    }
}

#[test]
fn judges_a_patch_with_its_paths_joined_to_the_cwd() {
    let call = translate_fixture(Host::Codex, "codex/pretooluse-apply_patch.json").call;
    assert_eq!(call.tool, "apply_patch");
    let input = call.params["input"].as_str().unwrap();
    assert_eq!(
        input,
        "*** Begin Patch\n*** Add File: /work/proj/docs/new.md\n+hello\n\
         *** Update File: /work/proj/src/a.rs\n*** Move to: /work/proj/src/b.rs\n\
         @@ fn main\n-old\n+new\n*** Delete File: /work/proj/old.txt\n*** End Patch\n"
    );
    assert_eq!(
        parse_patch(input).unwrap(),
        vec![
            PatchOp::Add {
                path: "/work/proj/docs/new.md".into(),
                len: 6
            },
            PatchOp::Update {
                path: "/work/proj/src/a.rs".into(),
                move_to: Some("/work/proj/src/b.rs".into())
            },
            PatchOp::Delete {
                path: "/work/proj/old.txt".into()
            },
        ]
    );
    assert_eq!(
        call.context.adjustments,
        vec![
            r#"the patch's relative file paths were judged joined to the hook's cwd "/work/proj""#
        ]
    );
}

fn apply_patch(patch: &str) -> Result<Value, HookError> {
    let input = json!({
        "session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/w/p",
        "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default",
        "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "c",
    });
    translate(
        Host::Codex,
        &serde_json::to_vec(&input).unwrap(),
        &IntegrationSettings::default(),
        MACHINE,
    )
    .map(|t| t.call.params["input"].clone())
    .map_err(|r| r.error)
}

#[test]
fn keeps_what_codex_reads_literally_in_a_patch_path() {
    // Codex joins `~/x` and ` x` to its cwd like any relative path; so does the check.
    let input =
        apply_patch("*** Begin Patch\n*** Add File: ~/x\n+a\n*** Add File:  y\n+b\n*** End Patch")
            .unwrap();
    assert_eq!(
        input,
        json!(
            "*** Begin Patch\n*** Add File: /w/p/~/x\n+a\n*** Add File: /w/p/ y\n+b\n*** End Patch"
        )
    );
    // Windows line ends stay as they were.
    let input = apply_patch("*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n").unwrap();
    assert_eq!(
        input,
        json!("*** Begin Patch\r\n*** Delete File: /w/p/a\r\n*** End Patch\r\n")
    );
}

#[test]
fn passes_an_unparsed_patch_on_for_the_gate_to_refuse() {
    let broken = "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch";
    assert_eq!(apply_patch(broken).unwrap(), json!(broken));
}

#[test]
fn denies_a_patch_whose_header_it_cannot_make_absolute() {
    let indented = "*** Begin Patch\n  *** Add File: ../escape.txt\n+x\n*** End Patch";
    assert!(
        parse_patch(indented).is_ok(),
        "the parser reads an indented header"
    );
    match apply_patch(indented) {
        Err(HookError::InvalidParam {
            param: "command",
            why,
            ..
        }) => {
            assert!(why.contains("could not make absolute"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn denies_tools_codex_does_not_send_through_hooks() {
    for tool in ["Write", "exec_command", "shell", "update_plan"] {
        let input = json!({
            "session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"command": "ls"},
        });
        let rejected = translate(
            Host::Codex,
            &serde_json::to_vec(&input).unwrap(),
            &IntegrationSettings::default(),
            MACHINE,
        )
        .unwrap_err();
        assert!(
            matches!(
                rejected.error,
                HookError::UnknownTool {
                    host: Host::Codex,
                    ..
                }
            ),
            "{tool}: {rejected:?}"
        );
        assert_eq!(rejected.event, Some(HookEvent::PreToolUse));
    }
}
