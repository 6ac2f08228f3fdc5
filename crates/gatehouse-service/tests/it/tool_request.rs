//! `tools.call.request` through the same manager and store as exec: a refusal is never put to
//! a person, allow-always stores a grant that covers later calls until it is revoked, timeouts
//! come from config, and `tools.call.finished` is tied to the decision in the audit log.

use std::time::Duration;

use gatehouse_approvals::{ApprovalState, Severity};
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::tool_call::{GrantScope, ToolCallDecision};
use gatehouse_service::{ToolFinishedInput, ToolRequestInput, ToolRequestOutcome};
use serde_json::{Value, json};

use crate::support::{AGENT, Harness, OPERATOR, call, check, file, start};

const CONFIG: &str = "{ tools: { profile: 'full', fs: { workspaceOnly: true },
        alwaysAsk: ['write', 'mcp__github'] },
    agents: { defaults: { workspace: '{ws}' } },
    approvals: { exec: { timeout: 300 }, tools: { byTool: { mcp__github: '2m' } } } }";

fn request(tool: &str, params: Value) -> ToolRequestInput {
    ToolRequestInput {
        call: call(tool, params),
        title: Some("Claude Code on box: Write".into()),
        description: Some("Project: /ws\nSession: s1".into()),
        severity: Severity::Warning,
        allow_always: true,
        two_phase: true,
        ..ToolRequestInput::default()
    }
}

fn rules(decision: &ToolCallDecision) -> String {
    let rules: Vec<&str> = decision.reasons.iter().map(|r| r.rule.as_str()).collect();
    format!("{} {}", decision.decision, rules.join(","))
}

async fn accepted(h: &Harness, input: ToolRequestInput) -> gatehouse_approvals::Created {
    match h.service.tool_request(&AGENT, input).await.unwrap() {
        ToolRequestOutcome::Accepted { created, .. } => created,
        other => panic!("expected an approval, got {other:?}"),
    }
}

#[tokio::test]
async fn allow_always_grants_the_path_for_later_calls_until_the_grant_is_revoked() {
    let h = start(CONFIG, None).await;
    let ws = h.workspace();
    let write = || json!({"path": "notes.md", "content": "hello"});
    let asked = check(&h, "write", write()).await;
    assert_eq!(rules(&asked), "ask always-ask");
    assert_eq!(
        asked.grant.as_ref().map(|g| g.scope.clone()),
        Some(GrantScope::Paths([ws.join("notes.md")].into()))
    );

    let created = accepted(&h, request("write", write())).await;
    assert!(created.offered.allow_always);
    let id = created.id.to_string();
    h.service
        .resolve(&OPERATOR, &id[..8], ApprovalDecision::AllowAlways, None)
        .await
        .unwrap();
    let grants = h.service.grants(Some("main"));
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].id, id);
    assert_eq!(grants[0].granted_by.as_deref(), Some("alice"));

    assert_eq!(rules(&check(&h, "write", write()).await), "allow granted");
    // The grant is the path, not the tool: another file still asks.
    assert_eq!(
        rules(&check(&h, "write", json!({"path": "other.md", "content": "x"})).await),
        "ask always-ask"
    );

    let revoked = h.service.revoke_grant(&OPERATOR, &id[..8]).await.unwrap();
    assert_eq!(revoked.id, id);
    assert!(h.service.grants(None).is_empty());
    assert_eq!(rules(&check(&h, "write", write()).await), "ask always-ask");
    let audited = h
        .audited(1, |r| r["payload"]["method"] == "tools.grants.revoke")
        .await;
    assert_eq!(audited[0]["payload"]["grantId"], id.as_str());
    assert_eq!(audited[0]["payload"]["by"], "alice");
}

#[tokio::test]
async fn a_call_the_policy_refuses_is_answered_at_once_and_nobody_is_asked() {
    let h = start(CONFIG, None).await;
    file(&h.workspace(), ".env", "TOKEN=x");
    let outcome = h
        .service
        .tool_request(
            &AGENT,
            request("write", json!({"path": ".env", "content": "x"})),
        )
        .await
        .unwrap();
    let ToolRequestOutcome::Refused(decision) = outcome else {
        panic!("expected a refusal, got {outcome:?}");
    };
    assert_eq!(rules(&decision), "deny denied-file");
    assert!(h.published.events.lock().unwrap().is_empty());
}

#[tokio::test]
async fn takes_the_timeout_of_the_tool_else_the_reference_key_and_leaves_out_what_is_not_allowed() {
    let h = start(CONFIG, None).await;
    let mcp = accepted(
        &h,
        request("mcp__github__create_issue", json!({"title": "x"})),
    )
    .await;
    assert_eq!(mcp.expires_at_ms - mcp.created_at_ms, 120_000);
    let mut write = request("write", json!({"path": "a.md", "content": "x"}));
    write.allow_always = false;
    let created = accepted(&h, write).await;
    assert_eq!(created.expires_at_ms - created.created_at_ms, 300_000);
    assert!(!created.offered.allow_always);
    let mut own = request("write", json!({"path": "b.md", "content": "x"}));
    own.timeout = Some(Duration::from_secs(7));
    let created = accepted(&h, own).await;
    assert_eq!(created.expires_at_ms - created.created_at_ms, 7_000);
    let view = h
        .service
        .approval(&OPERATOR, &created.id.to_string())
        .await
        .unwrap();
    let tool = view.record.request.tool.unwrap();
    assert_eq!(tool.title.as_deref(), Some("Claude Code on box: Write"));
    assert_eq!(tool.severity, Severity::Warning);
    assert_eq!(tool.params[0], ("path".to_owned(), "b.md".to_owned()));
    assert_eq!(view.record.request.command, "write b.md");
}

#[tokio::test]
async fn a_blocking_request_waits_for_the_person_and_finished_ties_the_result_to_it() {
    let h = start(CONFIG, None).await;
    let mut input = request("write", json!({"path": "notes.md", "content": "x"}));
    input.two_phase = false;
    input.call.call_id = Some("toolu_7".into());
    let service = h.service.clone();
    let waiting = tokio::spawn(async move { service.tool_request(&AGENT, input).await });
    let id = loop {
        if let Some((_, id)) = h.published.events.lock().unwrap().first().cloned() {
            break id;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    h.service
        .resolve(
            &OPERATOR,
            &id,
            ApprovalDecision::Deny,
            Some("not now".into()),
        )
        .await
        .unwrap();
    let outcome = waiting.await.unwrap().unwrap();
    let ToolRequestOutcome::Decided { record, check } = outcome else {
        panic!("expected a decision, got {outcome:?}");
    };
    assert_eq!(record.state, ApprovalState::Denied);
    assert_eq!(rules(&check), "ask always-ask");

    let finished = h
        .service
        .tool_finished(
            &AGENT,
            ToolFinishedInput {
                call_id: "toolu_7".into(),
                ok: false,
                duration_ms: 3,
                error: Some("refused by the user".into()),
            },
        )
        .unwrap();
    assert!(finished.matched);
    assert_eq!(finished.decision, Some("deny"));
    assert_eq!(finished.approval_id.as_deref(), Some(id.as_str()));
    let records = h.audited(2, |r| r["runId"] == "toolu_7").await;
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["decision", "execution"]);
    assert_eq!(records[1]["approvalId"], id.as_str());
    assert_eq!(records[1]["payload"]["error"], "refused by the user");

    // Another token's call id, or one never checked, is recorded but matches nothing.
    let stranger = h
        .service
        .tool_finished(
            &OPERATOR,
            ToolFinishedInput {
                call_id: "toolu_7".into(),
                ok: true,
                ..ToolFinishedInput::default()
            },
        )
        .unwrap();
    assert!(!stranger.matched);
}
