//! The tool-call gate through the real binary: `gatehouse check --tool`, `tools.call.*` over
//! the wire with hosts resolved by the fakes' loopback DNS server, and allow-always grants
//! listed and revoked with `gatehouse grants`, every step in the audit log.

use std::net::Ipv4Addr;

use gatehouse_fakes::dns::{DnsAnswer, DnsHandle, DnsRecord};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::gateway::{ADMIN, AGENT, APPROVER, Server, config_with_gateway};

const PUBLIC: Ipv4Addr = Ipv4Addr::new(93, 184, 216, 34);

/// A loopback name server answering `public.test` (public), `private.test` (10.0.0.5) and
/// `rebind.test` (public, then loopback).
async fn name_server() -> DnsHandle {
    let dns = gatehouse_fakes::dns::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    dns.set("public.test", DnsAnswer::records([DnsRecord::A(PUBLIC)]))
        .unwrap();
    dns.set(
        "private.test",
        DnsAnswer::records([DnsRecord::A(Ipv4Addr::new(10, 0, 0, 5))]),
    )
    .unwrap();
    dns.set_in_turn(
        "rebind.test",
        vec![
            DnsAnswer::records([DnsRecord::A(PUBLIC)]),
            DnsAnswer::records([DnsRecord::A(Ipv4Addr::LOCALHOST)]),
        ],
    )
    .unwrap();
    dns
}

/// Runs the binary with `args`; exit code and stdout.
async fn gatehouse(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(args)
        .env_remove("GATEHOUSE_CONFIG")
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap(), format!("{stdout}{stderr}"))
}

#[tokio::test]
async fn check_tool_judges_a_call_offline_resolving_as_the_gateway_does() {
    let dns = name_server().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=x").unwrap();
    let config = dir.path().join("gatehouse.json5");
    std::fs::write(
        &config,
        format!(
            "{{ tools: {{ profile: 'full', fs: {{ workspaceOnly: true }} }},
               agents: {{ defaults: {{ workspace: '{}' }} }},
               gateway: {{ dns: {{ nameservers: ['{}'] }} }} }}",
            ws.display(),
            dns.addr
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let check = |tool: &'static str, params: Value| {
        let config = config.clone();
        async move {
            let params = params.to_string();
            let args = [
                "check", "--config", &config, "--json", "--tool", tool, "--params", &params,
            ];
            let (code, out) = gatehouse(&args, &[]).await;
            let answer: Value =
                serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
            (code, answer)
        }
    };
    let (code, answer) = check("web_fetch", json!({"url": "https://public.test/a"})).await;
    assert_eq!(
        (code, &answer["decision"]),
        (0, &json!("allow")),
        "{answer}"
    );
    assert_eq!(answer["urls"][0]["pinned"], json!(["93.184.216.34"]));
    let (code, answer) = check("web_fetch", json!({"url": "http://private.test/"})).await;
    assert_eq!(
        (code, &answer["reasons"][0]["rule"]),
        (20, &json!("blocked-address"))
    );
    let (code, answer) = check("read", json!({"path": ".env"})).await;
    assert_eq!(
        (code, &answer["reasons"][0]["rule"]),
        (20, &json!("denied-file"))
    );
    let (code, answer) = check("read", json!({"path": "notes.md", "file_path": "/etc"})).await;
    assert_eq!(
        (code, &answer["reasons"][0]["rule"]),
        (20, &json!("invalid-params"))
    );
    // The config file is the gateway's own: no tool may read it, even outside a workspace rule.
    let (code, answer) = check("read", json!({"path": &config})).await;
    assert_eq!(code, 20, "{answer}");
    let (code, out) = gatehouse(&["check", "--tool", "read", "--params", "[1]"], &[]).await;
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("invalid-params"), "{out}");
}

/// Offline, the tool gate protects what the gateway protects: the secret files the config
/// names and the data directory, not only the config file (they were once built separately).
#[tokio::test]
async fn check_tool_protects_the_gateways_secret_files_and_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("telegram.token");
    std::fs::write(&token, "123:abc").unwrap();
    let config = dir.path().join("gatehouse.json5");
    std::fs::write(
        &config,
        format!(
            "{{ tools: {{ profile: 'full' }},
               agents: {{ defaults: {{ workspace: '{}' }} }},
               channels: {{ telegram: {{ tokenFile: '{}' }} }} }}",
            dir.path().display(),
            token.display()
        ),
    )
    .unwrap();
    let state = dir.path().join("state");
    let state_dir = state.display().to_string();
    let database = state.join("gatehouse/approvals.db");
    std::fs::create_dir_all(state.join("gatehouse")).unwrap();
    std::fs::write(&database, "").unwrap();
    for (path, what) in [
        (token.display().to_string(), "channels.telegram.tokenFile"),
        (database.display().to_string(), "data directory"),
    ] {
        let params = json!({ "path": path }).to_string();
        let args = [
            "check",
            "--config",
            config.to_str().unwrap(),
            "--json",
            "--tool",
            "read",
            "--params",
            &params,
        ];
        let (code, out) = gatehouse(&args, &[("XDG_STATE_HOME", &state_dir)]).await;
        let answer: Value =
            serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(
            (code, &answer["reasons"][0]["rule"]),
            (20, &json!("protected-path")),
            "{answer}"
        );
        assert!(answer.to_string().contains(what), "{what}: {answer}");
    }
}

#[tokio::test]
async fn checks_requests_grants_and_results_over_the_wire_with_dns_through_the_fake() {
    let dns = name_server().await;
    let work = tempfile::tempdir().unwrap();
    let ws = work.path().canonicalize().unwrap();
    let server = Server::start_with_config(&config_with_gateway(
        &format!("dns: {{ nameservers: ['{}'], timeoutMs: 1000 }},", dns.addr),
        &format!(
            "tools: {{ profile: 'full', fs: {{ workspaceOnly: true }}, alwaysAsk: ['write'] }},
             agents: {{ defaults: {{ workspace: '{}' }} }},",
            ws.display()
        ),
    ))
    .await;
    let fetch = |url: &str| {
        json!({"agentId": "main", "sessionKey": "s1", "tool": "web_fetch",
                                   "params": {"url": url}})
    };

    // DNS: a private answer is refused; a rebinding name is pinned, then refused.
    let private = server
        .ok(AGENT, "tools.call.check", fetch("http://private.test/"))
        .await;
    assert_eq!(
        private["reasons"][0]["rule"], "blocked-address",
        "{private}"
    );
    let first = server
        .ok(AGENT, "tools.call.check", fetch("http://rebind.test/x"))
        .await;
    assert_eq!(first["decision"], "allow", "{first}");
    assert_eq!(first["urls"][0]["pinned"], json!(["93.184.216.34"]));
    let second = server
        .ok(AGENT, "tools.call.check", fetch("http://rebind.test/x"))
        .await;
    assert_eq!(second["decision"], "deny", "{second}");

    // Allow-always on a write grants that path; the grant is listed, revoked, and gone.
    let write = json!({"agentId": "main", "sessionKey": "s1", "tool": "write",
                       "params": {"path": "notes.md", "content": "hello"}, "callId": "toolu_w1"});
    let asked = server.ok(AGENT, "tools.call.check", write.clone()).await;
    assert_eq!(asked["decision"], "ask", "{asked}");
    assert_eq!(
        asked["grant"],
        json!({"tool": "write", "scope": "paths", "values": [ws.join("notes.md")]})
    );
    let mut approver = server.ws(APPROVER).await;
    let mut request = write.clone();
    request["twoPhase"] = json!(true);
    request["title"] = json!("Write notes");
    let accepted = server.ok(AGENT, "tools.call.request", request).await;
    let id = accepted["id"].as_str().unwrap().to_owned();
    let event = approver.event("exec.approval.requested").await;
    assert_eq!(
        event["payload"]["request"]["tool"]["name"], "write",
        "{event}"
    );
    assert_eq!(
        event["payload"]["allowedDecisions"],
        json!(["allow-once", "allow-always", "deny"])
    );
    let resolved = server.resolve(&id[..8], "allow-always").await;
    assert_eq!(resolved["ok"], true, "{resolved}");
    let granted = server.ok(AGENT, "tools.call.check", write.clone()).await;
    assert_eq!(granted["reasons"][0]["rule"], "granted", "{granted}");

    let env = [
        ("GATEHOUSE_URL", server.base.as_str()),
        ("GATEHOUSE_TOKEN", ADMIN),
    ];
    let (code, listed) = gatehouse(&["grants", "list"], &env).await;
    assert_eq!(code, 0, "{listed}");
    assert!(
        listed.contains(&id[..8]) && listed.contains("notes.md"),
        "{listed}"
    );
    let (code, revoked) = gatehouse(&["grants", "revoke", &id[..8]], &env).await;
    assert_eq!(code, 0, "{revoked}");
    assert!(revoked.starts_with("revoked "), "{revoked}");
    let (_, empty) = gatehouse(&["grants", "list", "--json"], &env).await;
    assert_eq!(
        serde_json::from_str::<Value>(&empty).unwrap()["grants"],
        json!([])
    );
    let again = server.ok(AGENT, "tools.call.check", write).await;
    assert_eq!(again["decision"], "ask", "{again}");
    assert_eq!(
        server
            .error_code(AGENT, "tools.grants.list", json!({}))
            .await,
        "forbidden"
    );

    // The result is tied to the decision in the audit log, which stays intact.
    let finished = server
        .ok(
            AGENT,
            "tools.call.finished",
            json!({"callId": "toolu_w1", "ok": false, "durationMs": 4, "error": "disk full"}),
        )
        .await;
    assert_eq!(finished["matched"], true, "{finished}");
    let records = crate::gateway::audit_matching(
        &server,
        |record| record["runId"] == "toolu_w1",
        |records| records.iter().any(|r| r["kind"] == "execution"),
    )
    .await;
    assert_eq!(records[0]["payload"]["method"], "tools.call.check");
    let execution = records.iter().find(|r| r["kind"] == "execution").unwrap();
    assert_eq!(execution["payload"]["error"], "disk full");
    let data = server.data().display().to_string();
    let (code, verified) = gatehouse(&["audit", "verify", "--data-dir", &data], &[]).await;
    assert_eq!(code, 0, "{verified}");
}
