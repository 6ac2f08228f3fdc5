//! Data-driven: the requirement-rule kinds of `tests/conformance/decision-cases.jsonl`.
//!
//! Kinds `approvals-file`, `effective-policy` and `safe-bin-config` describe config and
//! approvals-file composition; they run in `gatehouse-config`'s tests (branch
//! `config-compose`) and are skipped here.

use gatehouse_policy::exec::node_command_text;
use gatehouse_policy::requirement::{
    ApprovalFacts, ApprovalOutcome, durable_approval_satisfied, node_run_policy,
    normalize_approval_decision, requires_approval, resolve_approval,
};
use gatehouse_policy::{ApprovalDecision, Ask, Security};
use serde_json::{Value, json};

const CASES: &str = include_str!("../../../../tests/conformance/decision-cases.jsonl");

const OTHER_CRATES: &[&str] = &["approvals-file", "effective-policy", "safe-bin-config"];

#[test]
fn every_requirement_case_passes() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let kind = case["kind"].as_str().unwrap();
        if OTHER_CRATES.contains(&kind) {
            continue;
        }
        checked += 1;
        let actual = run(kind, &case["input"]);
        for (key, wanted) in case["expect"].as_object().unwrap() {
            if actual.get(key) != Some(wanted) {
                failures.push(format!(
                    "{}: {key}: expected {wanted}, got {}",
                    case["id"],
                    actual.get(key).unwrap_or(&Value::Null)
                ));
            }
        }
    }
    assert!(checked >= 20, "only {checked} requirement cases found");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn security(value: &Value) -> Security {
    value.as_str().unwrap().parse().unwrap()
}

fn ask(value: &Value) -> Ask {
    value.as_str().unwrap().parse().unwrap()
}

fn facts(input: &Value) -> ApprovalFacts {
    ApprovalFacts {
        security: security(&input["security"]),
        ask: ask(&input["ask"]),
        analysis_ok: input["analysisOk"].as_bool().unwrap(),
        allowlist_satisfied: input["allowlistSatisfied"].as_bool().unwrap(),
        durable_approval_satisfied: input["durableApprovalSatisfied"].as_bool().unwrap_or(false),
    }
}

/// Runs one case and renders the result in the fixture's vocabulary.
fn run(kind: &str, input: &Value) -> Value {
    match kind {
        "min-security" => {
            json!({"result": security(&input["a"]).min_security(security(&input["b"])).as_str()})
        }
        "max-ask" => json!({"result": ask(&input["a"]).max_ask(ask(&input["b"])).as_str()}),
        "requires-approval" => json!({"requiresApproval": requires_approval(facts(input))}),
        "ask-fallback" => {
            let outcome = match input["decision"].as_str().unwrap() {
                "timeout" => ApprovalOutcome::TimedOut,
                other => ApprovalOutcome::Decided(other.parse::<ApprovalDecision>().unwrap()),
            };
            let result = resolve_approval(
                outcome,
                security(&input["askFallback"]),
                security(&input["hostSecurity"]),
                input["analysisOk"].as_bool().unwrap(),
                input["allowlistSatisfied"].as_bool().unwrap(),
            );
            json!({"approved": result.approved, "deniedReason": result.denied_reason.map(|r| r.as_str())})
        }
        "node-run-policy" => {
            let approval = input["approvalDecision"]
                .as_str()
                .and_then(normalize_approval_decision);
            let verdict = node_run_policy(facts(input), approval);
            json!({
                "allowed": verdict.allowed,
                "reason": verdict.reason.map(|r| r.as_str()),
                "requiresAsk": verdict.requires_ask,
                "approvedByAsk": verdict.approved_by_ask,
            })
        }
        "approval-decision" => {
            let decisions: Vec<Value> = input["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| match v.as_str().and_then(normalize_approval_decision) {
                    Some(decision) => json!(decision.as_str()),
                    None => Value::Null,
                })
                .collect();
            json!({"decisions": decisions})
        }
        "exact-command-approval" => {
            let allowlist: Vec<String> = input["allowlist"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|e| {
                    e.as_str()
                        .or_else(|| e["pattern"].as_str())
                        .map(str::to_owned)
                })
                .collect();
            let text = input["commandText"].as_str().unwrap();
            json!({"durable": durable_approval_satisfied(text, allowlist.iter().map(String::as_str))})
        }
        "node-command-text" => {
            let argv: Vec<String> = input["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect();
            let text = node_command_text(&argv, input["rawCommand"].as_str());
            json!({"valid": text.valid, "displayCommand": text.display_command})
        }
        other => json!({"error": format!("unknown kind {other}")}),
    }
}
