use std::time::Duration;

use gatehouse_hooks::{
    AgentId, CardRoute, Host, IntegrationSettings, SessionKeyTemplate, SettingsError, translate,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{MACHINE, fixture, fixture_names};

fn input(session_id: &str, extra: Value) -> Vec<u8> {
    let mut input = json!({
        "session_id": session_id, "cwd": "/home/ann/app", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"},
    });
    if let (Value::Object(fields), Value::Object(more)) = (&mut input, extra) {
        fields.extend(more);
    }
    serde_json::to_vec(&input).unwrap()
}

fn session_key(host: Host, bytes: &[u8], settings: &IntegrationSettings) -> String {
    translate(host, bytes, settings, MACHINE)
        .unwrap()
        .call
        .session_key
}

#[test]
fn derives_one_session_key_per_host_session() {
    let settings = IntegrationSettings::default();
    // Every call of the captured Claude Code session, whatever the tool, shares one key.
    let keys: std::collections::BTreeSet<String> = fixture_names("claude-code")
        .iter()
        .filter(|name| fixture(name).windows(8).any(|w| w == b"a8aac326"))
        .map(|name| session_key(Host::ClaudeCode, &fixture(name), &settings))
        .collect();
    assert_eq!(
        keys.into_iter().collect::<Vec<_>>(),
        vec!["claude-code:a8aac326-aed7-410b-807e-d5e29c28e48a"]
    );
    // The cwd moves when a command `cd`s; the key does not.
    let moved = input("s1", json!({"cwd": "/home/ann/app/sub"}));
    assert_eq!(
        session_key(Host::ClaudeCode, &moved, &settings),
        session_key(Host::ClaudeCode, &input("s1", json!({})), &settings)
    );
    assert_eq!(
        session_key(Host::Codex, &input("s1", json!({})), &settings),
        "codex:s1"
    );
}

#[test]
fn gives_a_sub_agent_its_own_key_under_its_parents() {
    let settings = IntegrationSettings::default();
    let from_subagent = input("s1", json!({"agent_id": "a7", "agent_type": "Explore"}));
    let translated = translate(Host::ClaudeCode, &from_subagent, &settings, MACHINE).unwrap();
    assert_eq!(translated.call.session_key, "claude-code:s1:subagent:a7");
    assert_eq!(
        translated.call.context.subagent.as_deref(),
        Some("Explore (a7)")
    );
}

#[test]
fn refuses_session_and_agent_ids_that_could_forge_a_key() {
    let settings = IntegrationSettings::default();
    for bad in [
        input("agent:main:main", json!({})),
        input("", json!({})),
        input("s 1", json!({})),
        input(&"a".repeat(129), json!({})),
        input("s1", json!({"agent_id": "x:subagent:y"})),
    ] {
        let rejected = translate(Host::ClaudeCode, &bad, &settings, MACHINE).unwrap_err();
        assert!(
            rejected.to_string().contains("letters, digits"),
            "{rejected}"
        );
    }
}

#[test]
fn renders_an_operators_template() {
    let settings = IntegrationSettings {
        agent_id: AgentId::parse("laptop-claude").unwrap(),
        session_key: SessionKeyTemplate::parse("agent:{agent_id}:{host}:{session_id}").unwrap(),
        ..IntegrationSettings::default()
    };
    let call = translate(
        Host::ClaudeCode,
        &input("s1", json!({})),
        &settings,
        MACHINE,
    )
    .unwrap()
    .call;
    assert_eq!(call.agent_id, "laptop-claude");
    assert_eq!(call.session_key, "agent:laptop-claude:claude-code:s1");
    assert_eq!(
        SessionKeyTemplate::default().as_str(),
        "{host}:{session_id}"
    );
}

#[test]
fn refuses_templates_and_ids_that_do_not_work() {
    let why = |template: &str| match SessionKeyTemplate::parse(template) {
        Err(SettingsError::SessionKeyTemplate { why, .. }) => why,
        other => panic!("{template}: {other:?}"),
    };
    assert_eq!(
        why("{host}:main"),
        "must contain {session_id}, or every conversation would share one session"
    );
    assert_eq!(
        why("{session}"),
        "placeholders are {host}, {session_id} and {agent_id}"
    );
    assert_eq!(why("{session_id"), "unmatched '{'");
    assert_eq!(why("x}{session_id}"), "unmatched '}'");
    for id in ["", "-a", "a b", "a:b", &"a".repeat(65)] {
        assert!(AgentId::parse(id).is_err(), "{id:?}");
    }
    assert!(CardRoute::new("telegram", " ").is_err());
    assert!(CardRoute::new("", "42").is_err());
}

#[test]
fn puts_machine_route_and_timeout_into_the_approval_request() {
    let mut route = CardRoute::new("telegram", "-1001234567890").unwrap();
    route.thread_id = Some("42".into());
    let settings = IntegrationSettings {
        route: Some(route),
        machine: Some("ann-laptop".into()),
        approval_timeout: Duration::from_secs(100),
        ..IntegrationSettings::default()
    };
    let bytes = fixture("claude-code/pretooluse-Write.json");
    let call = translate(Host::ClaudeCode, &bytes, &settings, MACHINE)
        .unwrap()
        .call;
    let check = json!({
        "agentId": "main",
        "sessionKey": "claude-code:a8aac326-aed7-410b-807e-d5e29c28e48a",
        "tool": "write",
        "params": {"path": "/tmp/cc-tools/proj/new.txt", "content": "new\n"},
        "callId": "toolu_01",
    });
    assert_eq!(call.check_params(), check);
    let mut request = check;
    request.as_object_mut().unwrap().extend(
        json!({
            "title": "Claude Code on ann-laptop: Write",
            "description": "Project: /tmp/cc-tools/proj\n\
                            Session: a8aac326-aed7-410b-807e-d5e29c28e48a (Claude Code PreToolUse)\n\
                            Permission mode: default",
            "timeoutMs": 100000,
            "turnSource": {"channel": "telegram", "to": "-1001234567890", "threadId": "42"},
        })
        .as_object()
        .unwrap()
        .clone(),
    );
    let timeout_ms = settings.approval_timeout.as_millis() as u64;
    assert_eq!(call.request_params(timeout_ms), request);
}
