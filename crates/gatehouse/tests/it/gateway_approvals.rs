//! `exec.approval.*`, `exec.approvals.*`, `exec.policy.check` and `tools.effective` against the
//! real binary, over HTTP and WebSocket.

use serde_json::{Value, json};

use crate::gateway::{
    ADMIN, AGENT, APPROVER, OTHER_AGENT, Server, audit_records, config_with_gateway,
    settled_long_ago,
};

fn ask_params(server: &Server, extra: Value) -> Value {
    let mut params = json!({
        "command": "make deploy",
        "argv": ["make", "deploy"],
        "cwd": server.scratch(),
        "agentId": "main",
        "sessionKey": "s1",
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    params
}

/// A pending approval created by `AGENT` with `twoPhase`; its id.
async fn two_phase(server: &Server) -> String {
    let accepted = request_two_phase(server).await;
    assert_eq!(accepted["status"], "accepted");
    accepted["id"].as_str().unwrap().to_owned()
}

/// Asks for an approval with `twoPhase`: the acknowledgement, before any decision.
async fn request_two_phase(server: &Server) -> Value {
    server
        .ok(
            AGENT,
            "exec.approval.request",
            ask_params(server, json!({"twoPhase": true})),
        )
        .await
}

/// Another agent's `get` and `waitDecision` on `id` read as if it did not exist.
async fn assert_hidden_from_other_agents(server: &Server, id: &str) {
    for method in ["exec.approval.get", "exec.approval.waitDecision"] {
        assert_eq!(
            server
                .error_code(OTHER_AGENT, method, json!({"id": id}))
                .await,
            "not_found",
            "{method}"
        );
    }
}

/// Waits until the audit log holds a decision on `id` carrying `reason`.
async fn audited_decision_with_reason(server: &Server, id: &str, reason: &str) {
    audit_records(server, id, |records| {
        records
            .iter()
            .any(|record| record["kind"] == "decision" && record["payload"]["reason"] == reason)
    })
    .await;
}

#[tokio::test]
async fn answers_policy_check_and_tools_exactly_like_the_cli() {
    let server = Server::start("").await;
    let cwd = server.scratch();
    let remote = server
        .ok(
            AGENT,
            "exec.policy.check",
            json!({"command": "ls | wc -l", "cwd": cwd, "agentId": "main"}),
        )
        .await;
    let config = server.dir.path().join("gatehouse.json5");
    let approvals = server.data().join("exec-approvals.json");
    let local = crate::gatehouse(
        &[
            "check",
            "--json",
            "--config",
            config.to_str().unwrap(),
            "--approvals",
            approvals.to_str().unwrap(),
            "--cwd",
            cwd.to_str().unwrap(),
            "ls | wc -l",
        ],
        "",
    );
    let local: Value = serde_json::from_str(&local.stdout).unwrap();
    assert_eq!(remote, local);
    let remote = server
        .ok(AGENT, "tools.effective", json!({"agentId": "main"}))
        .await;
    let local = crate::gatehouse(
        &["tools", "--json", "--config", config.to_str().unwrap()],
        "",
    );
    assert_eq!(
        remote,
        serde_json::from_str::<Value>(&local.stdout).unwrap()
    );
}

#[tokio::test]
async fn expires_at_once_with_no_approval_route_and_applies_ask_fallback() {
    let server = Server::start("").await;
    let answer = server
        .ok(
            AGENT,
            "exec.approval.request",
            ask_params(&server, json!({})),
        )
        .await;
    assert_eq!(answer["state"], "expired");
    assert_eq!(answer["reason"], "no-approval-route");
    assert_eq!(answer["decision"], Value::Null);
    assert_eq!(
        answer["fallback"],
        json!({"askFallback": "deny", "approved": false, "deniedReason": "approval-timeout"})
    );
    let id = answer["id"].as_str().unwrap();
    let waited = server
        .ok(AGENT, "exec.approval.waitDecision", json!({"id": id}))
        .await;
    assert_eq!(waited["state"], "expired");
}

/// Operator-CLI review: the answer named the configured `askFallback: full` while the gateway
/// applied it clamped to `allowlist`, so `gatehouse request` printed "askFallback full denied it".
#[tokio::test]
async fn names_the_fallback_that_applied_clamped_to_the_security() {
    let server = Server::start(
        "tools: { exec: { security: 'allowlist', ask: 'always', askFallback: 'full' } },",
    )
    .await;
    let answer = server
        .ok(
            AGENT,
            "exec.approval.request",
            ask_params(&server, json!({})),
        )
        .await;
    assert_eq!(answer["state"], "expired", "{answer}");
    assert_eq!(answer["fallback"]["askFallback"], "allowlist", "{answer}");
    assert_eq!(answer["fallback"]["approved"], false, "{answer}");
}

#[tokio::test]
async fn runs_the_two_phase_flow_with_prefix_resolve_and_wait_after_resolve() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let accepted = request_two_phase(&server).await;
    assert_eq!(accepted["status"], "accepted");
    let id = accepted["id"].as_str().unwrap().to_owned();
    assert!(accepted["expiresAtMs"].as_u64() > accepted["createdAtMs"].as_u64());
    let requested = operator.event("exec.approval.requested").await;
    assert_eq!(requested["payload"]["id"], id.as_str());
    assert_eq!(requested["payload"]["request"]["command"], "make deploy");
    assert_eq!(requested["payload"]["request"]["agentId"], "main");
    let resolved = operator
        .call(
            "exec.approval.resolve",
            json!({"id": &id[..8], "decision": "allow-once"}),
        )
        .await;
    assert_eq!(resolved["payload"]["applied"], true, "{resolved}");
    assert_eq!(resolved["payload"]["id"], id.as_str());
    let event = operator.event("exec.approval.resolved").await;
    assert_eq!(
        event["payload"],
        json!({"id": id, "decision": "allow-once", "resolvedBy": "approver", "reason": null})
    );
    assert!(event["seq"].as_u64().unwrap() > requested["seq"].as_u64().unwrap());
    let waited = server
        .ok(AGENT, "exec.approval.waitDecision", json!({"id": id}))
        .await;
    assert_eq!(waited["decision"], "allow-once");
    assert_eq!(waited["resolvedBy"], "approver");
    let got = server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await;
    assert_eq!(got["state"], "allowed");
    assert_eq!(got["allowedDecisions"], json!([]));
    let listed = server
        .ok(APPROVER, "exec.approval.list", json!({"state": "allowed"}))
        .await;
    assert_eq!(listed["approvals"][0]["id"], id.as_str());
    assert_database_batches_reported(&server).await;
}

/// `GET /metrics` reports the approvals database's batches once an approval was stored and
/// decided: two writes at least, in at least one batch, every batch under `+Inf`.
async fn assert_database_batches_reported(server: &Server) {
    let text = server.get_text("/metrics").await;
    let value = |name: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(&format!("{name} ")));
        let value = line.and_then(|l| l.rsplit(' ').next());
        value
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
    };
    let batches = value("gatehouse_approvals_db_batch_seconds_count");
    assert!(batches >= 1, "{text}");
    assert!(value("gatehouse_approvals_db_writes_total") >= 2, "{text}");
    assert_eq!(
        value("gatehouse_approvals_db_batch_seconds_bucket{le=\"+Inf\"}"),
        batches
    );
}

#[tokio::test]
async fn stores_and_announces_the_reason_given_with_a_decision() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let id = two_phase(&server).await;
    let too_long = "x".repeat(1_001);
    assert_eq!(
        server
            .error_code(
                APPROVER,
                "exec.approval.resolve",
                json!({"id": id, "decision": "deny", "reason": too_long}),
            )
            .await,
        "invalid_params"
    );
    server
        .ok(
            APPROVER,
            "exec.approval.resolve",
            json!({"id": id, "decision": "deny", "reason": "not during the freeze"}),
        )
        .await;
    let resolved = operator.event("exec.approval.resolved").await;
    assert_eq!(resolved["payload"]["reason"], "not during the freeze");
    let got = server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await;
    assert_eq!(
        (&got["state"], &got["reason"]),
        (&json!("denied"), &json!("not during the freeze"))
    );
    audited_decision_with_reason(&server, &id, "not during the freeze").await;
}

#[tokio::test]
async fn an_id_that_is_not_one_is_a_bad_param_for_every_method() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    let request = ask_params(&server, json!({"id": "not-a-uuid", "twoPhase": true}));
    let calls = [
        (AGENT, "exec.approval.request", request),
        (AGENT, "exec.approval.get", json!({"id": "not-a-uuid"})),
        (AGENT, "exec.approval.waitDecision", json!({"id": "zz"})),
        (APPROVER, "exec.approval.get", json!({"id": "zz!"})),
        (
            APPROVER,
            "exec.approval.resolve",
            json!({"id": "zz!", "decision": "deny"}),
        ),
    ];
    for (token, method, params) in calls {
        assert_eq!(
            server.error_code(token, method, params.clone()).await,
            "invalid_params",
            "{method} {params}"
        );
    }
}

#[tokio::test]
async fn lists_the_earliest_or_the_latest_approvals() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    let mut created = Vec::new();
    for _ in 0..3 {
        created.push(two_phase(&server).await);
        // Distinct creation times, so the order is the creation order whatever the ids.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let ids = |listed: Value| -> Vec<String> {
        listed["approvals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|approval| approval["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let oldest = server
        .ok(APPROVER, "exec.approval.list", json!({"limit": 2}))
        .await;
    assert_eq!(ids(oldest), created[..2]);
    let newest = server
        .ok(
            APPROVER,
            "exec.approval.list",
            json!({"limit": 2, "order": "newest-first"}),
        )
        .await;
    assert_eq!(ids(newest), [created[2].clone(), created[1].clone()]);
    assert_eq!(
        server
            .error_code(APPROVER, "exec.approval.list", json!({"order": "random"}))
            .await,
        "invalid_params"
    );
}

/// Security review: approvers saw `command: "ls -la"` while `argv` (what is judged, run and
/// persisted by allow-always) was `rm -rf …`.
#[tokio::test]
async fn refuses_a_command_text_that_does_not_describe_the_argv() {
    let server = Server::start("").await;
    let forged = json!({"command": "ls -la", "argv": ["rm", "-rf", "/tmp/x"], "twoPhase": true});
    assert_eq!(
        server
            .error_code(AGENT, "exec.approval.request", ask_params(&server, forged))
            .await,
        "invalid_params"
    );
    let quoted = json!({"command": "echo \"a b\"", "argv": ["echo", "a b"], "twoPhase": true});
    let accepted = server
        .ok(AGENT, "exec.approval.request", ask_params(&server, quoted))
        .await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
}

/// Issue 29: a text naming only the payload of a shell the analysis treats as opaque (a login
/// shell, a shell by path) hid its profile scripts from approvers; OpenClaw's rule accepts it.
#[tokio::test]
async fn refuses_a_command_text_that_names_only_an_opaque_shells_payload() {
    let server = Server::start("").await;
    for argv in [
        json!(["bash", "-lc", "ls"]),
        json!(["/bin/sh", "-c", "ls"]),
        json!(["zsh", "-c", "ls"]),
    ] {
        let hidden = json!({"command": "ls", "argv": argv, "twoPhase": true});
        let answer = server
            .rpc(AGENT, "exec.approval.request", ask_params(&server, hidden))
            .await;
        assert_eq!(
            answer["error"]["code"], "invalid_params",
            "{argv}: {answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("approvers must see what runs"),
            "{message}"
        );
    }
    // The payload of a plain `sh -c` is what runs, and still accepted as its text.
    let plain = json!({"command": "ls", "argv": ["sh", "-c", "ls"], "twoPhase": true});
    let accepted = server
        .ok(AGENT, "exec.approval.request", ask_params(&server, plain))
        .await;
    assert_eq!(accepted["status"], "accepted", "{accepted}");
}

#[tokio::test]
async fn lists_pending_approvals_with_the_decisions_their_event_offered() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    // An allowlist miss on a resolvable program: an allowlist entry would help.
    let extra = json!({"command": "ls -la", "argv": ["ls", "-la"], "twoPhase": true});
    server
        .ok(AGENT, "exec.approval.request", ask_params(&server, extra))
        .await;
    let requested = operator.event("exec.approval.requested").await;
    assert_eq!(
        requested["payload"]["allowedDecisions"],
        json!(["allow-once", "allow-always", "deny"])
    );
    let listed = server
        .ok(APPROVER, "exec.approval.list", json!({"state": "pending"}))
        .await;
    assert_eq!(
        listed["approvals"][0]["allowedDecisions"],
        requested["payload"]["allowedDecisions"]
    );
    let got = server
        .ok(
            APPROVER,
            "exec.approval.get",
            json!({"id": requested["payload"]["id"]}),
        )
        .await;
    assert_eq!(
        got["allowedDecisions"],
        requested["payload"]["allowedDecisions"]
    );
}

#[tokio::test]
async fn answers_a_blocking_request_over_websocket_when_a_person_denies() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let pending = agent
        .send("exec.approval.request", ask_params(&server, json!({})))
        .await;
    let requested = operator.event("exec.approval.requested").await;
    let id = requested["payload"]["id"].as_str().unwrap();
    operator
        .call(
            "exec.approval.resolve",
            json!({"id": id, "decision": "deny"}),
        )
        .await;
    let answer = agent.response(&pending).await;
    assert_eq!(answer["payload"]["state"], "denied");
    assert_eq!(answer["payload"]["decision"], "deny");
    assert!(answer["payload"].get("fallback").is_none());
}

#[tokio::test]
async fn cancels_a_blocking_request_whose_requester_went_away() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    agent
        .send("exec.approval.request", ask_params(&server, json!({})))
        .await;
    let requested = operator.event("exec.approval.requested").await;
    drop(agent);
    let cancelled = operator.event("exec.approval.cancelled").await;
    assert_eq!(
        cancelled["payload"],
        json!({"id": requested["payload"]["id"], "reason": "requester-gone"})
    );
}

/// A requester that leaves at once often leaves while its approval is still being created;
/// that approval must be cancelled too, not left pending for a person to answer.
#[tokio::test]
async fn leaves_nothing_pending_when_requesters_leave_at_once() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    for _ in 0..30 {
        let mut agent = server.ws(AGENT).await;
        agent
            .send("exec.approval.request", ask_params(&server, json!({})))
            .await;
        drop(agent);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let pending = server
            .ok(APPROVER, "exec.approval.list", json!({"state": "pending"}))
            .await;
        if pending["approvals"] == json!([]) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still pending: {pending}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let cancelled = server
        .ok(
            APPROVER,
            "exec.approval.list",
            json!({"state": "cancelled"}),
        )
        .await;
    let reasons: Vec<&Value> = cancelled["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|approval| &approval["reason"])
        .collect();
    assert!(
        reasons.iter().all(|reason| *reason == "requester-gone"),
        "{reasons:?}"
    );
}

#[tokio::test]
async fn waits_on_an_approval_that_expires_and_announces_the_expiry() {
    let server = Server::start("").await;
    let mut operator = server.ws(ADMIN).await;
    let accepted = server
        .ok(
            AGENT,
            "exec.approval.request",
            ask_params(&server, json!({"twoPhase": true, "timeoutMs": 300})),
        )
        .await;
    let id = accepted["id"].as_str().unwrap();
    let waited = server
        .ok(AGENT, "exec.approval.waitDecision", json!({"id": id}))
        .await;
    assert_eq!(
        (waited["state"].clone(), waited["reason"].clone()),
        (json!("expired"), json!("timeout"))
    );
    let expired = operator.event("exec.approval.expired").await;
    assert_eq!(expired["payload"], json!({"id": id, "reason": "timeout"}));
    let late = server.resolve(id, "allow-once").await;
    assert_eq!(late["error"]["code"], "approval_expired", "{late}");
}

#[tokio::test]
async fn lets_exactly_one_of_many_concurrent_resolvers_win() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    let id = two_phase(&server).await;
    let answers = futures_util::future::join_all((0..12).map(|i| {
        let decision = if i % 2 == 0 { "allow-once" } else { "deny" };
        let id = id.clone();
        let server = &server;
        async move {
            server
                .ok(
                    APPROVER,
                    "exec.approval.resolve",
                    json!({"id": id, "decision": decision}),
                )
                .await
        }
    }))
    .await;
    let applied = answers.iter().filter(|a| a["applied"] == true).count();
    assert_eq!(applied, 1, "{answers:?}");
    let winner = answers[0]["decision"].clone();
    assert!(
        answers.iter().all(|a| a["decision"] == winner),
        "{answers:?}"
    );
}

#[tokio::test]
async fn keeps_agents_to_their_own_approvals() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    let id = two_phase(&server).await;
    assert_eq!(
        server
            .ok(AGENT, "exec.approval.get", json!({"id": id}))
            .await["state"],
        "pending"
    );
    assert_hidden_from_other_agents(&server, &id).await;
    // Agents name approvals by full id only: a prefix would let them probe for others.
    assert_eq!(
        server
            .error_code(AGENT, "exec.approval.get", json!({"id": &id[..8]}))
            .await,
        "invalid_params"
    );
}

#[tokio::test]
async fn refuses_every_method_outside_the_callers_scope() {
    let server = Server::start("").await;
    let cwd = server.scratch();
    let id = "00000000-0000-4000-8000-000000000000";
    let refused: &[(&str, &str, Value)] = &[
        (AGENT, "exec.approval.list", json!({})),
        (
            AGENT,
            "exec.approval.resolve",
            json!({"id": id, "decision": "deny"}),
        ),
        (AGENT, "exec.approvals.get", json!({})),
        (
            AGENT,
            "exec.approvals.set",
            json!({"file": {}, "baseHash": ""}),
        ),
        (
            APPROVER,
            "exec.approvals.set",
            json!({"file": {}, "baseHash": ""}),
        ),
        (
            APPROVER,
            "exec.policy.check",
            json!({"command": "ls", "cwd": cwd, "agentId": "main"}),
        ),
        (APPROVER, "tools.effective", json!({"agentId": "main"})),
        (APPROVER, "exec.approval.request", json!({})),
        (APPROVER, "system.run", json!({})),
        (AGENT, "gateway.tokens", json!({})),
    ];
    for (token, method, params) in refused {
        assert_eq!(
            server.error_code(token, method, params.clone()).await,
            "forbidden",
            "{method}"
        );
    }
    assert_eq!(
        server
            .error_code("not-a-token-at-all", "exec.approval.list", json!({}))
            .await,
        "unauthorized"
    );
}

#[tokio::test]
async fn caps_pending_approvals_per_agent_with_a_clear_error() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    for _ in 0..64 {
        request_two_phase(&server).await;
    }
    let answer = server
        .rpc(
            AGENT,
            "exec.approval.request",
            ask_params(&server, json!({"twoPhase": true})),
        )
        .await;
    assert_eq!(answer["error"]["code"], "pending_limit");
    assert_eq!(
        answer["error"]["message"],
        "agent `main` already has 64 pending approvals; wait for one to settle"
    );
    let other = ask_params(&server, json!({"twoPhase": true, "agentId": "ops"}));
    server.ok(AGENT, "exec.approval.request", other).await;
}

#[tokio::test]
async fn reads_the_approvals_file_redacted_and_refuses_stale_writes() {
    let server = Server::start("").await;
    let read = server.ok(APPROVER, "exec.approvals.get", json!({})).await;
    assert_eq!(read["file"]["socket"]["token"], "__GATEHOUSE_REDACTED__");
    let on_disk = std::fs::read_to_string(server.data().join("exec-approvals.json")).unwrap();
    assert!(!on_disk.contains("__GATEHOUSE_REDACTED__"));
    let mut file = read["file"].clone();
    file["agents"] = json!({"main": {"allowlist": [{"pattern": "/usr/bin/make"}]}});
    let written = server
        .ok(
            ADMIN,
            "exec.approvals.set",
            json!({"file": file, "baseHash": read["hash"]}),
        )
        .await;
    assert_ne!(written["hash"], read["hash"]);
    assert_eq!(
        written["file"]["agents"]["main"]["allowlist"][0]["pattern"],
        "/usr/bin/make"
    );
    assert_eq!(
        server
            .error_code(
                ADMIN,
                "exec.approvals.set",
                json!({"file": file, "baseHash": read["hash"]})
            )
            .await,
        "conflict"
    );
}

#[tokio::test]
async fn deletes_settled_approvals_older_than_the_configured_history() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    let old = settled_long_ago(&data, 3 * day);
    let recent = settled_long_ago(&data, day / 24);
    let config = config_with_gateway("limits: { historyDays: 2 },", "");
    std::fs::write(dir.path().join("gatehouse.json5"), config).unwrap();
    let server = Server::start_in(dir, "127.0.0.1:0").await;
    // The first pruning runs beside the server. With the default 30 days both would stay.
    let mut pruned = false;
    for _ in 0..100 {
        let got = server
            .rpc(ADMIN, "exec.approval.get", json!({"id": old}))
            .await;
        if got["error"]["code"] == "not_found" {
            pruned = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(pruned, "the old approval is still there");
    let kept = server
        .ok(ADMIN, "exec.approval.get", json!({"id": recent}))
        .await;
    assert_eq!(kept["state"], "denied");
}

#[tokio::test]
async fn cancels_pending_approvals_when_the_server_restarts() {
    let server = Server::start("").await;
    let (operator, before) = server.ws_with(APPROVER, json!({})).await;
    let id = two_phase(&server).await;
    drop(operator);
    let server = server.restart().await;
    // An operator reconnecting with the last seq and instance it knew is given the cancellation
    // published at start, before it could connect.
    let (mut operator, after) = server
        .ws_with(
            APPROVER,
            json!({"since": 1, "instance": before["server"]["instance"]}),
        )
        .await;
    assert_ne!(after["server"]["instance"], before["server"]["instance"]);
    assert_eq!(after["events"]["complete"], true, "{after}");
    let cancelled = operator.event("exec.approval.cancelled").await;
    assert_eq!(
        (&cancelled["payload"]["id"], &cancelled["payload"]["reason"]),
        (&json!(id), &json!("gateway-restart"))
    );
    let got = server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await;
    assert_eq!(
        (got["state"].clone(), got["reason"].clone()),
        (json!("cancelled"), json!("gateway-restart"))
    );
    // The agent that asked still finds out, though this run never saw it ask; others do not.
    let waited = server
        .ok(AGENT, "exec.approval.waitDecision", json!({"id": id}))
        .await;
    assert_eq!(waited["state"], "cancelled", "{waited}");
    let own = server
        .ok(AGENT, "exec.approval.get", json!({"id": id}))
        .await;
    assert_eq!(own["reason"], "gateway-restart");
    assert_hidden_from_other_agents(&server, &id).await;
    let late = server.resolve(&id, "deny").await;
    assert_eq!(late["error"]["code"], "approval_cancelled", "{late}");
    // The cancellation is recorded like any decision.
    audited_decision_with_reason(&server, &id, "gateway-restart").await;
}

#[tokio::test]
async fn takes_explicit_ids_refuses_reuse_and_lists_candidates_of_an_ambiguous_prefix() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    // Their short ids (8 digits) differ; seven digits name both.
    let ids = [
        "aaaaaaa0-0000-4000-8000-000000000001",
        "aaaaaaa1-0000-4000-8000-000000000002",
    ];
    for id in ids {
        let params = ask_params(&server, json!({"twoPhase": true, "id": id}));
        let accepted = server.ok(AGENT, "exec.approval.request", params).await;
        assert_eq!(accepted["id"], id);
    }
    let again = ask_params(&server, json!({"twoPhase": true, "id": ids[0]}));
    assert_eq!(
        server
            .error_code(AGENT, "exec.approval.request", again)
            .await,
        "id_in_use"
    );
    let ambiguous = server.resolve("AAAAAAA", "deny").await;
    assert_eq!(
        ambiguous["error"]["code"], "ambiguous_prefix",
        "{ambiguous}"
    );
    let message = ambiguous["error"]["message"].as_str().unwrap();
    assert!(ids.iter().all(|id| message.contains(id)), "{message}");
    let resolved = server.resolve(ids[1], "deny").await;
    assert_eq!(resolved["payload"]["applied"], true, "{resolved}");
    let repeated = server.resolve(ids[1], "deny").await["payload"].clone();
    assert_eq!(
        (repeated["applied"].clone(), repeated["decision"].clone()),
        (json!(false), json!("deny"))
    );
}

/// The attack on short ids: an agent's approval is cancelled, and the agent (or another that
/// read the short id in a shared chat) asks again under an id that starts with the same 8 hex
/// digits, for another command, hoping the approver types the short id they saw first.
#[tokio::test]
async fn refuses_an_id_that_reuses_another_approvals_short_id() {
    let server = Server::start("").await;
    let operator = server.ws(APPROVER).await;
    let first = two_phase(&server).await;
    let short = first[..8].to_owned();
    let hijack = |server: &Server| {
        ask_params(
            server,
            json!({"twoPhase": true, "id": format!("{short}-dead-4bad-8bad-0123456789ab"),
                   "command": "rm -rf /tmp/important", "argv": ["rm", "-rf", "/tmp/important"]}),
        )
    };
    for token in [AGENT, OTHER_AGENT] {
        let refused = server
            .rpc(token, "exec.approval.request", hijack(&server))
            .await;
        assert_eq!(refused["error"]["code"], "id_in_use", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&short) && !message.contains(&first),
            "says the short id is taken, not by whom: {message}"
        );
    }
    // Cancelled by the restart and no longer in memory: only the database still holds it.
    drop(operator);
    let server = server.restart().await;
    let _operator = server.ws(APPROVER).await;
    let refused = server
        .rpc(AGENT, "exec.approval.request", hijack(&server))
        .await;
    assert_eq!(refused["error"]["code"], "id_in_use", "{refused}");
    let typed = server.resolve(&short, "allow-once").await;
    assert_eq!(typed["error"]["code"], "approval_cancelled", "{typed}");
    let pending = server
        .ok(APPROVER, "exec.approval.list", json!({"state": "pending"}))
        .await;
    assert_eq!(pending["approvals"], json!([]), "nothing was created");
}

#[tokio::test]
async fn applies_the_pending_cap_configured_in_gateway_limits() {
    let config = config_with_gateway("limits: { maxPendingPerAgent: 1 },", "");
    let server = Server::start_with_config(&config).await;
    let _operator = server.ws(APPROVER).await;
    two_phase(&server).await;
    let refused = server
        .rpc(
            AGENT,
            "exec.approval.request",
            ask_params(&server, json!({"twoPhase": true})),
        )
        .await;
    assert_eq!(refused["error"]["code"], "pending_limit", "{refused}");
}

/// Security review: a token without `agents` named a new `agentId` for each request and so
/// held any number of pending approvals; `maxPendingPerToken` counts over all of them.
#[tokio::test]
async fn applies_the_token_wide_pending_cap_over_every_agent_id_it_names() {
    let config = config_with_gateway("limits: { maxPendingPerToken: 2 },", "");
    let server = Server::start_with_config(&config).await;
    let _operator = server.ws(APPROVER).await;
    let request = |agent: &str| ask_params(&server, json!({"twoPhase": true, "agentId": agent}));
    for agent in ["made-up-1", "made-up-2"] {
        let accepted = server
            .ok(AGENT, "exec.approval.request", request(agent))
            .await;
        assert_eq!(accepted["status"], "accepted", "{agent}");
    }
    let refused = server
        .rpc(AGENT, "exec.approval.request", request("made-up-3"))
        .await;
    assert_eq!(refused["error"]["code"], "pending_limit", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("across its agents")),
        "{refused}"
    );
}

/// Security review: any agent token could name any `agentId` and so run under the most
/// trusted agent's policy. A token given `agents` may only act for those.
#[tokio::test]
async fn a_token_restricted_to_agents_cannot_act_for_another() {
    const MAIN_ONLY: &str = "main-only-token-0123456789";
    let text = format!(
        "{{ gateway: {{ auth: {{ tokens: [
             {{ name: 'admin', token: '{ADMIN}', scopes: ['operator.admin'] }},
             {{ name: 'main-only', token: '{MAIN_ONLY}', scopes: ['agent'], agents: ['main'] }},
           ] }} }},
           agents: {{ list: [{{ id: 'main', default: true }},
             {{ id: 'trusted', tools: {{ exec: {{ security: 'full', ask: 'off' }} }} }}] }} }}"
    );
    let server = Server::start_with_config(&text).await;
    let cwd = server.scratch();
    let run =
        |agent: &str| json!({"argv": ["true"], "cwd": cwd, "agentId": agent, "sessionKey": "s1"});
    let check = |agent: &str| json!({"command": "true", "cwd": cwd, "agentId": agent});
    for (method, params) in [
        ("system.run", run("trusted")),
        ("exec.policy.check", check("trusted")),
        ("tools.effective", json!({"agentId": "trusted"})),
    ] {
        assert_eq!(
            server.error_code(MAIN_ONLY, method, params).await,
            "agent_forbidden",
            "{method}"
        );
    }
    let own = server
        .ok(MAIN_ONLY, "exec.policy.check", check("main"))
        .await;
    assert!(own["decision"].is_string(), "{own}");
}
