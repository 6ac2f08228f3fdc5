use std::path::Path;

use gatehouse_policy::{Ask, Security};
use gatehouse_store::approvals_file::{DEFAULT_AGENT_ID, HostFallback, RequestedPolicy, parse_str};
use serde_json::{Value, json};

fn cases(kind: &str) -> Vec<Value> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/decision-cases.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|c| c["kind"] == kind)
        .collect();
    assert!(!cases.is_empty(), "no {kind} cases in {}", path.display());
    cases
}

fn agent_id(input: &Value) -> &str {
    input["agentId"].as_str().unwrap_or(DEFAULT_AGENT_ID)
}

/// Checks only the fields a case lists, as the conformance README requires.
fn check_subset(id: &str, actual: &Value, expected: &Value) {
    match expected {
        Value::Object(fields) => {
            for (key, want) in fields {
                check_subset(&format!("{id}.{key}"), &actual[key], want);
            }
        }
        _ => assert_eq!(actual, expected, "case {id}"),
    }
}

#[test]
fn approvals_file_cases_pass() {
    for case in cases("approvals-file") {
        let id = case["id"].as_str().unwrap();
        let input = &case["input"];
        let parsed = parse_str(&input["file"].to_string(), Path::new(id)).unwrap();
        let policy = parsed
            .file
            .resolve_agent(agent_id(input), &HostFallback::default());
        let actual = json!({
            "allowlistPatterns": policy.allowlist.iter().map(|e| e.pattern.as_str()).collect::<Vec<_>>(),
            "agentAsk": policy.ask.value.as_str(),
        });
        check_subset(id, &actual, &case["expect"]);
    }
}

#[test]
fn effective_policy_cases_pass() {
    for case in cases("effective-policy") {
        let id = case["id"].as_str().unwrap();
        let input = &case["input"];
        let parsed = parse_str(&input["approvals"].to_string(), Path::new(id)).unwrap();
        let requested = RequestedPolicy {
            security: input["requested"]["security"]
                .as_str()
                .map_or(Security::Full, |s| s.parse().unwrap()),
            ask: input["requested"]["ask"]
                .as_str()
                .map_or(Ask::Off, |s| s.parse().unwrap()),
        };
        let policy = parsed.file.effective_policy(agent_id(input), requested);
        let actual = json!({
            "security": {
                "requested": policy.security.requested.as_str(),
                "host": policy.security.host.as_str(),
                "effective": policy.security.effective.as_str(),
            },
            "ask": {
                "requested": policy.ask.requested.as_str(),
                "host": policy.ask.host.as_str(),
                "effective": policy.ask.effective.as_str(),
            },
            "askFallback": { "effective": policy.ask_fallback.as_str() },
        });
        check_subset(id, &actual, &case["expect"]);
    }
}
