//! `integrations.claudeCode` and `integrations.codex`: the blocks load into the hook settings,
//! and every bad value is refused at its own key, all in one load.

use std::path::Path;
use std::time::Duration;

use gatehouse_config::load_str;
use gatehouse_hooks::{Host, OnUnreachable};

use crate::errors::problems;

#[test]
fn loads_both_blocks_into_the_hook_settings() {
    let loaded = load_str(
        "{ integrations: {
             claudeCode: { agentId: 'claude', sessionKey: 'cc:{agent_id}:{session_id}',
                           onUnreachable: 'ask', approvalTimeout: '4m', machine: 'build-box',
                           route: { channel: 'telegram', to: '-1001234567890', threadId: 42 } },
             codex: {} } }",
        Path::new("gh.json5"),
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let integrations = &loaded.config.integrations;
    let claude = integrations.claude_code.as_ref().unwrap().settings();
    assert_eq!(claude.agent_id.as_str(), "claude");
    assert_eq!(
        claude
            .session_key
            .render(Host::ClaudeCode, "s1", &claude.agent_id),
        "cc:claude:s1"
    );
    assert_eq!(claude.on_unreachable, OnUnreachable::Ask);
    assert_eq!(claude.approval_timeout, Duration::from_secs(240));
    assert_eq!(claude.machine.as_deref(), Some("build-box"));
    let route = claude.route.unwrap();
    assert_eq!(
        (
            route.channel.as_str(),
            route.to.as_str(),
            route.thread_id.as_deref()
        ),
        ("telegram", "-1001234567890", Some("42"))
    );
    let codex = integrations.codex.as_ref().unwrap().settings();
    assert_eq!(codex, gatehouse_hooks::IntegrationSettings::default());
}

#[test]
fn refuses_each_bad_value_at_its_key() {
    let found = problems(
        "{ integrations: {
             claudeCode: { agentId: 'no spaces', sessionKey: '{host}', onUnreachable: 'allow' },
             codex: { approvalTimeout: 0, agent: 'x' } } }",
    );
    let keys: Vec<&str> = found.iter().filter_map(|p| p.key.as_deref()).collect();
    assert_eq!(
        keys,
        [
            "integrations.claudeCode.agentId",
            "integrations.claudeCode.sessionKey",
            "integrations.claudeCode.onUnreachable",
            "integrations.codex.approvalTimeout",
            "integrations.codex.agent",
        ],
        "{found:#?}"
    );
    assert!(
        found[1].message.contains("must contain {session_id}"),
        "{found:#?}"
    );
    assert!(found[2].message.contains("never allow"), "{found:#?}");
    assert_eq!(found[0].line, 2, "{found:#?}");
}
