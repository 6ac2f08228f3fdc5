//! Issue 35: every problem in a config file in one load, each placed at its written line,
//! column and key path, in file order, and none that the loader made up while collecting them.

use std::path::Path;

use gatehouse_config::DiagnosticKind::{Invalid, UnknownKey, UnsupportedKey};
use gatehouse_config::{DiagnosticKind, load_str};
use pretty_assertions::assert_eq;

use crate::errors::problems;

/// `(kind, key, line, column, message, suggestion)` of each problem of `text`, in order.
fn found(text: &str) -> Vec<(DiagnosticKind, String, usize, usize, String, Option<String>)> {
    problems(text)
        .into_iter()
        .map(|found| {
            let key = found.key.unwrap_or_default();
            (
                found.kind,
                key,
                found.line,
                found.column,
                found.message,
                found.suggestion,
            )
        })
        .collect()
}

fn expect(
    kind: DiagnosticKind,
    key: &str,
    (line, column): (usize, usize),
    message: &str,
    suggestion: Option<&str>,
) -> (DiagnosticKind, String, usize, usize, String, Option<String>) {
    let suggestion = suggestion.map(str::to_owned);
    (
        kind,
        key.to_owned(),
        line,
        column,
        message.to_owned(),
        suggestion,
    )
}

#[test]
fn reports_unknown_keys_wrong_types_bad_values_and_broken_rules_in_one_load() {
    let text = "{
  tool: {},
  tools: {
    exec: { securty: 'deny', ask: 'sometimes', mode: 'auto' },
    deny: 'exec',
  },
  agents: { defaults: { subagents: { maxSpawnDepth: 9 } } },
  gateway: { limits: { burst: 5, maxFrameBytes: -1 } },
}
";
    assert_eq!(
        found(text),
        [
            expect(UnknownKey, "tool", (2, 3), "unknown key", Some("tools")),
            expect(
                UnknownKey,
                "tools.exec.securty",
                (4, 13),
                "unknown key",
                Some("security")
            ),
            expect(
                Invalid,
                "tools.exec.ask",
                (4, 35),
                "unknown ask value \"sometimes\" (expected one of: off, on-miss, always)",
                None
            ),
            expect(
                UnsupportedKey,
                "tools.exec.mode",
                (4, 48),
                "unsupported key (OpenClaw's shorthand is not supported; set \
                 `tools.exec.security` and `tools.exec.ask`)",
                None
            ),
            expect(
                Invalid,
                "tools.deny",
                (5, 11),
                "wrong type: expected a list `[ … ]`, found a string",
                None
            ),
            expect(
                Invalid,
                "agents.defaults.subagents.maxSpawnDepth",
                (7, 38),
                "must be between 1 and 5, got 9",
                None
            ),
            expect(
                UnknownKey,
                "gateway.limits.burst",
                (8, 24),
                "unknown key",
                None
            ),
            expect(
                Invalid,
                "gateway.limits.maxFrameBytes",
                (8, 49),
                "invalid value -1: expected a whole number, 0 or more",
                None
            ),
        ]
    );
}

#[test]
fn places_problems_in_agent_entries_and_channels_at_their_written_index() {
    let text = "{
  agents: { list: [
    { id: 7 },
    { id: 'main', tols: { deny: ['exec'] } },
    { id: 'ops', tools: { exec: { security: 'ful' } }, sandbox: { mode: 'some' } },
    { id: 'main' },
  ] },
  channels: {
    discord: { botToken: 'x', guildIds: ['1', true, '2', 'nope'] },
    telegram: { botTokn: 'x', execApprovals: { target: 'room', approvers: [1, {}] } },
  },
}
";
    assert_eq!(
        found(text),
        [
            expect(
                Invalid,
                "agents.list[0].id",
                (3, 11),
                "wrong type: expected a string, found a whole number",
                None
            ),
            expect(
                UnknownKey,
                "agents.list[1].tols",
                (4, 19),
                "unknown key",
                Some("tools")
            ),
            expect(
                Invalid,
                "agents.list[2].tools.exec.security",
                (5, 45),
                "unknown security value \"ful\" (expected one of: deny, allowlist, full)",
                None
            ),
            expect(
                Invalid,
                "agents.list[2].sandbox.mode",
                (5, 73),
                "unknown variant `some`, expected one of `off`, `non-main`, `all`",
                None
            ),
            expect(
                Invalid,
                "agents.list[3].id",
                (6, 7),
                "duplicate agent id \"main\"",
                None
            ),
            expect(
                Invalid,
                "channels.discord.guildIds[1]",
                (9, 47),
                "wrong type: expected a string or an integer id, found `true`",
                None
            ),
            expect(
                Invalid,
                "channels.discord.guildIds[3]",
                (9, 58),
                "\"nope\" is not a Discord guild id",
                None
            ),
            expect(
                UnknownKey,
                "channels.telegram.botTokn",
                (10, 17),
                "unknown key",
                Some("botToken")
            ),
            expect(
                Invalid,
                "channels.telegram.execApprovals.target",
                (10, 56),
                "unknown variant `room`, expected one of `dm`, `channel`, `both`",
                None
            ),
            expect(
                Invalid,
                "channels.telegram.execApprovals.approvers[1]",
                (10, 79),
                "wrong type: expected a string or an integer id, found an object",
                None
            ),
        ]
    );
}

/// Setting a refused value aside must not itself produce a problem: each case has one mistake,
/// and removing it would break a rule or leave a struct without a field it had.
#[test]
fn never_reports_an_echo_of_a_value_set_aside() {
    let cases = [
        (
            "{ agents: { list: [ { id: 5, default: true } ] } }",
            "agents.list[0].id",
        ),
        (
            "{ gateway: { limits: { maxRunTimeoutMs: 'long', runTimeoutMs: 5000000 } } }",
            "gateway.limits.maxRunTimeoutMs",
        ),
        (
            "{ gateway: { auth: { tokens: [ { name: 'ci', token: 5, scopes: ['agent'] } ] } } }",
            "gateway.auth.tokens[0].token",
        ),
        (
            "{ gateway: { auth: { tokens: [ { name: 'ci', token: 'x', scopes: 'agent' } ] } } }",
            "gateway.auth.tokens[0].scopes",
        ),
        (
            "{ channels: { slack: { execApprovals: { enabled: true, approvers: 'U1' } } } }",
            "channels.slack.execApprovals.approvers",
        ),
        // The list left empty by removing its one element is seen by its neighbours.
        (
            "{ channels: { slack: { execApprovals: { enabled: true, approvers: [[]] } } } }",
            "channels.slack.execApprovals.approvers[0]",
        ),
        (
            "{ gateway: { auth: { tokens: [ { name: 'ci', token: 'x', scopes: [5] } ] } } }",
            "gateway.auth.tokens[0].scopes[0]",
        ),
        (
            "{ approvals: { exec: { targets: [ { channel: 5, to: '-100' } ] } } }",
            "approvals.exec.targets[0].channel",
        ),
    ];
    for (text, key) in cases {
        let keys: Vec<String> = problems(text)
            .into_iter()
            .map(|found| found.key.unwrap_or_default())
            .collect();
        assert_eq!(keys, [key], "{text}");
    }
}

/// A rule broken away from the value set aside is still reported, at the index written.
#[test]
fn reports_rules_broken_elsewhere_after_a_value_is_set_aside() {
    let text = "{ agents: { list: [ { id: 5 }, { id: 'a' }, { id: 'a' } ] } }";
    let keys: Vec<String> = problems(text)
        .into_iter()
        .map(|found| found.key.unwrap_or_default())
        .collect();
    assert_eq!(keys, ["agents.list[0].id", "agents.list[2].id"]);
}

#[test]
fn still_reports_a_required_field_never_written() {
    let text = "{ agents: { list: [ { default: true }, { id: 'a', default: 'yes' } ] } }";
    assert_eq!(
        found(text),
        [
            expect(
                Invalid,
                "agents.list[0]",
                (1, 21),
                "missing field `id`",
                None
            ),
            expect(
                Invalid,
                "agents.list[1].default",
                (1, 60),
                "wrong type: expected true or false, found a string",
                None
            ),
        ]
    );
}

/// Columns count characters, as json5 does: a tab is one column, so is a non-ASCII
/// character (`ë` is two bytes, `日` three); a CRLF line end is one line end.
#[test]
fn counts_columns_in_characters_across_crlf_tabs_and_non_ascii() {
    let crlf = "{\r\n  tools: {\r\n    exec: { securty: 'x' },\r\n  },\r\n}\r\n";
    let tabs = "{\n\ttools: {\n\t\texec: { ask: 'nope' },\n\t},\n}\n";
    let wide = "{ agents: { list: [ { id: 'zoë-日本', tols: 1 } ] } }";
    let lone_cr = "{\r  tools: {\r    deny: 5 } }";
    for (text, line, column, source) in [
        (crlf, 3, 13, "    exec: { securty: 'x' },"),
        (tabs, 3, 16, "\t\texec: { ask: 'nope' },"),
        (wide, 1, 37, wide),
        (lone_cr, 3, 11, "    deny: 5 } }"),
    ] {
        let first = problems(text).remove(0);
        assert_eq!((first.line, first.column), (line, column), "{text:?}");
        assert_eq!(first.source_line(), Some(source), "{text:?}");
    }
}

#[test]
fn reports_a_syntax_error_alone_with_its_position() {
    let text = "{\n  tools: { profile: 'coding' }\n  agents: { list: [] },\n  tool: 5,\n}\n";
    assert_eq!(
        found(text),
        [(
            DiagnosticKind::Syntax,
            String::new(),
            3,
            3,
            "expected comma".to_owned(),
            None
        )]
    );
}

/// A file this broken is fixed from the top: the typed pass stops after 100 refusals rather
/// than re-reading the document once per bad value.
#[test]
fn stops_collecting_after_a_hundred_refused_values() {
    let values = vec!["1"; 300].join(", ");
    let text = format!("{{ tools: {{ deny: [{values}] }} }}");
    let found = problems(&text);
    assert_eq!(found.len(), 100);
    assert_eq!(found[0].key.as_deref(), Some("tools.deny[0]"));
    assert_eq!(found[99].key.as_deref(), Some("tools.deny[99]"));
}

#[test]
fn suggests_a_used_key_for_an_ignored_one_close_to_it() {
    let text = "{\n  channels: { telegarm: { botToken: 'x' }, whatsapp: {} },\n}";
    let loaded = load_str(text, Path::new("gh.json5")).unwrap();
    let warnings: Vec<_> = loaded
        .warnings
        .iter()
        .map(|warning| (warning.key.as_str(), warning.suggestion.as_deref()))
        .collect();
    assert_eq!(
        warnings,
        [
            ("channels.telegarm", Some("telegram")),
            ("channels.whatsapp", None)
        ]
    );
    assert_eq!(
        loaded.warnings[0].to_string(),
        "2:15: `channels.telegarm`: OpenClaw setting not used by Gatehouse; ignored; did you \
         mean `telegram`?"
    );
}

/// The parser recurses once per level and has no limit of its own: 100,000 nested lists
/// overflowed the stack (an abort, not an error). Nesting is refused past 128 levels, at the
/// bracket that goes too deep; 128 levels still parse, even on a test thread's small stack.
#[test]
fn refuses_nesting_deeper_than_128_levels_instead_of_overflowing_the_stack() {
    let nested = |levels: usize| {
        format!(
            "{{\n  models: {}{} }}",
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    let loaded = load_str(&nested(128), Path::new("gh.json5")).unwrap();
    assert_eq!(loaded.warnings[0].key, "models");
    for levels in [129, 100_000] {
        assert_eq!(
            found(&nested(levels)),
            [(
                DiagnosticKind::Syntax,
                String::new(),
                2,
                138,
                "nested deeper than 128 levels".to_owned(),
                None
            )],
            "{levels}"
        );
    }
}

/// A `skillBins` entry in its object form is read key by key: a misspelt key inside it is
/// reported at its own path, as everywhere else, not as a refusal of the whole entry.
#[test]
fn reports_a_misspelt_key_inside_a_skill_bin_entry_at_its_path() {
    let text = "{ tools: { exec: { skillBins: [\n  { name: 'gh', resolvedPath: '/opt/gh', resolvedPth: '/x' } ] } } }";
    let keys: Vec<String> = found(text).into_iter().map(|problem| problem.1).collect();
    assert_eq!(keys, ["tools.exec.skillBins[0].resolvedPth"]);
}
