//! `exec.policy.check` and `tools.effective`: the same answers as `gatehouse check --json` and
//! `gatehouse tools --json`, from the server's config and approvals file.

use gatehouse_service::policy::report::{DecisionJson, ToolsJson};

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::exec::{CheckParams, ToolsParams};

/// `exec.policy.check`: may this command run without a person? `agent` scope.
pub(super) async fn check(call: Call, params: CheckParams) -> Result<DecisionJson, Error> {
    let service = service_of(&call)?;
    let evaluation = service
        .check(call.caller.as_ref(), params.into())
        .map_err(|error| Error::service("exec.policy.check", error))?;
    Ok(DecisionJson::from(&evaluation))
}

/// `tools.effective`: the agent's tool set and why each other tool was removed. `agent` scope.
pub(super) async fn effective(call: Call, params: ToolsParams) -> Result<ToolsJson, Error> {
    let service = service_of(&call)?;
    let effective = service
        .tools(call.caller.as_ref(), params.into())
        .map_err(|error| Error::service("tools.effective", error))?;
    Ok(ToolsJson::from(&effective))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::methods::Call;
    use crate::methods::test_support::gateway;

    /// `exec.policy.check` of `echo hi` with `extra` params: the decision, or the error code.
    async fn check(call: &Call, extra: Value) -> Result<String, (String, String)> {
        let mut params = json!({"argv": ["echo", "hi"], "cwd": "/", "agentId": "main"});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let registry = call.state.registry();
        let params = serde_json::value::to_raw_value(&params).unwrap();
        match registry
            .dispatch(call.clone(), "exec.policy.check", Some(params))
            .await
        {
            Ok(answer) => {
                let answer: Value = serde_json::from_str(answer.get()).unwrap();
                Ok(answer["decision"].as_str().unwrap().to_owned())
            }
            Err(error) => Err((error.code().to_owned(), error.to_string())),
        }
    }

    const ENABLED: &str = "tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } },
        exec: { security: 'deny' } }";

    /// `extra` plus the sender the configs above allow.
    fn asked_by_approver(mut extra: Value) -> Value {
        extra["sender"] = json!({"channel": "telegram", "id": "42"});
        extra
    }

    #[tokio::test]
    async fn applies_a_request_level_without_a_chat_runtime() {
        let (_dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        assert_eq!(check(&call, json!({})).await.unwrap(), "deny");
        assert_eq!(
            check(&call, asked_by_approver(json!({"elevated": "full"})))
                .await
                .unwrap(),
            "allow"
        );
        assert_eq!(
            check(
                &call,
                asked_by_approver(json!({"elevated": "full", "sessionKey": "s1"}))
            )
            .await
            .unwrap(),
            "allow"
        );
    }

    #[tokio::test]
    async fn applies_the_default_without_a_session_and_lets_a_request_override_it() {
        let config =
            format!("{{ {ENABLED}, agents: {{ defaults: {{ elevatedDefault: 'full' }} }} }}");
        let (_dir, call) = gateway(&config).await;
        assert_eq!(check(&call, json!({})).await.unwrap(), "allow");
        assert_eq!(
            check(&call, json!({"elevated": "off"})).await.unwrap(),
            "deny"
        );
    }

    #[tokio::test]
    async fn refuses_a_requested_level_when_elevated_is_disabled() {
        let (_dir, call) = gateway("{ tools: { exec: { security: 'full', ask: 'off' } } }").await;
        let (code, message) = check(&call, asked_by_approver(json!({"elevated": "on"})))
            .await
            .unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert_eq!(
            message,
            "`exec.policy.check` asked for elevated level `on`, \
             but elevated mode is disabled (tools.elevated.enabled)"
        );
        // `off` only narrows, so it needs no gate.
        assert_eq!(
            check(&call, json!({"elevated": "off"})).await.unwrap(),
            "deny"
        );
    }

    #[tokio::test]
    async fn names_the_agent_gate_that_refused_a_requested_level() {
        let config = "{ tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } } },
            agents: { list: [{ id: 'main', tools: { elevated: { enabled: false } } }] } }";
        let (_dir, call) = gateway(config).await;
        let (code, message) = check(&call, asked_by_approver(json!({"elevated": "full"})))
            .await
            .unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert!(
            message.contains("agents.main.tools.elevated.enabled"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn denies_a_requested_full_level_when_tool_policy_denies_exec() {
        let config = "{ tools: { elevated: { enabled: true, allowFrom: { telegram: ['42'] } },
            deny: ['exec'], exec: { security: 'full', ask: 'off' } } }";
        let (_dir, call) = gateway(config).await;
        assert_eq!(
            check(&call, asked_by_approver(json!({"elevated": "full"})))
                .await
                .unwrap(),
            "deny"
        );
    }

    #[tokio::test]
    async fn refuses_a_requested_level_without_a_sender() {
        let (_dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        let (code, message) = check(&call, json!({"elevated": "full"})).await.unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert_eq!(
            message,
            "`exec.policy.check` asked for elevated level `full`, \
             but a per-request level above `off` needs the `sender` who asked for it"
        );
    }

    #[tokio::test]
    async fn refuses_a_requested_level_from_a_sender_outside_allow_from() {
        let (dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        let stranger = json!({"elevated": "full", "sessionKey": "s1",
            "sender": {"channel": "telegram", "id": "7"}});
        let (code, message) = check(&call, stranger).await.unwrap_err();
        assert_eq!(code, "elevated_unavailable");
        assert!(
            message.contains("tools.elevated.allowFrom.telegram"),
            "{message}"
        );
        let other_channel = json!({"elevated": "full",
            "sender": {"channel": "discord", "id": "42"}});
        assert!(check(&call, other_channel).await.is_err());
        // The refusal is a security event in the audit log, with who asked; the log is written
        // by its own thread, so it is read until the record shows up.
        let log = dir.path().join("audit.jsonl");
        let mut audit = String::new();
        let mut refused = None;
        for _ in 0..100 {
            audit = std::fs::read_to_string(&log).unwrap_or_default();
            refused = audit
                .lines()
                .find(|line| line.contains("\"refused\"") && line.contains("\"7\""))
                .map(str::to_owned);
            if refused.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(refused.is_some(), "{audit}");
    }

    #[tokio::test]
    async fn refuses_an_unknown_level_listing_the_valid_ones() {
        let (_dir, call) = gateway(&format!("{{ {ENABLED} }}")).await;
        for level in [json!("max"), json!("yes"), json!(1)] {
            let (code, message) = check(&call, json!({"elevated": level})).await.unwrap_err();
            assert_eq!(code, "invalid_params", "{level}");
            if level.is_string() {
                assert!(message.contains("off, on, ask, full"), "{message}");
            }
        }
        let (_, message) = check(&call, json!({"elevated": "loud"})).await.unwrap_err();
        assert_eq!(
            message,
            "invalid params for `exec.policy.check`: unknown elevated level \"loud\" \
             (expected one of: off, on, ask, full)"
        );
    }
}
