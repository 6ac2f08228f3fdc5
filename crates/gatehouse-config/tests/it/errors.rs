use std::path::Path;

use gatehouse_config::{ConfigError, Diagnostic, DiagnosticKind, load_str};

/// Every problem `load_str` reports for `text`, in file order.
pub(crate) fn problems(text: &str) -> Vec<Diagnostic> {
    match load_str(text, Path::new("gh.json5")) {
        Ok(_) => panic!("expected an error"),
        Err(ConfigError::Invalid { diagnostics, .. }) => diagnostics,
        Err(other) => panic!("unexpected error {other}"),
    }
}

/// Loads `text` and returns `(kind, line, column, key, message)` of its first problem.
fn check(text: &str) -> (&'static str, usize, usize, String, String) {
    let first = problems(text).remove(0);
    let kind = match first.kind {
        DiagnosticKind::Syntax => "syntax",
        DiagnosticKind::Invalid => "invalid",
        DiagnosticKind::UnknownKey => "unknown",
        DiagnosticKind::UnsupportedKey => "unsupported",
    };
    let key = first.key.unwrap_or_default();
    (kind, first.line, first.column, key, first.message)
}

#[test]
fn reports_syntax_errors_with_line_and_column() {
    let (kind, line, column, _, message) =
        check("{\n  tools: {\n    exec: { security: 'full' \n  },\n");
    assert_eq!(kind, "syntax");
    assert_eq!((line, column), (5, 1));
    assert_eq!(message, "EOF parsing object (opened at line 2 column 10)");
}

#[test]
fn reports_an_empty_file_as_a_syntax_error() {
    let (kind, line, column, _, message) = check("// nothing here\n");
    assert_eq!((kind, line, column), ("syntax", 2, 1));
    assert_eq!(message, "EOF parsing value");
}

#[test]
fn reports_trailing_garbage_as_syntax_error() {
    let (kind, line, column, _, _) = check("{ tools: {} }\n}");
    assert_eq!((kind, line, column), ("syntax", 2, 1));
}

#[test]
fn reports_invalid_mode_at_the_value_with_key_path() {
    let text = "{\n  tools: {\n    exec: {\n      security: 'ful',\n    },\n  },\n}\n";
    let (kind, line, column, key, message) = check(text);
    assert_eq!(kind, "invalid");
    assert_eq!(key, "tools.exec.security");
    assert_eq!((line, column), (4, 17));
    assert!(
        message.contains("unknown security value \"ful\""),
        "{message}"
    );
}

#[test]
fn reports_wrong_type_inside_agent_list() {
    let text = "{\n  agents: { list: [\n    { id: 'main' },\n    { id: 'work', tools: { deny: 'exec' } },\n  ] },\n}\n";
    let (kind, line, column, key, message) = check(text);
    assert_eq!(kind, "invalid");
    assert_eq!(key, "agents.list[1].tools.deny");
    assert_eq!((line, column), (4, 34));
    assert_eq!(
        message,
        "wrong type: expected a list `[ … ]`, found a string"
    );
}

#[test]
fn reports_unknown_key_with_its_position() {
    let text = "{\n  tools: {\n    exec: {\n      securty: 'full',\n    },\n  },\n}\n";
    let (kind, line, column, key, _) = check(text);
    assert_eq!(kind, "unknown");
    assert_eq!(key, "tools.exec.securty");
    assert_eq!((line, column), (4, 7));
}

#[test]
fn reports_every_unknown_key_at_once() {
    let text = "{ tool: {}, agents: { list: [ { id: 'a', tols: {} } ] } }";
    let found: Vec<_> = problems(text)
        .into_iter()
        .map(|found| (found.kind, found.key.unwrap(), found.line, found.column))
        .collect();
    assert_eq!(
        found,
        [
            (DiagnosticKind::UnknownKey, "tool".to_owned(), 1, 3),
            (
                DiagnosticKind::UnknownKey,
                "agents.list[0].tols".to_owned(),
                1,
                42
            ),
        ]
    );
}

#[test]
fn refuses_openclaw_keys_whose_omission_would_change_policy() {
    let text = "{ tools: { exec: { mode: 'auto' } } }";
    let (kind, _, _, key, message) = check(text);
    assert_eq!((kind, key.as_str()), ("unsupported", "tools.exec.mode"));
    assert!(message.contains("tools.exec.security"), "{message}");
    let message = load_str(text, Path::new("gh.json5"))
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("gh.json5:1:20: `tools.exec.mode`: unsupported key (OpenClaw"),
        "{message}"
    );
}

#[test]
fn refuses_allow_and_also_allow_in_one_scope() {
    let text = "{\n  tools: {\n    byProvider: {\n      openai: { allow: ['read'], alsoAllow: ['exec'] },\n    },\n  },\n}\n";
    let (kind, line, column, key, message) = check(text);
    assert_eq!(kind, "invalid");
    assert_eq!(key, "tools.byProvider.openai.alsoAllow");
    assert_eq!((line, column), (4, 34));
    assert!(message.contains("alsoAllow"), "{message}");
}

#[test]
fn refuses_duplicate_agent_ids() {
    let text = "{ agents: { list: [\n  { id: 'main' },\n  { id: 'main' },\n] } }";
    let (kind, line, column, key, message) = check(text);
    assert_eq!(kind, "invalid");
    assert_eq!(key, "agents.list[1].id");
    assert_eq!((line, column), (3, 5));
    assert!(message.contains("duplicate agent id"), "{message}");
}

#[test]
fn refuses_missing_agent_id() {
    let (kind, _, _, key, message) = check("{ agents: { list: [ { default: true } ] } }");
    assert_eq!((kind, key.as_str()), ("invalid", "agents.list[0]"));
    assert!(message.contains("missing field `id`"), "{message}");
}

#[test]
fn refuses_spawn_depth_out_of_range() {
    let (kind, _, _, key, _) =
        check("{ agents: { defaults: { subagents: { maxSpawnDepth: 9 } } } }");
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "agents.defaults.subagents.maxSpawnDepth")
    );
}

/// A sandbox path spelt so it cannot be checked (relative, another user's home, `..`) is
/// refused where it is written, not when the first sandboxed run is planned.
#[test]
fn refuses_sandbox_paths_that_are_not_absolute_or_under_home() {
    let (kind, _, _, key, message) = check(
        "{ agents: { list: [ { id: 'ops', sandbox: { extraPaths: ['/opt/bin', 'bin'] } } ] } }",
    );
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "agents.list[0].sandbox.extraPaths[1]")
    );
    assert!(message.contains("bin"), "{message}");
    let (_, _, _, key, _) = check("{ agents: { defaults: { workspace: '~ann/work' } } }");
    assert_eq!(key, "agents.defaults.workspace");
    let (_, _, _, key, _) =
        check("{ agents: { defaults: { sandbox: { allowedRoots: ['/srv/../etc'] } } } }");
    assert_eq!(key, "agents.defaults.sandbox.allowedRoots[0]");
    let (_, line, _, key, message) =
        check("{\n agents: { defaults: {\n sandbox: { bwrapPath: 'bwrap' } } } }");
    assert_eq!(
        (line, key.as_str()),
        (3, "agents.defaults.sandbox.bwrapPath")
    );
    assert!(message.contains("not an absolute path"), "{message}");
    let (kind, _, _, key, _) =
        check("{ agents: { defaults: { sandbox: { isolation: 'Home' } } } }");
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "agents.defaults.sandbox.isolation")
    );
}

/// OpenClaw's own sandbox keys load with a warning; a misspelt one of ours is an error.
#[test]
fn ignores_openclaw_sandbox_keys_but_refuses_misspelt_ones() {
    let loaded = load_str(
        "{ agents: { defaults: { sandbox: { mode: 'all', scope: 'agent', docker: {} } } },          session: { dmScope: 'main', mainKey: 'desk' } }",
        Path::new("gh.json5"),
    )
    .unwrap();
    assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
    let (kind, _, _, key, _) = check("{ agents: { defaults: { sandbox: { isolaton: 'home' } } } }");
    assert_eq!(
        (kind, key.as_str()),
        ("unknown", "agents.defaults.sandbox.isolaton")
    );
}

#[test]
fn refuses_two_sources_for_one_token() {
    let text = "{ channels: { telegram: { botToken: 'x', tokenEnv: 'TG' } } }";
    let (kind, _, _, key, message) = check(text);
    assert_eq!((kind, key.as_str()), ("invalid", "channels.telegram"));
    assert_eq!(
        message,
        "set only one of `botToken`, `tokenFile` and `tokenEnv`"
    );
}

#[test]
fn refuses_gateway_token_without_source_or_scope() {
    let (_, _, _, key, message) =
        check("{ gateway: { auth: { tokens: [ { name: 'ci', scopes: ['agent'] } ] } } }");
    assert_eq!(key, "gateway.auth.tokens[0]");
    assert!(message.contains("set one of"), "{message}");
    let (_, _, _, key, _) =
        check("{ gateway: { auth: { tokens: [ { name: 'ci', token: 't', scopes: [] } ] } } }");
    assert_eq!(key, "gateway.auth.tokens[0].scopes");
    let (kind, _, _, key, _) = check(
        "{ gateway: { auth: { tokens: [ { name: 'ci', token: 't', scopes: ['root'] } ] } } }",
    );
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "gateway.auth.tokens[0].scopes[0]")
    );
}

#[test]
fn error_message_names_file_line_column_and_key() {
    let err = load_str(
        "{ tools: { profile: 'everything' } }",
        Path::new("/etc/gatehouse.json5"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("/etc/gatehouse.json5:1:21: `tools.profile`: unknown variant `everything`"),
        "{err}"
    );
}

#[test]
fn never_prints_an_inline_secret_in_errors() {
    let text = "{ gateway: { auth: { tokens: [ { name: 'a', token: 'sekrit-value', tokenEnv: 'X', scopes: ['agent'] } ] } } }";
    let err = load_str(text, Path::new("gh.json5")).unwrap_err();
    assert!(!format!("{err} {err:?}").contains("sekrit-value"));
}

#[test]
fn refuses_sub_agent_lists_inside_an_agent() {
    let text =
        "{ agents: { list: [ { id: 'a', tools: { subagents: { tools: { deny: ['x'] } } } } ] } }";
    let (kind, _, _, key, message) = check(text);
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "agents.list[0].tools.subagents")
    );
    assert!(message.contains("tools.subagents"), "{message}");
}

#[test]
fn refuses_approval_cards_switched_on_without_approvers() {
    let text = "{ channels: { slack: { execApprovals: { enabled: true } } } }";
    let (kind, line, column, key, _) = check(text);
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "channels.slack.execApprovals.enabled")
    );
    assert_eq!((line, column), (1, 41));
    let auto = "{ channels: { slack: { execApprovals: { enabled: 'auto' } } } }";
    assert!(load_str(auto, Path::new("gh.json5")).is_ok());
}

#[test]
fn denies_a_discord_application_id_that_is_not_a_snowflake() {
    let text = "{ channels: { discord: { token: 'x', applicationId: 'my-app' } } }";
    let (kind, _, _, key, message) = check(text);
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "channels.discord.applicationId")
    );
    assert!(
        message.contains("\"my-app\" is not a Discord id"),
        "{message}"
    );
}

#[test]
fn denies_a_discord_guild_id_that_is_not_a_snowflake() {
    let text = "{ channels: { discord: { token: 'x', guildIds: ['42', '0'] } } }";
    let (kind, _, _, key, message) = check(text);
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "channels.discord.guildIds[1]")
    );
    assert!(
        message.contains("\"0\" is not a Discord guild id"),
        "{message}"
    );
}

#[test]
fn refuses_a_zero_gateway_limit_at_its_key() {
    let text = "{ gateway: { limits: {\n  maxFrameBytes: 4096,\n  maxPendingPerAgent: 0,\n} } }";
    let (kind, line, column, key, message) = check(text);
    assert_eq!(kind, "invalid");
    assert_eq!(key, "gateway.limits.maxPendingPerAgent");
    assert_eq!((line, column), (3, 3));
    assert_eq!(message, "must be above zero");
}

#[test]
fn refuses_a_history_of_zero_days() {
    let text = "{ gateway: { limits: { historyDays: 0 } } }";
    let (kind, _, _, key, message) = check(text);
    assert_eq!(
        (kind, key.as_str(), message.as_str()),
        (
            "invalid",
            "gateway.limits.historyDays",
            "must be above zero"
        )
    );
}

#[test]
fn refuses_a_default_run_timeout_above_the_maximum() {
    let text = "{ gateway: { limits: {\n  runTimeoutMs: 60000, maxRunTimeoutMs: 1000,\n} } }";
    let (kind, line, _, key, message) = check(text);
    assert_eq!(
        (kind, key.as_str(), line),
        ("invalid", "gateway.limits.runTimeoutMs", 2)
    );
    assert!(message.contains("maxRunTimeoutMs"), "{message}");
}

/// Operator walkthrough: with only one of the two keys written, the other's default was never
/// compared, so a run timeout of two hours loaded (and was cut to the one-hour maximum), and a
/// maximum of one second silently cut every run naming no timeout to one second.
#[test]
fn refuses_run_timeouts_that_conflict_with_the_other_keys_default() {
    let cases = [
        (
            "runTimeoutMs: 7200000",
            "runTimeoutMs",
            "7200000 ms is above `maxRunTimeoutMs` (3600000 ms, its default); raise \
             `maxRunTimeoutMs` too",
        ),
        (
            "maxRunTimeoutMs: 1000",
            "maxRunTimeoutMs",
            "1000 ms is below `runTimeoutMs` (60000 ms, its default), so every run naming no \
             timeout would be cut to 1000 ms; lower `runTimeoutMs` too",
        ),
    ];
    for (written, key, expected) in cases {
        let text = format!("{{ gateway: {{ limits: {{\n  {written},\n}} }} }}");
        let refused = check(&text);
        let expected = (
            "invalid",
            2,
            3,
            format!("gateway.limits.{key}"),
            expected.to_owned(),
        );
        assert_eq!(refused, expected, "{written}");
    }
}

#[test]
fn allows_run_timeouts_within_the_other_keys_default() {
    for text in [
        "{ gateway: { limits: { runTimeoutMs: 3600000 } } }",
        "{ gateway: { limits: { maxRunTimeoutMs: 60000 } } }",
        "{ gateway: { limits: { runTimeoutMs: 1000, maxRunTimeoutMs: 1000 } } }",
    ] {
        assert!(load_str(text, Path::new("gh.json5")).is_ok(), "{text}");
    }
}

/// Operator walkthrough: a host name in `gateway.listen` loaded, and only `serve` refused it,
/// without the file, line and column every other config error carries.
#[test]
fn refuses_a_listen_address_that_is_not_an_ip_address_and_port() {
    for value in ["'localhost:18790'", "'127.0.0.1'", "'::1:80'"] {
        let text = format!("{{ gateway: {{\n  listen: {value},\n}} }}");
        let (kind, line, column, key, message) = check(&text);
        assert_eq!(
            (kind, key.as_str(), line, column),
            ("invalid", "gateway.listen", 2, 3),
            "{value}"
        );
        assert!(
            message.ends_with(
                "is not an IP address and port like 127.0.0.1:18790 or [::1]:18790 (host \
                 names are not resolved)"
            ),
            "{message}"
        );
    }
    for value in ["'127.0.0.1:18790'", "'[::1]:18790'", "'0.0.0.0:0'"] {
        let text = format!("{{ gateway: {{ listen: {value} }} }}");
        assert!(load_str(&text, Path::new("gh.json5")).is_ok(), "{value}");
    }
}

#[test]
fn refuses_a_gateway_limit_of_the_wrong_type_with_its_position() {
    let text = "{ gateway: { limits: { rateLimit: { burst: 'many' } } } }";
    let (kind, line, _, key, _) = check(text);
    assert_eq!((kind, line), ("invalid", 1));
    assert_eq!(key, "gateway.limits.rateLimit.burst");
}

#[test]
fn reads_chat_delivery_and_retry_and_refuses_what_would_stop_delivery() {
    let loaded = load_str(
        "{ channels: { telegram: { botToken: '1:x',
           delivery: { chatRate: '1/s', groupRate: '20/min', botRate: 'off', digestAfter: 8,
                       maxConnections: 4 },
           retry: { attempts: 3, minDelayMs: 400, maxDelayMs: 30000, jitter: 0.1 } } } }",
        Path::new("gh.json5"),
    )
    .unwrap();
    let telegram = loaded.config.channels.telegram.unwrap();
    let delivery = telegram.delivery.unwrap();
    assert_eq!(
        delivery.group_rate,
        Some(gatehouse_config::model::Rate::Limit {
            calls: 20,
            per_ms: 60_000
        })
    );
    assert_eq!(delivery.bot_rate, Some(gatehouse_config::model::Rate::Off));
    assert_eq!(delivery.max_connections, Some(4));
    let jitter = telegram.retry.unwrap().jitter.unwrap().value();
    assert!((jitter - 0.1).abs() < 1e-9);

    let text = "{\n  channels: { discord: { botToken: 'x',\n    delivery: { chatRate: '5 per s' },\n  } },\n}\n";
    let (kind, line, column, key, message) = check(text);
    assert_eq!(
        (kind, key.as_str()),
        ("invalid", "channels.discord.delivery.chatRate")
    );
    assert_eq!((line, column), (3, 27));
    assert!(message.contains("is not a rate"), "{message}");

    let text = "{ channels: { slack: { botToken: 'xoxb-1', delivery: { digestAfter: 0 },
       retry: { minDelayMs: 5000, maxDelayMs: 100, jitter: 1.5 } } } }";
    let all: Vec<String> = problems(text)
        .into_iter()
        .map(|p| format!("{}: {}", p.key.unwrap_or_default(), p.message))
        .collect();
    assert!(
        all.iter()
            .any(|p| p.starts_with("channels.slack.retry.jitter: must be from 0 to 1")),
        "{all:?}"
    );
}

#[test]
fn refuses_zero_counts_and_a_first_delay_above_the_cap() {
    let text = "{ channels: { slack: { botToken: 'xoxb-1', delivery: { digestAfter: 0, maxConnections: 0 },
       retry: { attempts: 0, minDelayMs: 5000, maxDelayMs: 100 } } } }";
    let all: Vec<String> = problems(text)
        .into_iter()
        .map(|p| format!("{}: {}", p.key.unwrap_or_default(), p.message))
        .collect();
    assert_eq!(
        all,
        [
            "channels.slack.delivery.digestAfter: must be at least 1",
            "channels.slack.delivery.maxConnections: must be at least 1",
            "channels.slack.retry.attempts: must be at least 1",
            "channels.slack.retry.minDelayMs: must not exceed maxDelayMs (100)",
        ]
    );
}
