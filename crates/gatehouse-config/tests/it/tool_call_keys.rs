//! The tool-call gate's keys: they load, bad values fail the load at their own key, and the
//! OpenClaw keys around them still load with a warning.

use std::path::Path;
use std::time::Duration;

use gatehouse_config::load_str;

use crate::errors::problems;

#[test]
fn loads_the_reference_approval_timeout_and_per_tool_timeouts() {
    let loaded = load_str(
        "{ approvals: { exec: { enabled: false, timeout: 300 },
                        tools: { timeout: '10m', byTool: { mcp__github: '1h', browser: '1500ms' } } } }",
        Path::new("gh.json5"),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let approvals = &loaded.config.approvals;
    let exec = approvals.exec.as_ref().unwrap();
    assert_eq!(exec.timeout, Some(Duration::from_secs(300)));
    let tools = approvals.tools.as_ref().unwrap();
    assert_eq!(tools.timeout, Some(Duration::from_secs(600)));
    assert_eq!(tools.by_tool["mcp__github"], Duration::from_secs(3600));
    assert_eq!(tools.by_tool["browser"], Duration::from_millis(1500));
}

#[test]
fn refuses_a_zero_or_unreadable_timeout_at_its_key() {
    for (value, wanted) in [
        ("0", "a timeout of 0"),
        ("'5 days'", "unknown unit"),
        ("'soon'", "is not a duration"),
        ("-3", "cannot be negative"),
    ] {
        let found = problems(&format!(
            "{{ approvals: {{ exec: {{ timeout: {value} }} }} }}"
        ));
        assert_eq!(
            found[0].key.as_deref(),
            Some("approvals.exec.timeout"),
            "{value}"
        );
        assert!(
            found[0].message.contains(wanted),
            "{value}: {}",
            found[0].message
        );
    }
}

#[test]
fn loads_file_url_and_always_ask_keys_globally_and_per_agent() {
    let loaded = load_str(
        "{ agents: { defaults: { workspace: '/srv/ws' },
                     list: [{ id: 'dev', workspace: '/srv/dev', tools: {
                         fs: { workspaceOnly: true }, read: { deny: ['build'] },
                         alwaysAsk: ['browser'], web: { fetch: { allowedDomains: ['docs.rs'] } } } }] },
           tools: { fs: { workspaceOnly: false, denyPaths: ['*.sqlite'] },
                    exec: { applyPatch: { workspaceOnly: true } },
                    read: { maxSizeBytes: 10 }, write: { allow: ['src/**'], deny: ['x'] },
                    alwaysAsk: ['mcp__github'],
                    web: { search: { maxResults: 5 },
                           fetch: { maxChars: 5000, deniedDomains: ['*.evil.test'],
                                    ssrfPolicy: { allowRfc2544BenchmarkRange: true } } } },
           browser: { headless: true, ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } },
           gateway: { dns: { nameservers: ['127.0.0.1:5353', '::1'], timeoutMs: 500 } } }",
        Path::new("gh.json5"),
    )
    .unwrap();
    let keys: Vec<&str> = loaded.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "tools.web.search",
            "tools.web.fetch.maxChars",
            "browser.headless"
        ]
    );
    let config = loaded.config;
    assert_eq!(
        config.tools.always_ask,
        Some(vec!["mcp__github".to_owned()])
    );
    let dns = config.gateway.dns.as_ref().unwrap();
    assert_eq!(
        dns.nameserver_addrs().unwrap(),
        [
            "127.0.0.1:5353".parse().unwrap(),
            "[::1]:53".parse().unwrap()
        ]
    );
    let dev = config.file_rules("dev", None).unwrap();
    assert!(dev.workspace_only && dev.apply_patch_workspace_only);
    assert_eq!(dev.deny_paths, ["*.sqlite"]);
}

#[test]
fn refuses_a_bad_glob_host_pattern_or_name_server_at_its_key() {
    let found = problems("{ tools: { write: { deny: ['src/[oops'] } } }");
    assert_eq!(found[0].key.as_deref(), Some("tools.write.deny"));
    let found = problems(
        "{ agents: { list: [{ id: 'dev', tools: { web: { fetch: { deniedDomains: ['exa mple.com'] } } } }] } }",
    );
    assert_eq!(
        found[0].key.as_deref(),
        Some("agents.list[0].tools.web.fetch.deniedDomains")
    );
    let found = problems("{ gateway: { dns: { nameservers: ['dns.google'] } } }");
    assert_eq!(found[0].key.as_deref(), Some("gateway.dns.nameservers"));
    assert!(
        found[0].message.contains("dns.google"),
        "{}",
        found[0].message
    );
}

#[test]
fn reads_conversation_tool_policies_and_refuses_those_it_cannot_apply() {
    let loaded = load_str(
        "{ channels: { telegram: { groups: { '-100': { requireMention: true, tools: { deny: ['exec'] } } } },
                       slack: { channels: { C1: { tools: { allow: ['read'] } } } } } }",
        Path::new("gh.json5"),
    )
    .unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.config.conversation_rules("slack", "C1").is_some());
    let found = problems(
        "{ channels: { discord: { guilds: { '42': { channels: { general: { tools: { deny: ['exec'] } } } } } } } }",
    );
    assert_eq!(
        found[0].key.as_deref(),
        Some("channels.discord.guilds.42.channels.general.tools")
    );
    let found = problems(
        "{ channels: { telegram: { groups: { '-100': { toolsBySender: { '1': { deny: ['exec'] } } } } } } }",
    );
    assert!(
        found[0].message.contains("per-sender"),
        "{}",
        found[0].message
    );
}
