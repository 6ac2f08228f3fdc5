//! `tools.call.check` through the service: file paths on a real tree, URLs resolved by a real
//! resolver against the fakes' loopback DNS server, exec through its own path, the audit log.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use gatehouse_fakes::dns::{DnsAnswer, DnsRecord};
use gatehouse_policy::exec::Decision;
use gatehouse_policy::tool_call::ToolCallDecision;
use gatehouse_service::{CheckInput, ExecContext};
use serde_json::json;

use crate::support::{AGENT, call, check, file, start};

const PUBLIC: Ipv4Addr = Ipv4Addr::new(93, 184, 216, 34);

/// Every tool, contained file tools, DNS from `{dns}` with a short deadline.
const CONFIG: &str = "{ tools: { profile: 'full', fs: { workspaceOnly: true } },
    agents: { defaults: { workspace: '{ws}' } },
    gateway: { dns: { nameservers: ['{dns}'], timeoutMs: 500 } } }";

/// `<decision> <first rule>`.
fn verdict(decision: &ToolCallDecision) -> String {
    format!("{} {}", decision.decision, decision.reasons[0].rule)
}

#[tokio::test]
async fn judges_file_tools_on_the_real_tree_and_refuses_bad_parameters_with_why() {
    let h = start(CONFIG, None).await;
    let ws = h.workspace();
    file(&ws, "notes.md", "hi");
    file(&ws, ".env", "TOKEN=x");

    let read = check(&h, "read", json!({"path": "notes.md"})).await;
    assert_eq!(verdict(&read), "allow allowed");
    assert_eq!(read.files[0].path, ws.join("notes.md"));
    let created = check(&h, "write", json!({"path": "new/a.md", "content": "x"})).await;
    assert_eq!(verdict(&created), "allow allowed");
    assert_eq!(created.files[0].existing, None);

    assert_eq!(
        verdict(&check(&h, "read", json!({"path": ".env"})).await),
        "deny denied-file"
    );
    assert_eq!(
        verdict(&check(&h, "read", json!({"path": "/etc/hostname"})).await),
        "deny outside-workspace"
    );
    let smuggled = check(
        &h,
        "read",
        json!({"path": "notes.md", "file_path": "/etc/shadow"}),
    )
    .await;
    assert_eq!(verdict(&smuggled), "deny invalid-params");
    assert!(
        smuggled.reasons[0].message.contains("file_path"),
        "{smuggled:?}"
    );
    assert_eq!(
        verdict(&check(&h, "write", json!({"path": "a"})).await),
        "deny invalid-params"
    );
    assert_eq!(
        verdict(&check(&h, "raed", json!({"path": "a"})).await),
        "deny unknown-tool"
    );
}

#[tokio::test]
async fn a_file_tool_of_an_agent_without_a_workspace_is_refused_saying_which_key_to_set() {
    let h = start("{ tools: { profile: 'full' } }", None).await;
    let refused = check(&h, "read", json!({"path": "/etc/hostname"})).await;
    assert_eq!(verdict(&refused), "deny no-file-rules");
    assert!(
        refused.reasons[0]
            .message
            .contains("agents.defaults.workspace"),
        "{refused:?}"
    );
}

#[tokio::test]
async fn resolves_hosts_through_the_configured_name_server_and_pins_what_it_checked() {
    let dns = gatehouse_fakes::dns::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let records = |r: Vec<DnsRecord>| DnsAnswer::records(r);
    dns.set("public.test", records(vec![DnsRecord::A(PUBLIC)]))
        .unwrap();
    dns.set(
        "private.test",
        records(vec![DnsRecord::A(Ipv4Addr::new(10, 0, 0, 5))]),
    )
    .unwrap();
    dns.set(
        "dual.test",
        records(vec![
            DnsRecord::A(PUBLIC),
            DnsRecord::Aaaa(Ipv6Addr::LOCALHOST),
        ]),
    )
    .unwrap();
    dns.set(
        "alias.test",
        records(vec![DnsRecord::Cname("metadata.test".into())]),
    )
    .unwrap();
    dns.set(
        "metadata.test",
        records(vec![DnsRecord::A(Ipv4Addr::new(169, 254, 169, 254))]),
    )
    .unwrap();
    dns.set("gone.test", DnsAnswer::NxDomain).unwrap();
    dns.set("slow.test", DnsAnswer::Silent).unwrap();
    let h = start(CONFIG, Some(dns.addr)).await;
    let fetch = |url: &str| json!({"url": url});

    let public = check(&h, "web_fetch", fetch("https://PUBLIC.test./a")).await;
    assert_eq!(verdict(&public), "allow allowed");
    assert_eq!(public.urls[0].host, "public.test");
    assert_eq!(public.urls[0].pinned, [IpAddr::V4(PUBLIC)]);
    let refused = [
        ("http://private.test/", "deny blocked-address"),
        ("http://dual.test/", "deny blocked-address"),
        ("http://alias.test/", "deny metadata"),
        ("http://gone.test/", "deny no-addresses"),
        ("http://slow.test/", "deny dns-failed"),
    ];
    for (url, expected) in refused {
        assert_eq!(
            verdict(&check(&h, "web_fetch", fetch(url)).await),
            expected,
            "{url}"
        );
    }
    // An MCP tool's URL arguments are checked the same way.
    let mcp = check(
        &h,
        "mcp__fetcher__get",
        json!({"target": {"url": "http://private.test/admin"}}),
    )
    .await;
    assert_eq!(verdict(&mcp), "deny blocked-address");

    // A literal needs no lookup, and a refused scheme none either.
    let before = dns.queries().len();
    assert_eq!(
        verdict(&check(&h, "web_fetch", fetch("http://127.0.0.1:8080/")).await),
        "deny blocked-address"
    );
    assert_eq!(
        verdict(&check(&h, "web_fetch", fetch("file:///etc/passwd")).await),
        "deny scheme"
    );
    assert_eq!(dns.queries().len(), before);
}

#[tokio::test]
async fn a_rebinding_name_is_pinned_to_what_was_checked_and_refused_once_it_turns_private() {
    let dns = gatehouse_fakes::dns::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    dns.set_in_turn(
        "rebind.test",
        vec![
            DnsAnswer::records([DnsRecord::A(PUBLIC)]),
            DnsAnswer::records([DnsRecord::A(Ipv4Addr::LOCALHOST)]),
        ],
    )
    .unwrap();
    let h = start(CONFIG, Some(dns.addr)).await;
    let first = check(&h, "web_fetch", json!({"url": "http://rebind.test/"})).await;
    assert_eq!(verdict(&first), "allow allowed");
    assert_eq!(first.urls[0].pinned, [IpAddr::V4(PUBLIC)]);
    // The next lookup answers loopback: asked fresh (no cache), it is refused.
    let second = check(&h, "web_fetch", json!({"url": "http://rebind.test/"})).await;
    assert_eq!(verdict(&second), "deny blocked-address");
    assert!(dns.queries_for("rebind.test").len() >= 2);
}

#[tokio::test]
async fn exec_answers_as_its_own_check_does() {
    let h = start(
        "{ tools: { profile: 'full', exec: { security: 'allowlist', ask: 'on-miss' } } }",
        None,
    )
    .await;
    let ws = h.workspace();
    for command in ["ls -la", "rm -rf /", "echo $(id)"] {
        let gate = check(&h, "exec", json!({"command": command, "cwd": ws})).await;
        let own = h
            .service
            .check(
                &AGENT,
                CheckInput {
                    command: Some(command.into()),
                    cwd: ws.clone(),
                    context: ExecContext {
                        agent_id: "main".into(),
                        session_key: Some("s1".into()),
                        ..ExecContext::default()
                    },
                    ..CheckInput::default()
                },
            )
            .unwrap();
        let exec = gate.exec.as_ref().unwrap();
        assert_eq!(gate.decision, own.decision, "{command}");
        assert_eq!(exec.decision, own.decision, "{command}");
        assert_eq!(exec.reason.rule, own.reason.rule, "{command}");
        assert_eq!(
            exec.allow_always_patterns, own.allow_always_patterns,
            "{command}"
        );
    }
    let bash = check(&h, "Bash", json!({"command": "ls", "cwd": ws})).await;
    assert!(bash.exec.is_some() && bash.tool == "exec");
    let escalating = check(
        &h,
        "exec",
        json!({"command": "ls", "cwd": ws, "elevated": "full"}),
    )
    .await;
    assert_eq!(verdict(&escalating), "deny invalid-params");
}

#[tokio::test]
async fn records_every_decision_in_the_audit_log_under_the_call_id() {
    let h = start(CONFIG, None).await;
    file(&h.workspace(), "notes.md", "hi");
    let mut input = call("read", json!({"path": "notes.md"}));
    input.call_id = Some("toolu_01".into());
    let decision = h.service.tool_check(&AGENT, input).await.unwrap();
    assert_eq!(decision.decision, Decision::Allow);
    let records = h
        .audited(1, |r| r["runId"] == "toolu_01" && r["kind"] == "decision")
        .await;
    assert_eq!(records.len(), 1, "{records:?}");
    let payload = &records[0]["payload"];
    assert_eq!(payload["method"], "tools.call.check");
    assert_eq!(payload["by"], "agent-host");
    assert_eq!(payload["answer"]["decision"], "allow");
    assert_eq!(payload["params"], json!([["path", "notes.md"]]));
}
