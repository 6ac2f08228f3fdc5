use crate::{Files, gatehouse, gatehouse_with_env};

/// A config with eight problems of every kind: misspelt keys, a wrong type, bad enum values in
/// `agents.list[1]`, a broken rule, and a secret on a line that is shown.
const BAD: &str = "// Gatehouse config with mistakes
{
  tools: {
    exec: { securty: 'deny', ask: 'sometimes' },
    deny: 'exec',
  },
  agents: { list: [
    { id: 'main' },
    { id: 'ops', tools: { profile: 'everything' }, sandbox: { mode: 'some' } },
  ] },
  gateway: { auth: { tokens: [
    { name: 'ci', token: 'ci-secret-0123456789', tokenEnv: 'CI_TOKEN', scopes: ['agent'] },
  ] } },
  channels: {
    slack: { botToken: 'xoxb-1', apptoken: 'xapp-1', execApprovals: { enabled: true } },
  },
}
";

/// What every command prints for [`BAD`] at `{path}`: each problem with its source line and a
/// caret, in file order, the secret masked.
const BAD_REPORT: &str = "gatehouse: {path}:4:13: `tools.exec.securty`: unknown key
   |
4  |     exec: { securty: 'deny', ask: 'sometimes' },
   |             ^^^^^^^ did you mean `security`?

{path}:4:35: `tools.exec.ask`: unknown ask value \"sometimes\" (expected one of: off, on-miss, \
always)
   |
4  |     exec: { securty: 'deny', ask: 'sometimes' },
   |                                   ^^^^^^^^^^^

{path}:5:11: `tools.deny`: wrong type: expected a list `[ … ]`, found a string
   |
5  |     deny: 'exec',
   |           ^^^^^^

{path}:9:36: `agents.list[1].tools.profile`: unknown variant `everything`, expected one of \
`minimal`, `coding`, `messaging`, `full`
   |
9  |     { id: 'ops', tools: { profile: 'everything' }, sandbox: { mode: 'some' } },
   |                                    ^^^^^^^^^^^^

{path}:9:69: `agents.list[1].sandbox.mode`: unknown variant `some`, expected one of `off`, \
`non-main`, `all`
   |
9  |     { id: 'ops', tools: { profile: 'everything' }, sandbox: { mode: 'some' } },
   |                                                                     ^^^^^^

{path}:12:5: `gateway.auth.tokens[0]`: set only one of `token`, `tokenFile` and `tokenEnv`
   |
12 |     { name: 'ci', token: '********************', tokenEnv: 'CI_TOKEN', scopes: ['agent'] },
   |     ^

{path}:15:34: `channels.slack.apptoken`: unknown key
   |
15 |     slack: { botToken: '******', apptoken: '******', execApprovals: { enabled: true } },
   |                                  ^^^^^^^^ did you mean `appToken`?

{path}:15:71: `channels.slack.execApprovals.enabled`: `enabled: true` needs at least one entry \
in `approvers` (or use \"auto\")
   |
15 |     slack: { botToken: '******', apptoken: '******', execApprovals: { enabled: true } },
   |                                                                       ^^^^^^^

8 problems in {path}
";

/// Issue 35: every problem of a config is reported at once, each with file, line, column, key
/// path, source line and caret, misspelt keys with the key meant, and the same by every
/// command that loads the config.
#[test]
fn every_problem_of_a_config_is_reported_at_once_by_every_command() {
    let files = Files::new();
    let config = files.write("bad.json5", BAD);
    let data = files.join("data");
    let data = data.to_str().unwrap();
    let expected = BAD_REPORT.replace("{path}", &config);
    for args in [
        &["check", "--config", &config, "ls"][..],
        &["tools", "--config", &config][..],
        &["doctor", "--config", &config, "--data-dir", data][..],
        &[
            "serve",
            "--config",
            &config,
            "--data-dir",
            data,
            "--listen",
            "127.0.0.1:0",
        ][..],
    ] {
        let run = gatehouse(args, "");
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(run.stderr, expected, "{args:?}");
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert!(
        !files.join("data").exists(),
        "a command wrote its data directory"
    );
}

#[test]
fn unknown_key_exits_2_naming_file_line_column_and_key() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{\n  tools: {\n    exec: { securty: 'deny' },\n  },\n}\n",
    );
    for subcommand in [
        &["check", "--config", &config, "ls"][..],
        &["tools", "--config", &config][..],
    ] {
        let run = gatehouse(subcommand, "");
        assert_eq!(run.code, 2);
        assert_eq!(
            run.stderr,
            format!(
                "gatehouse: {config}:3:13: `tools.exec.securty`: unknown key
  |
3 |     exec: {{ securty: 'deny' }},
  |             ^^^^^^^ did you mean `security`?
"
            )
        );
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn syntax_error_exits_2_with_line_and_column() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{\n  tools: { profile: 'coding' \n  agents: {},\n}\n",
    );
    let run = gatehouse(&["check", "--config", &config, "ls"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(&format!("{config}:3:3: syntax error")),
        "{}",
        run.stderr
    );
}

#[test]
fn invalid_value_exits_2_naming_the_key() {
    let files = Files::new();
    let config = files.write("gh.json5", "{ tools: { exec: { ask: 'sometimes' } } }");
    let run = gatehouse(&["check", "--config", &config, "ls"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(":1:25: `tools.exec.ask`: unknown ask value \"sometimes\""),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_config_file_exits_2() {
    let files = Files::new();
    let missing = files.join("nope.json5");
    let run = gatehouse(&["tools", "--config", missing.to_str().unwrap()], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot read config file"),
        "{}",
        run.stderr
    );
}

#[test]
fn ignored_openclaw_sections_are_warnings_on_stderr_only() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{\n  models: { providers: {} },\n  tools: { exec: { security: 'deny' } },\n}",
    );
    let run = gatehouse(&["check", "--config", &config, "--json", "ls"], "");
    assert_eq!(run.code, 20);
    assert!(
        run.stderr
            .contains(&format!("warning: {config}:2:3: `models`")),
        "{}",
        run.stderr
    );
    assert!(serde_json::from_str::<serde_json::Value>(run.stdout.trim()).is_ok());
}

#[test]
fn reads_the_config_named_by_gatehouse_config() {
    let files = Files::new();
    let config = files.write("gh.json5", "{ tools: { exec: { security: 'deny' } } }");
    let run = gatehouse_with_env(&["check", "ls"], "", &[("GATEHOUSE_CONFIG", &config)]);
    assert_eq!(run.code, 20, "{}{}", run.stdout, run.stderr);
    let run = gatehouse(&["check", "--config", "/dev/null/nope", "ls"], "");
    assert_eq!(run.code, 2);
}
