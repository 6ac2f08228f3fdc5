//! The tool-call gate: tool policy, parameter kinds, file/URL/exec checks, always-ask lists and
//! allow-always grants composed into one decision.

use std::collections::BTreeSet;
use std::net::IpAddr;

use gatehouse_policy::exec::{AllowlistEntry, Decision, ExecPolicy, ExecRequest};
use gatehouse_policy::files::FileRules;
use gatehouse_policy::tool_call::{
    AskList, Grant, GrantScope, HostToResolve, ToolCall, ToolCallDecision, ToolCallOutcome,
    ToolCallPolicy, ToolParams, decide_tool_call,
};
use gatehouse_policy::tools::{Sender, ToolPolicyInputs, effective_tools, mcp_tool};
use gatehouse_policy::urls::{UrlRules, UrlRulesConfig};
use gatehouse_policy::{Ask, Security};
use pretty_assertions::assert_eq;

use crate::file_support::Tree;
use crate::tool_support::{owner_on_openai, rules, some};

/// An owner on OpenAI with the `full` profile, a contained workspace, default URL rules (the
/// browser may reach the private network), `ls` allowlisted for exec.
struct Gate {
    tree: Tree,
    inputs: ToolPolicyInputs,
    files: FileRules,
    fetch: UrlRules,
    browser: UrlRules,
    exec: ExecPolicy,
    always_ask: Vec<AskList>,
    grants: Vec<Grant>,
}

impl Gate {
    fn new() -> Self {
        let tree = Tree::new();
        tree.file("ws/src/a.rs", "fn a() {}");
        tree.file("ws/README.md", "hi");
        let mut inputs = owner_on_openai();
        inputs.config.global.profile = some("full");
        inputs.plugin_tools = vec![mcp_tool("github", "create_issue")];
        let mut browser = UrlRulesConfig::new("browser");
        browser.ssrf_policy.dangerously_allow_private_network = true;
        let exec = ExecPolicy {
            security: Security::Allowlist,
            ask: Ask::OnMiss,
            allowlist: vec![
                AllowlistEntry::new("/usr/bin/ls"),
                AllowlistEntry::new("/bin/ls"),
            ],
            ..ExecPolicy::default()
        };
        Gate {
            files: tree.contained(),
            fetch: UrlRules::new(UrlRulesConfig::new("tools.web.fetch")).unwrap(),
            browser: UrlRules::new(browser).unwrap(),
            tree,
            inputs,
            exec,
            always_ask: Vec::new(),
            grants: Vec::new(),
        }
    }

    fn ask_always(mut self, entries: &[&str]) -> Self {
        self.always_ask.push(AskList {
            key: "tools.alwaysAsk".into(),
            entries: entries.iter().map(|e| (*e).to_owned()).collect(),
        });
        self
    }

    fn outcome(&self, call: &ToolCall) -> ToolCallOutcome {
        let effective = effective_tools(&self.inputs);
        let policy = ToolCallPolicy {
            tools: &self.inputs,
            effective: &effective,
            always_ask: &self.always_ask,
            files: Some(&self.files),
            fetch: Some(&self.fetch),
            browser: Some(&self.browser),
            exec: &self.exec,
            grants: &self.grants,
        };
        decide_tool_call(call, &policy)
    }

    fn decide(&self, call: &ToolCall) -> ToolCallDecision {
        match self.outcome(call) {
            ToolCallOutcome::Decided(decision) => *decision,
            ToolCallOutcome::NeedsResolution(hosts) => panic!("needs resolution of {hosts:?}"),
        }
    }

    /// `<decision> <rule>, <rule>…` in the order of the reasons.
    fn check(&self, call: &ToolCall) -> String {
        let decision = self.decide(call);
        let rules: Vec<&str> = decision.reasons.iter().map(|r| r.rule.as_str()).collect();
        format!("{} {}", decision.decision, rules.join(", "))
    }
}

fn read(path: &str) -> ToolCall {
    ToolCall::new("read", ToolParams::Read { path: path.into() })
}

fn write(path: &str) -> ToolCall {
    ToolCall::new(
        "write",
        ToolParams::Write {
            path: path.into(),
            len: 3,
        },
    )
}

fn fetch(url: &str) -> ToolCall {
    ToolCall::new("web_fetch", ToolParams::WebFetch { url: url.into() })
}

fn mcp(server: &str, tool: &str) -> ToolCall {
    ToolCall::new(
        format!("mcp__{server}__{tool}"),
        ToolParams::Mcp {
            server: server.into(),
            tool: tool.into(),
            urls: Vec::new(),
        },
    )
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn allows_a_read_naming_the_file_to_open_and_the_grant_it_would_store() {
    let gate = Gate::new();
    let decision = gate.decide(&read("src/a.rs"));
    assert_eq!(decision.decision, Decision::Allow);
    assert_eq!(decision.reasons[0].rule, "allowed");
    let path = gate.tree.ws.join("src/a.rs");
    assert_eq!(
        decision.files.iter().map(|f| &f.path).collect::<Vec<_>>(),
        vec![&path]
    );
    assert_eq!(
        decision.grant,
        Some(Grant {
            tool: "read".into(),
            scope: GrantScope::Paths(BTreeSet::from([path]))
        })
    );
}

#[test]
fn denies_by_tool_policy_before_any_check() {
    let mut gate = Gate::new();
    gate.inputs.config.global.rules = rules("tools", &[], &[], &["write"]);
    assert_eq!(gate.check(&write("src/new.rs")), "deny tool-removed");
    assert_eq!(
        gate.check(&ToolCall::new("nope", ToolParams::Other { urls: vec![] })),
        "deny unknown-tool"
    );
    gate.inputs.session.sender = Sender::NonOwner;
    assert_eq!(
        gate.check(&ToolCall::new("cron", ToolParams::Other { urls: vec![] })),
        "deny owner-only"
    );
    // A refused web_fetch is decided without asking for DNS.
    gate.inputs.config.global.rules = rules("tools", &[], &[], &["web_fetch"]);
    assert_eq!(
        gate.check(&fetch("https://example.com/")),
        "deny tool-removed"
    );
}

#[test]
fn denies_parameters_of_the_wrong_kind() {
    let gate = Gate::new();
    for call in [
        ToolCall::new("read", ToolParams::Other { urls: vec![] }),
        ToolCall::new("write", ToolParams::Read { path: "x".into() }),
        ToolCall::new("web_fetch", ToolParams::Other { urls: vec![] }),
        ToolCall::new("bash", ToolParams::Other { urls: vec![] }),
        ToolCall::new(
            "mcp__github__create_issue",
            ToolParams::Mcp {
                server: "slack".into(),
                tool: "post".into(),
                urls: Vec::new(),
            },
        ),
        ToolCall::new("message", ToolParams::Read { path: "x".into() }),
    ] {
        assert_eq!(gate.check(&call), "deny params-mismatch", "{call:?}");
    }
}

#[test]
fn denies_with_the_file_checks_reason() {
    let gate = Gate::new();
    let decision = gate.decide(&read("../outside/x"));
    assert_eq!(decision.decision, Decision::Deny);
    assert_eq!(decision.reasons[0].rule, "outside-workspace");
    assert_eq!(decision.grant, None);
    assert_eq!(gate.check(&write(".env")), "deny denied-file");
    let patch =
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Delete File: /etc/passwd\n*** End Patch";
    assert_eq!(
        gate.check(&ToolCall::new(
            "apply_patch",
            ToolParams::ApplyPatch { text: patch.into() }
        )),
        "deny outside-workspace"
    );
}

#[test]
fn allows_a_host_name_url_after_resolution_pinning_its_addresses() {
    let gate = Gate::new();
    let call = fetch("https://Example.com/a");
    assert_eq!(
        gate.outcome(&call),
        ToolCallOutcome::NeedsResolution(vec![HostToResolve {
            host: "example.com".into(),
            port: 443
        }])
    );
    let resolved = call
        .clone()
        .with_resolved("example.com", vec![ip("93.184.215.14")]);
    let decision = gate.decide(&resolved);
    assert_eq!(decision.decision, Decision::Allow);
    assert_eq!(decision.urls[0].pinned, vec![ip("93.184.215.14")]);
    assert_eq!(decision.urls[0].url, "https://example.com/a");
    assert_eq!(
        decision.grant.map(|g| g.scope),
        Some(GrantScope::Hosts(BTreeSet::from(
            ["example.com".to_owned()]
        )))
    );
    let rebound = call.with_resolved("example.com", vec![ip("93.184.215.14"), ip("10.0.0.1")]);
    assert_eq!(gate.check(&rebound), "deny blocked-address");
}

#[test]
fn allows_private_addresses_for_browser_navigation_only_under_its_rules() {
    let gate = Gate::new();
    let browse = ToolCall::new(
        "browser",
        ToolParams::Browser {
            url: "http://127.0.0.1:3000/".into(),
        },
    );
    assert_eq!(gate.check(&browse), "allow allowed");
    assert_eq!(
        gate.check(&fetch("http://127.0.0.1:3000/")),
        "deny blocked-address"
    );
    let screenshot = ToolCall::new("browser", ToolParams::Other { urls: vec![] });
    assert_eq!(gate.check(&screenshot), "allow allowed");
    let image = ToolCall::new(
        "image",
        ToolParams::Other {
            urls: vec!["file:///etc/passwd".into()],
        },
    );
    assert_eq!(gate.check(&image), "deny scheme");
}

#[test]
fn asks_for_always_ask_tools_until_a_grant_covers_them() {
    let mut gate = Gate::new().ask_always(&["mcp__github"]);
    let decision = gate.decide(&mcp("github", "create_issue"));
    assert_eq!(decision.decision, Decision::Ask);
    assert_eq!(
        decision.reasons[0].message,
        "tools.alwaysAsk entry \"mcp__github\" names tool \"mcp__github__create_issue\""
    );
    // The person answers allow-always: the service stores the proposed grant.
    gate.grants.push(decision.grant.unwrap());
    assert_eq!(gate.check(&mcp("github", "create_issue")), "allow granted");
    // A tool the server gained later is still asked about (the grant names one tool).
    gate.inputs.config.global.rules = rules("tools", &[], &[], &[]);
    assert_eq!(gate.check(&mcp("github", "new_tool")), "ask always-ask");
}

#[test]
fn allows_by_a_path_grant_only_under_its_paths() {
    let mut gate = Gate::new().ask_always(&["write"]);
    assert_eq!(gate.check(&write("src/b.rs")), "ask always-ask");
    gate.grants.push(Grant {
        tool: "write".into(),
        scope: GrantScope::Paths(BTreeSet::from([gate.tree.ws.join("src")])),
    });
    assert_eq!(gate.check(&write("src/b.rs")), "allow granted");
    assert_eq!(gate.check(&write("src/deeper/c.rs")), "allow granted");
    assert_eq!(gate.check(&write("srcx/c.rs")), "ask always-ask");
    assert_eq!(gate.check(&write("README.md")), "ask always-ask");
    // A grant never lifts a refusal.
    assert_eq!(gate.check(&write("src/.env")), "deny denied-file");
    // Nor does a grant for another tool count.
    let edit = ToolCall::new(
        "edit",
        ToolParams::Edit {
            path: "src/a.rs".into(),
        },
    );
    gate = gate.ask_always(&["edit"]);
    assert_eq!(gate.check(&edit), "ask always-ask");
}

#[test]
fn asks_when_a_tool_grant_meets_a_call_with_a_url() {
    let mut gate = Gate::new().ask_always(&["browser"]);
    gate.grants.push(Grant {
        tool: "browser".into(),
        scope: GrantScope::Tool,
    });
    assert_eq!(
        gate.check(&ToolCall::new(
            "browser",
            ToolParams::Other { urls: vec![] }
        )),
        "allow granted"
    );
    let navigate = ToolCall::new(
        "browser",
        ToolParams::Browser {
            url: "http://10.0.0.1/".into(),
        },
    );
    assert_eq!(gate.check(&navigate), "ask always-ask");
}

#[test]
fn denies_and_asks_for_exec_as_the_exec_policy_does() {
    let mut gate = Gate::new();
    let exec = |command: &str| {
        ToolCall::new(
            "bash",
            ToolParams::Exec(Box::new(
                ExecRequest::shell(command, &gate.tree.ws)
                    .with_inherited_env("PATH", "/usr/bin:/bin"),
            )),
        )
    };
    assert_eq!(gate.check(&exec("ls")), "allow allowlist-satisfied");
    let asked = gate.decide(&exec("ls > out"));
    assert_eq!(asked.decision, Decision::Ask);
    assert_eq!(asked.grant, None);
    assert!(asked.exec.is_some());
    gate.grants.push(Grant {
        tool: "exec".into(),
        scope: GrantScope::Tool,
    });
    assert_eq!(gate.decide(&exec("ls > out")).decision, Decision::Ask);
    gate.exec.security = Security::Deny;
    assert_eq!(gate.check(&exec("ls")), "deny security-deny");
}

#[test]
fn denies_with_the_strictest_reason_first() {
    let gate = Gate::new().ask_always(&["*"]);
    let patch = "*** Begin Patch\n*** Add File: .env\n+x\n*** End Patch";
    let decision = gate.decide(&ToolCall::new(
        "apply_patch",
        ToolParams::ApplyPatch { text: patch.into() },
    ));
    assert_eq!(decision.decision, Decision::Deny);
    assert_eq!(decision.reasons[0].rule, "denied-file");
    assert_eq!(gate.check(&read("README.md")), "ask always-ask");
}

#[test]
fn denies_file_and_url_tools_when_their_rules_did_not_load() {
    let gate = Gate::new();
    let effective = effective_tools(&gate.inputs);
    let policy = ToolCallPolicy {
        tools: &gate.inputs,
        effective: &effective,
        always_ask: &[],
        files: None,
        fetch: None,
        browser: None,
        exec: &gate.exec,
        grants: &[],
    };
    let rule = |call: &ToolCall| match decide_tool_call(call, &policy) {
        ToolCallOutcome::Decided(d) => d.reasons[0].rule.clone(),
        ToolCallOutcome::NeedsResolution(_) => "resolve".into(),
    };
    assert_eq!(rule(&read("README.md")), "no-file-rules");
    assert_eq!(rule(&fetch("https://example.com/")), "no-url-rules");
    assert_eq!(rule(&mcp("github", "create_issue")), "allowed");
}

#[test]
fn checks_the_url_arguments_of_an_mcp_tool_like_web_fetch() {
    let gate = Gate::new();
    let call = |url: &str| {
        ToolCall::new(
            "mcp__github__create_issue",
            ToolParams::Mcp {
                server: "github".into(),
                tool: "create_issue".into(),
                urls: vec![url.into()],
            },
        )
    };
    assert_eq!(
        gate.check(&call("http://169.254.169.254/latest")),
        "deny metadata"
    );
    assert_eq!(gate.check(&call("file:///etc/passwd")), "deny scheme");
    assert_eq!(gate.check(&call("http://8.8.8.8/")), "allow allowed");
    assert_eq!(
        gate.outcome(&call("https://example.com/")),
        ToolCallOutcome::NeedsResolution(vec![HostToResolve {
            host: "example.com".into(),
            port: 443
        }])
    );
}
