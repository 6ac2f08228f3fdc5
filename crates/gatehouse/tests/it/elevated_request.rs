//! The per-request `elevated` param of `system.run`, `exec.policy.check` and
//! `exec.approval.request`, against the real binary with no chat channel configured: precedence
//! over the session level and `elevatedDefault`, refusal when the gates are closed or the
//! `sender` who asked is missing or not in `allowFrom`, and the tool-policy deny that no level
//! overrides.

use serde_json::{Value, json};

use crate::gateway::{AGENT, APPROVER, Server, audit_matching};

/// Elevated enabled for the `telegram` sender 4242 (no Telegram channel is configured: the
/// session level is set through `elevated.directive`), exec otherwise denied.
const GATES_OPEN: &str = "tools: { elevated: { enabled: true, allowFrom: { telegram: ['4242'] } },
    exec: { security: 'deny' } },";

/// `system.run` of `echo <word>` in session `session`, with `extra` params.
fn params(server: &Server, word: &str, session: &str, extra: Value) -> Value {
    let mut params = json!({"argv": ["echo", word], "cwd": server.scratch(), "agentId": "main",
                            "sessionKey": session});
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    params
}

/// The answer of a `system.run` that [`params`] describes.
async fn system_run(server: &Server, word: &str, session: &str, extra: Value) -> Value {
    server
        .ok(AGENT, "system.run", params(server, word, session, extra))
        .await
}

/// Stores `level` for `session` the way an agent host that owns the chat does.
async fn set_session_level(server: &Server, session: &str, level: &str) {
    let directive = json!({"text": format!("/elevated {level}"), "sessionKey": session,
                           "sender": {"channel": "telegram", "id": "4242"}});
    let reply = server.ok(AGENT, "elevated.directive", directive).await;
    let text = reply["reply"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("Elevated mode is now {level}")),
        "{reply}"
    );
}

/// `{"elevated": level}` asked for by the allowed sender 4242.
fn asked(level: &str) -> Value {
    json!({"elevated": level, "sender": {"channel": "telegram", "id": "4242"}})
}

/// `(status, stdout)` of a `system.run` answer.
fn outcome(answer: &Value) -> (Value, Value) {
    (answer["status"].clone(), answer["stdout"].clone())
}

#[tokio::test]
async fn runs_on_the_host_when_the_request_asks_full_over_session_off_and_the_default() {
    let server = Server::start(&format!(
        "{GATES_OPEN} agents: {{ defaults: {{ elevatedDefault: 'off' }} }},"
    ))
    .await;
    set_session_level(&server, "s1", "off").await;
    let refused = system_run(&server, "no", "s1", json!({})).await;
    assert_eq!(refused["status"], "denied", "{refused}");
    let full = asked("full");
    let over_session = system_run(&server, "one", "s1", full.clone()).await;
    assert_eq!(outcome(&over_session), (json!("finished"), json!("one\n")));
    // Session s2 has no level: the request beats `elevatedDefault: off`.
    let over_default = system_run(&server, "two", "s2", full).await;
    assert_eq!(outcome(&over_default), (json!("finished"), json!("two\n")));

    let records = audit_matching(
        &server,
        |record| record["payload"]["method"] == "system.run",
        |records| records.len() == 3,
    )
    .await;
    let levels: Vec<_> = records
        .iter()
        .map(|record| record["payload"]["elevated"].clone())
        .collect();
    assert_eq!(
        levels,
        [
            json!({"level": "off", "source": "session"}),
            json!({"level": "full", "source": "request"}),
            json!({"level": "full", "source": "request"}),
        ]
    );
}

#[tokio::test]
async fn refuses_host_exec_when_the_request_asks_off_over_session_full() {
    let server = Server::start(GATES_OPEN).await;
    set_session_level(&server, "s1", "full").await;
    let allowed = system_run(&server, "yes", "s1", json!({})).await;
    assert_eq!(outcome(&allowed), (json!("finished"), json!("yes\n")));
    let off = json!({"elevated": "off"});
    let refused = system_run(&server, "no", "s1", off.clone()).await;
    assert_eq!(
        (refused["status"].clone(), refused["reason"].clone()),
        (json!("denied"), json!("policy")),
        "{refused}"
    );
    let mut check = params(&server, "no", "s1", off.clone());
    check.as_object_mut().unwrap().remove("sessionKey");
    let checked = server.ok(AGENT, "exec.policy.check", check).await;
    assert_eq!(checked["decision"], "deny", "{checked}");

    // `exec.approval.request` shows approvers the security the level leaves.
    let mut security = Vec::new();
    for extra in [json!({}), off] {
        let mut request = params(&server, "x", "s1", extra);
        request["command"] = json!("echo x");
        request["twoPhase"] = json!(true);
        let accepted = server.ok(AGENT, "exec.approval.request", request).await;
        let id = json!({"id": accepted["id"]});
        let approval = server.ok(AGENT, "exec.approval.get", id).await;
        security.push(approval["request"]["security"].clone());
    }
    assert_eq!(security, [json!("full"), json!("deny")]);
}

#[tokio::test]
async fn refuses_a_requested_level_when_elevated_is_disabled() {
    let server = Server::start(
        "tools: { elevated: { enabled: false }, exec: { security: 'allowlist', ask: 'always' } },",
    )
    .await;
    let full = asked("full");
    let answer = server
        .rpc(
            AGENT,
            "system.run",
            params(&server, "no", "s1", full.clone()),
        )
        .await;
    assert_eq!(answer["error"]["code"], "elevated_unavailable", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`system.run` asked for elevated level `full`")
            && message.contains("tools.elevated.enabled"),
        "{message}"
    );
    let mut request = params(&server, "no", "s1", full);
    request["command"] = json!("echo no");
    request["twoPhase"] = json!(true);
    assert_eq!(
        server
            .error_code(AGENT, "exec.approval.request", request)
            .await,
        "elevated_unavailable"
    );
    // Nothing was asked: no approval was created for the refused requests.
    let pending = server
        .ok(APPROVER, "exec.approval.list", json!({"state": "pending"}))
        .await;
    assert_eq!(pending["approvals"], json!([]), "{pending}");
}

#[tokio::test]
async fn denies_a_requested_full_level_when_tool_policy_denies_exec() {
    let server = Server::start(
        "tools: { deny: ['exec'], elevated: { enabled: true, allowFrom: { telegram: ['4242'] } },
            exec: { security: 'deny' } },",
    )
    .await;
    let answer = system_run(&server, "no", "s1", asked("full")).await;
    assert_eq!(
        (answer["status"].clone(), answer["reason"].clone()),
        (json!("denied"), json!("policy")),
        "{answer}"
    );
}

#[tokio::test]
async fn refuses_an_unknown_level_as_invalid_params() {
    let server = Server::start(GATES_OPEN).await;
    for method in ["system.run", "exec.policy.check", "exec.approval.request"] {
        let mut params = params(&server, "no", "s1", json!({"elevated": "max"}));
        params["command"] = json!("echo no");
        params.as_object_mut().unwrap().remove("argv");
        let answer = server.rpc(AGENT, method, params).await;
        assert_eq!(answer["error"]["code"], "invalid_params", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("off, on, ask, full"), "{message}");
    }
}

#[tokio::test]
async fn refuses_a_requested_level_without_an_allowed_sender() {
    let server = Server::start(GATES_OPEN).await;
    let nobody = server
        .rpc(
            AGENT,
            "system.run",
            params(&server, "no", "s1", json!({"elevated": "full"})),
        )
        .await;
    assert_eq!(nobody["error"]["code"], "elevated_unavailable", "{nobody}");
    let message = nobody["error"]["message"].as_str().unwrap();
    assert!(message.contains("needs the `sender`"), "{message}");

    let stranger = json!({"elevated": "full", "sender": {"channel": "telegram", "id": "7"}});
    let refused = server
        .rpc(AGENT, "system.run", params(&server, "no", "s1", stranger))
        .await;
    assert_eq!(
        refused["error"]["code"], "elevated_unavailable",
        "{refused}"
    );
    // Nothing ran and the refusal is in the audit log with who asked.
    let records = audit_matching(
        &server,
        |record| record["payload"]["outcome"] == "refused",
        |records| !records.is_empty(),
    )
    .await;
    assert_eq!(records[0]["payload"]["senderId"], "7", "{records:?}");
    assert_eq!(records[0]["payload"]["method"], "system.run", "{records:?}");
}

#[tokio::test]
async fn ignores_a_session_level_whose_setter_the_agent_gates_do_not_allow() {
    let server = Server::start(
        "tools: { elevated: { enabled: true, allowFrom: { telegram: ['4242', '5555'] } },
            exec: { security: 'deny' } },
        agents: { list: [{ id: 'main',
            tools: { elevated: { allowFrom: { telegram: ['4242'] } } } }] },",
    )
    .await;
    // 5555 passes the global list, so the level is stored, but agent `main` narrows it to 4242.
    let directive = json!({"text": "/elevated full", "sessionKey": "s1",
                           "sender": {"channel": "telegram", "id": "5555"}});
    server.ok(AGENT, "elevated.directive", directive).await;
    let narrowed = system_run(&server, "no", "s1", json!({})).await;
    assert_eq!(narrowed["status"], "denied", "{narrowed}");

    set_session_level(&server, "s2", "full").await;
    let granted = system_run(&server, "yes", "s2", json!({})).await;
    assert_eq!(outcome(&granted), (json!("finished"), json!("yes\n")));
}
