use std::path::Path;

use gatehouse_config::model::{Enabled, ForwardingMode, Scope, SlackMode, ToolProfile};
use gatehouse_config::{ConfigError, load_file, load_str};
use gatehouse_policy::{Ask, Security};
use pretty_assertions::assert_eq;

#[test]
fn loads_an_empty_object_as_all_defaults() {
    let loaded = load_str("{}", Path::new("gh.json5")).unwrap();
    assert_eq!(loaded.config, gatehouse_config::Config::default());
    assert!(loaded.warnings.is_empty());
}

#[test]
fn loads_json5_with_comments_and_openclaw_keys() {
    let text = r#"
    // Gatehouse config
    {
      tools: {
        profile: 'coding',
        deny: ['browser'],
        byProvider: { 'openai/gpt-5': { profile: 'minimal' } },
        exec: { security: 'allowlist', ask: 'on-miss', askFallback: 'deny', safeBins: ['jq'] },
        elevated: { enabled: true, allowFrom: { telegram: [12345, 'username:alice'] } },
      },
      agents: {
        defaults: { elevatedDefault: 'ask', subagents: { maxSpawnDepth: 2 } },
        list: [{ id: 'main', default: true, tools: { alsoAllow: ['browser'] } }],
      },
      approvals: { exec: { enabled: true, mode: 'both', targets: [{ channel: 'telegram', to: '-100', threadId: 42 }] } },
      channels: { discord: { token: 'abc', applicationId: 1234, guildIds: ['55', 66],
        messageContentIntent: true, execApprovals: { enabled: 'auto', approvers: [99] } } },
      gateway: { listen: '127.0.0.1:18789', auth: { tokens: [{ name: 'ops', tokenEnv: 'GH_OPS', scopes: ['operator.admin'] }] } },
    }"#;
    let config = load_str(text, Path::new("gh.json5")).unwrap().config;
    assert_eq!(config.tools.profile, Some(ToolProfile::Coding));
    assert_eq!(
        config.tools.by_provider["openai/gpt-5"].profile,
        Some(ToolProfile::Minimal)
    );
    let exec = config.tools.exec.as_ref().unwrap();
    assert_eq!(
        (exec.security, exec.ask, exec.ask_fallback),
        (
            Some(Security::Allowlist),
            Some(Ask::OnMiss),
            Some(Security::Deny)
        )
    );
    let elevated = config.tools.elevated.as_ref().unwrap();
    assert_eq!(
        elevated.allow_from["telegram"],
        vec!["12345".to_owned(), "username:alice".to_owned()]
    );
    assert_eq!(
        config
            .agent("main")
            .unwrap()
            .tools
            .as_ref()
            .unwrap()
            .also_allow,
        Some(vec!["browser".to_owned()])
    );
    let forwarding = config.approvals.exec.as_ref().unwrap();
    assert_eq!(forwarding.mode, Some(ForwardingMode::Both));
    assert_eq!(forwarding.targets[0].thread_id.as_deref(), Some("42"));
    let discord = config.channels.discord.as_ref().unwrap();
    assert_eq!(discord.application_id.as_deref(), Some("1234"));
    assert_eq!(discord.guild_ids, vec!["55".to_owned(), "66".to_owned()]);
    assert_eq!(discord.message_content_intent, Some(true));
    let approvals = discord.exec_approvals.as_ref().unwrap();
    assert_eq!(
        (approvals.enabled, approvals.approvers.clone()),
        (Some(Enabled::Auto), vec!["99".to_owned()])
    );
    assert!(discord.token_source().is_some());
    assert_eq!(
        config.gateway.auth.as_ref().unwrap().tokens[0].scopes,
        vec![Scope::OperatorAdmin]
    );
}

#[test]
fn warns_about_openclaw_settings_gatehouse_ignores() {
    let text = "{\n  models: {},\n  tools: { web: { search: {} } },\n  agents: { list: [ { id: 'a', model: 'x' } ] },\n  channels: { whatsapp: {} },\n}";
    let loaded = load_str(text, Path::new("gh.json5")).unwrap();
    let keys: Vec<(String, usize, usize)> = loaded
        .warnings
        .iter()
        .map(|w| (w.key.clone(), w.line, w.column))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("models".to_owned(), 2, 3),
            // `tools.web.fetch` is Gatehouse's, so the warning names the key inside.
            ("tools.web.search".to_owned(), 3, 19),
            ("agents.list[0].model".to_owned(), 4, 32),
            ("channels.whatsapp".to_owned(), 5, 15),
        ]
    );
}

#[test]
fn reports_unreadable_file_with_its_path() {
    let err = load_file(Path::new("/nonexistent/gatehouse.json5")).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(err.to_string().contains("/nonexistent/gatehouse.json5"));
}

#[test]
fn loads_a_file_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gatehouse.json5");
    std::fs::write(&file, "{ tools: { exec: { ask: 'always' } } }").unwrap();
    let loaded = load_file(&file).unwrap();
    assert_eq!(loaded.config.tools.exec.unwrap().ask, Some(Ask::Always));
}

#[test]
fn loads_discord_ids_as_strings_or_numbers_and_the_content_intent() {
    let text = "{ channels: { discord: { tokenEnv: 'DISCORD_TOKEN',
        applicationId: '1100000000000000001', guildIds: [1234, '1100000000000000002'],
        messageContentIntent: true } } }";
    let config = load_str(text, Path::new("gh.json5")).unwrap().config;
    let discord = config.channels.discord.as_ref().unwrap();
    assert_eq!(
        discord.application_snowflake(),
        Some(1_100_000_000_000_000_001)
    );
    assert_eq!(
        discord.guild_snowflakes(),
        vec![1234, 1_100_000_000_000_000_002]
    );
    assert_eq!(discord.message_content_intent, Some(true));
}

#[test]
fn loads_slack_http_mode_with_its_signing_secret() {
    let text = "{ channels: { slack: { botToken: 'xoxb-1', mode: 'http',
        signingSecretEnv: 'SLACK_SIGNING_SECRET', apiUrl: 'http://127.0.0.1:9/api' } } }";
    let config = load_str(text, Path::new("gh.json5")).unwrap().config;
    let slack = config.channels.slack.as_ref().unwrap();
    assert_eq!(slack.mode, Some(SlackMode::Http));
    assert!(slack.signing_secret_source().is_some());
    assert!(slack.app_token_source().is_none());
}
