//! `tools.call.*` and `tools.grants.*`: the tool-call gate for agent hosts, and the grants its
//! allow-always answers made, for operators. The service judges, asks and records; these
//! handlers read params and convert answers.

use gatehouse_approvals::ApprovalState;
use gatehouse_service::ToolRequestOutcome;
use gatehouse_service::policy::report::ToolDecisionJson;

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::exec::{Accepted, DecisionResult};
use crate::wire::tools::{
    AcceptedResult, CheckParams, FinishedParams, FinishedResult, GrantRecordJson, GrantsResult,
    ListGrantsParams, RequestAnswer, RequestParams, RequestResult, RevokeParams, RevokeResult,
};

/// `tools.call.check`: `allow`, `ask` or `deny` for one tool call, with the files to open and
/// the addresses to pin. `agent` scope.
pub(super) async fn check(call: Call, params: CheckParams) -> Result<ToolDecisionJson, Error> {
    let service = service_of(&call)?;
    let input: gatehouse_service::ToolCallInput = params.into();
    let call_id = input.call_id.clone();
    let decision = service
        .tool_check(call.caller.as_ref(), input)
        .await
        .map_err(|error| Error::service("tools.call.check", error))?;
    Ok(ToolDecisionJson::new(&decision, call_id.as_deref()))
}

/// `tools.call.request`: asks a person about a call the policy does not refuse; answers once
/// decided, or at once with `twoPhase`. `agent` scope.
pub(super) async fn request(call: Call, params: RequestParams) -> Result<RequestAnswer, Error> {
    const METHOD: &str = "tools.call.request";
    let service = service_of(&call)?;
    let input = params.into_input().map_err(|reason| Error::InvalidParams {
        method: METHOD.to_owned(),
        reason,
    })?;
    let call_id = input.call.call_id.clone();
    let outcome = service
        .tool_request(call.caller.as_ref(), input)
        .await
        .map_err(|error| Error::service(METHOD, error))?;
    Ok(match outcome {
        ToolRequestOutcome::Refused(check) => RequestAnswer::Decided(Box::new(RequestResult {
            decision: "deny",
            approval: None,
            grant: None,
            check: ToolDecisionJson::new(&check, call_id.as_deref()),
        })),
        ToolRequestOutcome::Accepted { created, check } => {
            RequestAnswer::Accepted(Box::new(AcceptedResult {
                accepted: Accepted {
                    status: "accepted",
                    id: created.id.to_string(),
                    created_at_ms: created.created_at_ms,
                    expires_at_ms: created.expires_at_ms,
                },
                check: ToolDecisionJson::new(&check, call_id.as_deref()),
            }))
        }
        ToolRequestOutcome::Decided { record, check } => {
            let allowed = record.state == ApprovalState::Allowed;
            let grant = service
                .grants(record.request.agent_id.as_deref())
                .iter()
                .find(|grant| grant.id == record.id)
                .map(GrantRecordJson::from);
            RequestAnswer::Decided(Box::new(RequestResult {
                decision: if allowed { "allow" } else { "deny" },
                approval: Some(DecisionResult::from_record(&record)),
                grant,
                check: ToolDecisionJson::new(&check, call_id.as_deref()),
            }))
        }
    })
}

/// `tools.call.finished`: records what became of a call, tied to its decision. `agent` scope.
pub(super) async fn finished(call: Call, params: FinishedParams) -> Result<FinishedResult, Error> {
    let service = service_of(&call)?;
    let finished = service
        .tool_finished(call.caller.as_ref(), params.into())
        .map_err(|error| Error::service("tools.call.finished", error))?;
    Ok(finished.into())
}

/// `tools.grants.list`: the allow-always grants, oldest first. `operator.approvals` scope.
pub(super) async fn list_grants(
    call: Call,
    params: ListGrantsParams,
) -> Result<GrantsResult, Error> {
    let service = service_of(&call)?;
    let grants = service.grants(params.agent_id.as_deref());
    Ok(GrantsResult {
        grants: grants.iter().map(GrantRecordJson::from).collect(),
    })
}

/// `tools.grants.revoke`: deletes a grant by id or unique prefix. `operator.approvals` scope.
pub(super) async fn revoke_grant(call: Call, params: RevokeParams) -> Result<RevokeResult, Error> {
    let service = service_of(&call)?;
    let revoked = service
        .revoke_grant(call.caller.as_ref(), &params.id)
        .await
        .map_err(|error| Error::service("tools.grants.revoke", error))?;
    Ok(RevokeResult {
        revoked: GrantRecordJson::from(&revoked),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use gatehouse_hooks::{CardRoute, Host, IntegrationSettings, translate};
    use serde_json::{Value, json};

    use crate::methods::test_support::{dispatch, gateway};

    /// Every hook input the agent-host adapter was built against, translated as it will be.
    fn hook_calls() -> Vec<(String, gatehouse_hooks::HookToolCall)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gatehouse-hooks/tests/fixtures");
        let settings = IntegrationSettings {
            route: Some(CardRoute::new("telegram", "-100123").unwrap()),
            ..IntegrationSettings::default()
        };
        let mut calls = Vec::new();
        for (dir, host) in [("claude-code", Host::ClaudeCode), ("codex", Host::Codex)] {
            let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|entry| entry.unwrap().file_name().into_string().unwrap())
                .filter(|name| {
                    (name.starts_with("pretooluse-") || name.starts_with("permissionrequest-"))
                        && name.ends_with(".json")
                })
                .collect();
            names.sort();
            for name in names {
                let bytes = std::fs::read(root.join(dir).join(&name)).unwrap();
                if let Ok(translated) = translate(host, &bytes, &settings, "box") {
                    calls.push((format!("{dir}/{name}"), translated.call));
                }
            }
        }
        assert!(calls.len() >= 15, "{} hook inputs translated", calls.len());
        calls
    }

    /// Contract with `gatehouse-hooks`: every call it sends decodes, and no parameter of it is
    /// refused as unknown or malformed.
    #[tokio::test]
    async fn accepts_exactly_the_params_the_agent_host_adapter_sends() {
        let (dir, call) = gateway(
            "{ tools: { profile: 'full' }, agents: { defaults: { workspace: '/' } },
               gateway: { dns: { nameservers: ['127.0.0.1:9'], timeoutMs: 200 } } }",
        )
        .await;
        for (name, hook) in hook_calls() {
            let answer = dispatch(&call, "tools.call.check", &hook.check_params())
                .await
                .unwrap_or_else(|error| panic!("{name}: {error:?}"));
            let rules: Vec<&Value> = answer["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .map(|reason| &reason["rule"])
                .collect();
            assert!(
                !rules.contains(&&json!("invalid-params")),
                "{name}: {answer}"
            );
            assert_eq!(answer["callId"], json!(hook.call_id), "{name}");
            let request: super::RequestParams =
                serde_json::from_value(hook.request_params(280_000))
                    .unwrap_or_else(|error| panic!("{name}: {error}"));
            let input = request.into_input().unwrap();
            assert_eq!(
                input.timeout,
                Some(std::time::Duration::from_millis(280_000))
            );
            assert_eq!(
                input.turn_source.and_then(|t| t.to).as_deref(),
                Some("-100123"),
                "{name}"
            );
        }
        drop(dir);
    }

    #[tokio::test]
    async fn refuses_unknown_fields_severities_and_decision_sets_by_name() {
        let (_dir, call) = gateway("{}").await;
        let base = json!({"agentId": "main", "sessionKey": "s", "tool": "read",
                          "params": {"path": "/etc/hostname"}});
        let with = |key: &str, value: Value| {
            let mut params = base.clone();
            params[key] = value;
            params
        };
        let (code, _) = dispatch(&call, "tools.call.check", &with("sandboxed", json!(true)))
            .await
            .unwrap_err();
        assert_eq!(code, "invalid_params");
        let (code, message) = dispatch(
            &call,
            "tools.call.request",
            &with("severity", json!("loud")),
        )
        .await
        .unwrap_err();
        assert_eq!(code, "invalid_params");
        assert!(message.contains("info, warning, critical"), "{message}");
        let (_, message) = dispatch(
            &call,
            "tools.call.request",
            &with("allowedDecisions", json!(["allow-always", "deny"])),
        )
        .await
        .unwrap_err();
        assert!(message.contains("allow-once and deny"), "{message}");
    }
}
