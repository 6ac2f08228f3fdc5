use crate::{Files, gatehouse, gatehouse_with_env};

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
            run.stderr.trim(),
            format!("gatehouse: {config}:3:13: unknown key `tools.exec.securty`")
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
