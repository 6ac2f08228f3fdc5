//! Whatever reaches a hook — random bytes, JSON of any shape, any tool and arguments, any
//! patch — the crate answers without panicking, and a refused input is always rendered as a
//! deny for every host, never an allow.

use gatehouse_hooks::{Answer, HookEvent, Host, IntegrationSettings, render, translate};
use gatehouse_policy::files::{PatchOp, parse_patch};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::support::{MACHINE, host_reads, http_reads, is_deny};

const HOSTS: [Host; 2] = [Host::ClaudeCode, Host::Codex];

/// Translates `bytes` for both hosts; a refusal must render as a deny everywhere.
fn check_refusals_deny(bytes: &[u8]) -> Result<(), TestCaseError> {
    for host in HOSTS {
        if let Err(rejected) = translate(host, bytes, &IntegrationSettings::default(), MACHINE) {
            let reads = host_reads(host, rejected.event, &rejected.render(host));
            prop_assert!(is_deny(&reads), "{host}: {rejected} → {reads:?}");
            if host == Host::ClaudeCode {
                let reads = http_reads(&rejected.render_http());
                prop_assert!(is_deny(&reads), "http: {rejected} → {reads:?}");
            }
        }
    }
    Ok(())
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        "(/|~|\\.\\./|[a-z]{0,3}/)?[a-z.*/\u{202e} ]{0,12}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(param_name(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn param_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "command", "file_path", "content", "old_string", "new_string", "edits",
            "notebook_path", "edit_mode", "pattern", "path", "glob", "url", "prompt", "query",
            "description", "subagent_type", "model", "offset", "limit", "replace_all",
            "run_in_background",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_]{1,8}",
    ]
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "Bash", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep",
            "WebFetch", "WebSearch", "Agent", "Task", "apply_patch", "mcp__gh__run", "mcp__",
            "mcp__gh", "MCP__Gh__Run", "TodoWrite", "",
        ])
        .prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

/// A hook input of any shape near the real one: each field present, absent or mistyped.
fn hook_input() -> impl Strategy<Value = Value> {
    let event = prop_oneof![
        3 => Just(json!("PreToolUse")),
        3 => Just(json!("PermissionRequest")),
        1 => Just(json!("PostToolUse")),
        1 => leaf(),
    ];
    let session = prop_oneof![4 => Just(json!("0317bc51-39cc")), 1 => leaf()];
    let cwd = prop_oneof![3 => Just(json!("/srv/app")), 1 => Just(json!("/")), 1 => leaf()];
    let arguments = prop::collection::btree_map(param_name(), value(), 0..6);
    let input = prop_oneof![
        4 => (arguments, prop::sample::select(vec!["command", "file_path", "url", "query", "prompt"]), leaf())
            .prop_map(|(mut m, key, v)| {
                // Often the one argument the tool needs, as a string.
                if let Value::String(text) = v {
                    m.insert(key.to_owned(), Value::String(text));
                }
                Value::Object(m.into_iter().collect())
            }),
        1 => leaf(),
    ];
    (
        event,
        session,
        cwd,
        tool_name(),
        input,
        prop::option::of(leaf()),
        any::<u8>(),
    )
        .prop_map(|(event, session, cwd, tool, input, extra, drop)| {
            let mut fields = Map::new();
            fields.insert("hook_event_name".into(), event);
            fields.insert("session_id".into(), session);
            fields.insert("cwd".into(), cwd);
            fields.insert("tool_name".into(), json!(tool));
            fields.insert("tool_input".into(), input);
            if let Some(extra) = extra {
                fields.insert("agent_id".into(), extra);
            }
            // Drop one field now and then.
            let keys: Vec<String> = fields.keys().cloned().collect();
            if drop % 8 == 0 {
                fields.remove(&keys[usize::from(drop) % keys.len()]);
            }
            Value::Object(fields)
        })
}

/// Patch-like text: well-formed hunks with paths of every kind, and stray lines (indented
/// headers, markers, content) between them.
fn patch_text() -> impl Strategy<Value = String> {
    let path = "(/|~/| |\\.\\./)?[a-z]{1,3}(/[a-z.]{1,3})?";
    let hunk = prop_oneof![
        3 => path.prop_map(|p| format!("*** Add File: {p}\n+x")),
        2 => path.prop_map(|p| format!("*** Delete File: {p}")),
        3 => (path, prop::option::of(path))
            .prop_map(|(p, to)| match to {
                Some(to) => format!("*** Update File: {p}\n*** Move to: {to}\n@@\n-a\n+b"),
                None => format!("*** Update File: {p}\n@@\n-a\n+b"),
            }),
        1 => path.prop_map(|p| format!(" \t*** Add File: {p}\n+x")),
        1 => path.prop_map(|p| format!("*** Move to: {p}")),
        1 => "[+ -][a-z*: ]{0,8}",
        1 => Just("*** End of File".to_owned()),
    ];
    (prop::collection::vec(hunk, 1..6), any::<bool>()).prop_map(|(hunks, crlf)| {
        let patch = format!("*** Begin Patch\n{}\n*** End Patch", hunks.join("\n"));
        if crlf {
            patch.replace('\n', "\r\n")
        } else {
            patch
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_bytes_are_answered_and_never_allowed_when_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        check_refusals_deny(&bytes)?;
    }

    #[test]
    fn any_json_near_a_hook_input_is_answered_and_never_allowed_when_refused(
        input in hook_input(),
    ) {
        check_refusals_deny(&serde_json::to_vec(&input).unwrap())?;
    }

    #[test]
    fn every_path_of_a_translated_patch_is_absolute(patch in patch_text()) {
        let input = json!({
            "session_id": "s", "cwd": "/w/p", "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "c",
        });
        let bytes = serde_json::to_vec(&input).unwrap();
        check_refusals_deny(&bytes)?;
        if let Ok(translated) = translate(Host::Codex, &bytes, &IntegrationSettings::default(), MACHINE) {
            let judged = translated.call.params["input"].as_str().unwrap().to_owned();
            if let Ok(ops) = parse_patch(&judged) {
                for op in ops {
                    let paths = match op {
                        PatchOp::Add { path, .. } | PatchOp::Delete { path } => vec![path],
                        PatchOp::Update { path, move_to } => {
                            std::iter::once(path).chain(move_to).collect()
                        }
                    };
                    for path in paths {
                        prop_assert!(path.starts_with('/'), "{path:?} in {judged:?}");
                        prop_assert!(!path.starts_with('~') , "{path:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_deny_with_any_reason_is_a_deny_for_every_host_and_event(reason in any::<String>()) {
        for host in HOSTS {
            for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest] {
                let output = render(host, event, &Answer::Deny { reason: reason.clone() });
                prop_assert!(is_deny(&host_reads(host, Some(event), &output)), "{host} {event}");
            }
        }
        let ask = render(Host::Codex, HookEvent::PreToolUse, &Answer::Ask { reason });
        prop_assert!(is_deny(&host_reads(Host::Codex, Some(HookEvent::PreToolUse), &ask)));
    }
}

/// A gateway answer of any shape near `tools.call.check`'s or `tools.call.request`'s.
fn gateway_answer() -> impl Strategy<Value = Value> {
    let decision = prop_oneof![
        3 => prop::sample::select(vec!["allow", "ask", "deny", "ALLOW", "allow-once", ""])
            .prop_map(|d| json!(d)),
        1 => leaf(),
    ];
    let approval = prop_oneof![
        1 => Just(Value::Null),
        2 => (prop::sample::select(vec!["allowed", "denied", "expired", "cancelled", "pending"]),
              prop::option::of(leaf()))
            .prop_map(|(state, by)| json!({"state": state, "resolvedBy": by})),
        1 => value(),
    ];
    (
        decision,
        prop::option::of(approval),
        prop::option::of(value()),
    )
        .prop_map(|(decision, approval, reasons)| {
            let mut fields = Map::new();
            fields.insert("decision".into(), decision);
            if let Some(approval) = approval {
                fields.insert("approval".into(), approval);
            }
            if let Some(reasons) = reasons {
                fields.insert("reasons".into(), reasons);
            }
            Value::Object(fields)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The gateway's answer is read fail-closed: a check allows only on exactly `allow`, a
    /// request only on `allow` with an approval a person gave; nothing else is an allow.
    #[test]
    fn only_the_gateways_plain_allow_becomes_an_allow(answer in gateway_answer()) {
        let decided = answer.get("decision").and_then(Value::as_str);
        match gatehouse_hooks::after_check(&answer) {
            gatehouse_hooks::AfterCheck::Answer(reply) => {
                prop_assert_eq!(reply.is_allow(), decided == Some("allow"), "{}", answer);
            }
            gatehouse_hooks::AfterCheck::AskPerson => prop_assert_eq!(decided, Some("ask")),
        }
        let allowed = answer.pointer("/approval/state").and_then(Value::as_str) == Some("allowed");
        let reply = gatehouse_hooks::after_request(&answer, 280);
        if reply.is_allow() {
            prop_assert!(decided == Some("allow") && allowed, "{}", answer);
        }
    }
}
