//! Codex validates hook output against its published schemas, and accepts less than they
//! allow (an `allow`, an `ask` or any extra field makes the hook "fail" and the command run).
//! So every Codex answer is checked twice: against the schema, with a real JSON Schema
//! validator, and against the exact shape 0.171.0 honours. Claude Code publishes no schema;
//! its answers are checked against the documented shapes.

use boon::{Compiler, Draft, SchemaIndex, Schemas};
use gatehouse_hooks::{
    Answer, HookError, HookEvent, HookOutput, Host, IntegrationSettings, Rejected, render,
    render_http, translate,
};
use serde_json::{Value, json};

use crate::support::{MACHINE, fixture, fixture_names, fixtures_dir};

struct CodexSchemas {
    schemas: Schemas,
    pre_tool_use_output: SchemaIndex,
    permission_request_output: SchemaIndex,
    pre_tool_use_input: SchemaIndex,
    permission_request_input: SchemaIndex,
}

impl CodexSchemas {
    fn load() -> Self {
        let mut schemas = Schemas::new();
        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V7);
        let mut compile = |name: &str| {
            let path = fixtures_dir().join("codex/schema-0.171.0").join(name);
            compiler
                .compile(path.to_str().unwrap(), &mut schemas)
                .unwrap_or_else(|e| panic!("{name}: {e:#}"))
        };
        let pre_tool_use_output = compile("pre-tool-use.command.output.schema.json");
        let permission_request_output = compile("permission-request.command.output.schema.json");
        let pre_tool_use_input = compile("pre-tool-use.command.input.schema.json");
        let permission_request_input = compile("permission-request.command.input.schema.json");
        CodexSchemas {
            schemas,
            pre_tool_use_output,
            permission_request_output,
            pre_tool_use_input,
            permission_request_input,
        }
    }

    fn check_output(&self, event: HookEvent, output: &Value) -> Result<(), String> {
        let index = match event {
            HookEvent::PreToolUse => self.pre_tool_use_output,
            HookEvent::PermissionRequest => self.permission_request_output,
        };
        self.schemas
            .validate(output, index)
            .map_err(|e| format!("{e:#}"))
    }
}

/// Every answer Gatehouse can give Codex for `event`, including refusals.
fn codex_outputs(event: HookEvent) -> Vec<(String, HookOutput)> {
    let answers = [
        Answer::Allow {
            reason: Some("ok".into()),
        },
        Answer::Allow { reason: None },
        Answer::Deny {
            reason: "refused: \"rm -rf /\"\nsecond line".into(),
        },
        Answer::Ask {
            reason: "gateway down".into(),
        },
    ];
    let mut outputs: Vec<(String, HookOutput)> = answers
        .iter()
        .map(|answer| (format!("{answer:?}"), render(Host::Codex, event, answer)))
        .collect();
    let rejected = Rejected {
        event: Some(event),
        error: HookError::MissingField { field: "cwd" },
    };
    outputs.push((rejected.to_string(), rejected.render(Host::Codex)));
    outputs
}

#[test]
fn codex_answers_validate_against_codexs_published_output_schemas() {
    let schemas = CodexSchemas::load();
    let mut checked = 0;
    for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest] {
        for (what, output) in codex_outputs(event) {
            if output.stdout.is_empty() {
                continue;
            }
            let json: Value = serde_json::from_slice(&output.stdout).unwrap();
            schemas
                .check_output(event, &json)
                .unwrap_or_else(|e| panic!("{event} {what}: {json}\n{e}"));
            checked += 1;
        }
    }
    assert_eq!(checked, 7, "every non-empty Codex answer was validated");
}

#[test]
fn the_codex_schemas_refuse_what_codex_refuses() {
    // The validator is real: the schema's `additionalProperties: false` and enums bite.
    let schemas = CodexSchemas::load();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "r"}});
    assert!(schemas.check_output(HookEvent::PreToolUse, &deny).is_ok());
    for bad in [
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "r", "extra": 1}}),
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "maybe"}}),
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest"}}),
        json!({"gatehouse": true}),
    ] {
        assert!(
            schemas.check_output(HookEvent::PreToolUse, &bad).is_err(),
            "{bad}"
        );
    }
    let bad_request = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "ask"}}});
    assert!(
        schemas
            .check_output(HookEvent::PermissionRequest, &bad_request)
            .is_err()
    );
}

#[test]
fn codex_answers_have_exactly_the_shape_codex_honours() {
    for (what, output) in codex_outputs(HookEvent::PreToolUse) {
        assert_eq!(output.exit_code, 0, "{what}");
        if output.stdout.is_empty() {
            assert!(what.starts_with("Allow"), "only an allow is silent: {what}");
            continue;
        }
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        let reason = json["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(!reason.trim().is_empty(), "{what}");
        assert_eq!(
            json,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": reason}}),
            "{what}"
        );
    }
    for (what, output) in codex_outputs(HookEvent::PermissionRequest) {
        assert_eq!(output.exit_code, 0, "{what}");
        if output.stdout.is_empty() {
            assert!(what.starts_with("Ask"), "only an ask is silent: {what}");
            continue;
        }
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        let decision = &json["hookSpecificOutput"]["decision"];
        let expected = match decision["behavior"].as_str() {
            Some("allow") => json!({"behavior": "allow"}),
            Some("deny") => json!({"behavior": "deny", "message": decision["message"]}),
            other => panic!("{what}: {other:?}"),
        };
        assert_eq!(
            json,
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": expected}}),
            "{what}: no interrupt, updatedInput or updatedPermissions"
        );
    }
}

#[test]
fn codex_fixtures_are_inputs_codexs_schemas_accept() {
    let schemas = CodexSchemas::load();
    for name in fixture_names("codex") {
        let input: Value = serde_json::from_slice(&fixture(&name)).unwrap();
        let index = match input["hook_event_name"].as_str() {
            Some("PreToolUse") => schemas.pre_tool_use_input,
            _ => schemas.permission_request_input,
        };
        schemas
            .schemas
            .validate(&input, index)
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    }
}

/// Claude Code's documented answers: PreToolUse `permissionDecision` allow|deny|ask with an
/// optional `permissionDecisionReason`; PermissionRequest `decision` {behavior allow|deny,
/// message on deny}; nothing else.
fn check_claude_code_shape(event: HookEvent, json: &Value) {
    let top: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(top, ["hookSpecificOutput"], "{json}");
    let specific = json["hookSpecificOutput"].as_object().unwrap();
    assert_eq!(specific["hookEventName"], json!(event.as_str()));
    match event {
        HookEvent::PreToolUse => {
            for key in specific.keys() {
                assert!(
                    [
                        "hookEventName",
                        "permissionDecision",
                        "permissionDecisionReason"
                    ]
                    .contains(&key.as_str()),
                    "{json}"
                );
            }
            let decision = specific["permissionDecision"].as_str().unwrap();
            assert!(["allow", "deny", "ask"].contains(&decision), "{json}");
            if decision != "allow" {
                assert!(
                    !specific["permissionDecisionReason"]
                        .as_str()
                        .unwrap()
                        .is_empty()
                );
            }
        }
        HookEvent::PermissionRequest => {
            assert_eq!(specific.len(), 2, "{json}");
            let decision = specific["decision"].as_object().unwrap();
            match decision["behavior"].as_str() {
                Some("allow") => assert_eq!(decision.len(), 1, "{json}"),
                Some("deny") => {
                    assert_eq!(decision.len(), 2, "{json}");
                    assert!(!decision["message"].as_str().unwrap().is_empty());
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

#[test]
fn claude_code_answers_match_the_documented_shapes() {
    let answers = [
        Answer::Allow {
            reason: Some("ok".into()),
        },
        Answer::Allow { reason: None },
        Answer::Deny {
            reason: "no".into(),
        },
        Answer::Ask {
            reason: "you decide".into(),
        },
    ];
    for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest] {
        for answer in &answers {
            let command = render(Host::ClaudeCode, event, answer);
            let http = render_http(event, answer);
            for body in [command.stdout, http.body] {
                if body.is_empty() {
                    assert_eq!(
                        (event, answer.clone()),
                        (HookEvent::PermissionRequest, answers[3].clone())
                    );
                    continue;
                }
                check_claude_code_shape(event, &serde_json::from_slice(&body).unwrap());
            }
        }
    }
    // A refusal of a real captured input, too.
    let mut input: Value =
        serde_json::from_slice(&fixture("claude-code/permissionrequest-Write.json")).unwrap();
    input["tool_input"]["file_path"] = json!("~/x");
    let rejected = translate(
        Host::ClaudeCode,
        &serde_json::to_vec(&input).unwrap(),
        &IntegrationSettings::default(),
        MACHINE,
    )
    .unwrap_err();
    let output = rejected.render(Host::ClaudeCode);
    check_claude_code_shape(
        HookEvent::PermissionRequest,
        &serde_json::from_slice(&output.stdout).unwrap(),
    );
}
