//! `gatehouse doctor` against configs `gatehouse serve` refuses or runs with a risk: doctor must
//! report what serve would stop on (exit 2) and warn about the rest (exit 1), without a server.
//!
//! Where serve refuses a config, the test runs serve too, so the two cannot drift apart unseen.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use crate::gateway::config;
use crate::{Files, Run};

/// Runs `gatehouse doctor --data-dir DIR` plus `args` with `env`. The caller's config, server
/// and token variables are never inherited, so a developer's setting cannot change a result.
fn doctor(data_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    run_binary(
        Command::new(env!("CARGO_BIN_EXE_gatehouse"))
            .arg("doctor")
            .arg("--data-dir")
            .arg(data_dir)
            .args(args),
        env,
    )
}

/// Runs `gatehouse serve --data-dir DIR --config FILE` on a config it must refuse at start,
/// before it serves anything.
fn serve_refusing(data_dir: &Path, config: &str, env: &[(&str, &str)]) -> Run {
    let run = run_binary(
        Command::new(env!("CARGO_BIN_EXE_gatehouse"))
            .args(["serve", "--data-dir"])
            .arg(data_dir)
            // A port of its own: serve binds before the checks these tests are after, and
            // tests run in parallel.
            .args(["--listen", "127.0.0.1:0", "--config", config]),
        env,
    );
    assert_eq!(run.code, 2, "serve did not refuse: {}", run.stderr);
    run
}

/// Runs `command` with `env` and none of the variables that would pick a config or a server.
fn run_binary(command: &mut Command, env: &[(&str, &str)]) -> Run {
    let output = command
        .env_remove("GATEHOUSE_CONFIG")
        .env_remove("GATEHOUSE_TOKEN")
        .env_remove("GATEHOUSE_URL")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// The error serve stopped with, as it printed it after `gatehouse: `.
fn serve_error(run: &Run) -> &str {
    run.stderr
        .lines()
        .find_map(|line| line.strip_prefix("gatehouse: "))
        .unwrap_or_else(|| panic!("no error from serve: {}", run.stderr))
}

/// Runs `serve` (data directory `serve_data`) and `doctor` (`doctor_data`) on the config at
/// `config`: serve must refuse it with an error mentioning `expected`, and doctor must report that
/// very error and exit 2, so the two cannot drift apart. Doctor's run, for further checks.
fn doctor_reports_the_refusal(
    serve_data: &Path,
    doctor_data: &Path,
    config: &str,
    expected: &str,
) -> Run {
    let served = serve_refusing(serve_data, config, &[]);
    let refused = serve_error(&served);
    assert!(refused.contains(expected), "{refused}");
    let run = doctor(doctor_data, &["--config", config], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("\nerror: {refused}\n")),
        "{}",
        run.stdout
    );
    run
}

/// The test server's config with `gateway_extra` inside `gateway` and `extra` at the top.
fn config_with(gateway_extra: &str, extra: &str) -> String {
    config(extra).replace("gateway: {", &format!("gateway: {{ {gateway_extra}"))
}

/// Writes `name` holding `text` with `mode`.
fn secret_file(files: &Files, name: &str, text: &str, mode: u32) -> String {
    let path = files.write(name, text);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[test]
fn reports_config_errors_with_line_and_column() {
    let files = Files::new();
    let path = files.write(
        "bad.json5",
        "{\n  tools: { exec: { security: 'sometimes' } },\n}\n",
    );
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.starts_with(&format!("gatehouse: {path}:2:")),
        "{}",
        run.stderr
    );
}

#[test]
fn warns_about_loose_secrets_and_open_listen() {
    let files = Files::new();
    let token_file = secret_file(
        &files,
        "agent.token",
        "agent-secret-from-a-file-0123",
        0o644,
    );
    let text = config_with(
        "listen: '0.0.0.0:18790',",
        "tools: { exec: { askFallback: 'full' } },\n  agents: { list: [{ id: 'ops' }] },",
    )
    .replace(
        "{ name: 'agent', token: 'agent-token-0123456789abcdef', scopes: ['agent'] }",
        &format!("{{ name: 'agent', tokenFile: '{token_file}', scopes: ['agent'] }}"),
    );
    let path = files.write("gatehouse.json5", &text);
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    let text = &run.stdout;
    assert_eq!(run.code, 1, "{text}");
    assert!(text.contains("agent main: security allowlist,"), "{text}");
    assert!(text.contains("agent ops:"), "{text}");
    assert!(
        text.contains(&format!(
            "warning: `gateway.auth.tokens[2]`: secret file {token_file} is readable by group or \
             others (mode 0644); run chmod 600"
        )),
        "{text}"
    );
    assert!(text.contains("without TLS"), "{text}");
}

/// Operator walkthrough: `gateway.listen: "localhost:18803"` passed doctor (the parse error was
/// dropped, and with it the non-loopback check) while serve refused it; then doctor printed
/// `config …: ok` before the error, which came without file, line and column. It is a config
/// error now, placed like every other one, for serve and doctor alike.
#[test]
fn reports_a_listen_address_serve_cannot_bind_as_a_config_error() {
    let files = Files::new();
    let path = files.write(
        "gatehouse.json5",
        &config_with("listen: 'localhost:18803',", ""),
    );
    let served = serve_refusing(&files.join("serve-data"), &path, &[]);
    let expected = format!(
        "gatehouse: {path}:2:14: `gateway.listen`: \"localhost:18803\" is not an IP address and \
         port like 127.0.0.1:18790 or [::1]:18790 (host names are not resolved)\n  |\n2 |   \
         gateway: {{ listen: 'localhost:18803',  auth: {{ tokens: [\n  |              ^^^^^^\n"
    );
    assert_eq!(served.stderr, expected);
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.stderr, expected);
    assert_eq!(run.stdout, "");
}

/// Operator walkthrough: a token whose secret is too short passed doctor; serve refused it. Doctor
/// must name every such token, not only the first.
#[test]
fn reports_every_token_serve_refuses() {
    let files = Files::new();
    let with_tokens = |extra: &str| {
        config("").replace(
            "{ name: 'agent', token: 'agent-token-0123456789abcdef', scopes: ['agent'] }",
            &format!(
                "{{ name: 'agent', tokenEnv: 'GATEHOUSE_DOCTOR_TEST_AGENT', scopes: ['agent'] }},
                 {{ name: 'bot', token: 'tiny', scopes: ['agent'] }}{extra}"
            ),
        )
    };
    let unset = ",\n{ name: 'ci', tokenEnv: 'GATEHOUSE_DOCTOR_TEST_UNSET', scopes: ['agent'] }";
    let path = files.write("gatehouse.json5", &with_tokens(unset));
    let env = [("GATEHOUSE_DOCTOR_TEST_AGENT", "short")];
    let served = serve_refusing(&files.join("serve-data"), &path, &env);
    assert!(
        serve_error(&served).contains("is not set"),
        "{}",
        served.stderr
    );
    let run = doctor(&files.join("data"), &["--config", &path], &env);
    assert_eq!(run.code, 2, "{}", run.stdout);
    for error in [
        "error: invalid gateway settings: token `agent` is shorter than 16 characters\n",
        "error: invalid gateway settings: token `bot` is shorter than 16 characters\n",
        "error: `gateway.auth.tokens[4]`: environment variable GATEHOUSE_DOCTOR_TEST_UNSET is \
         not set\n",
    ] {
        assert!(run.stdout.contains(error), "{error}\n{}", run.stdout);
    }
    // With every secret readable, serve gets as far as the gateway's own check of the tokens.
    let resolvable = files.write("resolvable.json5", &with_tokens(""));
    let served = serve_refusing(&files.join("serve-data-2"), &resolvable, &env);
    assert_eq!(
        serve_error(&served),
        "invalid gateway settings: token `agent` is shorter than 16 characters"
    );
}

/// Operator walkthrough: an unset channel `tokenEnv` passed doctor; serve refused it. Every
/// unreadable secret is named, and a channel switched off is not read, as serve does not read it.
#[test]
fn reports_every_channel_secret_serve_cannot_read() {
    let files = Files::new();
    let path = files.write(
        "gatehouse.json5",
        &config(
            "channels: {
               discord: { tokenEnv: 'GATEHOUSE_DOCTOR_TEST_DISCORD', applicationId: '77' },
               slack: { tokenEnv: 'GATEHOUSE_DOCTOR_TEST_SLACK_BOT',
                        appTokenFile: '/nonexistent/gatehouse-doctor-app.token' },
               telegram: { enabled: false, tokenEnv: 'GATEHOUSE_DOCTOR_TEST_TELEGRAM' },
             },",
        ),
    );
    let served = serve_refusing(&files.join("serve-data"), &path, &[]);
    assert_eq!(
        serve_error(&served),
        "`channels.discord.tokenEnv`: environment variable GATEHOUSE_DOCTOR_TEST_DISCORD is not set"
    );
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("error: "))
        .collect();
    assert_eq!(
        errors,
        [
            "error: `channels.discord.tokenEnv`: environment variable \
             GATEHOUSE_DOCTOR_TEST_DISCORD is not set",
            "error: `channels.slack.tokenEnv`: environment variable \
             GATEHOUSE_DOCTOR_TEST_SLACK_BOT is not set",
            "error: `channels.slack.appTokenFile`: cannot read secret file \
             /nonexistent/gatehouse-doctor-app.token: No such file or directory (os error 2)",
        ],
        "{}",
        run.stdout
    );
}

/// A channel whose secrets all resolve is still built as serve builds it, so a key serve
/// requires is reported too.
#[test]
fn reports_a_channel_setting_serve_refuses() {
    let files = Files::new();
    let path = files.write(
        "gatehouse.json5",
        &config("channels: { discord: { botToken: 'MTEw.tok' } },"),
    );
    doctor_reports_the_refusal(
        &files.join("serve-data"),
        &files.join("data"),
        &path,
        "applicationId",
    );
}

/// Operator walkthrough: chat settings `serve` refused (an empty session filter, a target on no
/// configured channel, an approver written as a name) passed doctor, and `serve` refused them
/// only after writing its data directory, with no line and column.
#[test]
fn reports_chat_settings_serve_refuses_with_line_and_column() {
    let cases = [
        (
            "approvals: { exec: { enabled: true, sessionFilter: [''] } },",
            "`approvals.exec.sessionFilter`: ",
        ),
        (
            "approvals: { exec: { enabled: true, targets: [{ channel: 'whatsapp', to: '1' }] } },",
            "`approvals.exec.targets[0].channel`: \"whatsapp\" is not a configured chat channel",
        ),
        (
            "channels: { telegram: { botToken: '1:x', execApprovals: { approvers: ['@alice'] } } },",
            "`channels.telegram.execApprovals.approvers[0]`: \"@alice\": Telegram approvers are \
             numeric user ids",
        ),
    ];
    for (extra, expected) in cases {
        let files = Files::new();
        let path = files.write("gatehouse.json5", &config(extra));
        let serve_data = files.join("serve-data");
        let run = doctor_reports_the_refusal(&serve_data, &files.join("data"), &path, expected);
        assert!(
            run.stdout.contains(&format!("error: {path}:")),
            "{}",
            run.stdout
        );
        assert!(!serve_data.exists(), "serve wrote its data directory first");
    }
}

/// Operator walkthrough: a config with four chat problems took four more doctor runs to fix,
/// one refusal showing per run; Discord and Slack still showed only their first refused key.
#[test]
fn lists_every_chat_setting_and_channel_key_serve_refuses_in_one_run() {
    let files = Files::new();
    let path = files.write(
        "gatehouse.json5",
        &config(
            "channels: {
               telegram: { botToken: 'notatoken', webhookUrl: 'ftp://x/hook', webhookSecret: 'x',
                           execApprovals: { approvers: [4242] } },
               discord: { botToken: 'Bot a b', applicationId: '110',
                          apiUrl: 'http://127.0.0.1:9/api/v10',
                          execApprovals: { approvers: ['bob'] } },
               slack: { botToken: 'xoxp-1', appToken: 'xoxb-2' } },
             approvals: { exec: { enabled: true, targets: [{ channel: 'matrix', to: 'room' }] } },",
        ),
    );
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    for expected in [
        "`channels.discord.execApprovals.approvers[0]`",
        "`approvals.exec.targets[0].channel`",
        "invalid channels.telegram.botToken",
        "invalid channels.telegram.webhookSecret",
        "invalid channels.telegram.webhookUrl",
        "\nerror: `channels.discord` is not usable: invalid channels.discord.botToken: ",
        "\nerror: `channels.discord` is not usable: invalid channels.discord.apiUrl: ",
        "\nerror: `channels.slack` is not usable: invalid channels.slack.botToken: ",
        "\nerror: `channels.slack` is not usable: invalid channels.slack.appToken: ",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }
    let served = serve_refusing(&files.join("serve-data"), &path, &[]);
    assert!(
        served
            .stderr
            .contains("2 chat approval settings are refused"),
        "{}",
        served.stderr
    );
}

/// Operator walkthrough: serve refused a Discord token with a space, then, once it was fixed,
/// the API URL with a path; doctor listed the token only. Both now name every key the adapter
/// refuses, Slack's too.
#[test]
fn serve_and_doctor_name_every_discord_and_slack_key_refused() {
    let cases = [
        (
            "discord: { botToken: 'Bot a b', applicationId: '110',
                        apiUrl: 'http://127.0.0.1:9/api/v10' }",
            "`channels.discord` is not usable",
            [
                "invalid channels.discord.botToken: ",
                "invalid channels.discord.apiUrl: ",
            ],
        ),
        (
            "slack: { botToken: 'xoxp-1', appToken: 'xoxb-2' }",
            "`channels.slack` is not usable",
            [
                "invalid channels.slack.botToken: ",
                "invalid channels.slack.appToken: ",
            ],
        ),
    ];
    for (channel, unusable, keys) in cases {
        let files = Files::new();
        // A port of its own: serve binds before it builds the channels.
        let path = files.write(
            "gatehouse.json5",
            &config_with(
                "listen: '127.0.0.1:0',",
                &format!("channels: {{ {channel} }},"),
            ),
        );
        let served = serve_refusing(&files.join("serve-data"), &path, &[]);
        assert!(
            served
                .stderr
                .contains(&format!("gatehouse: {unusable}: 2 keys are refused:\n")),
            "{}",
            served.stderr
        );
        let run = doctor(&files.join("data"), &["--config", &path], &[]);
        assert_eq!(run.code, 2, "{}", run.stdout);
        for key in keys {
            assert!(
                served.stderr.contains(&format!("\n  {key}")),
                "{key}: {}",
                served.stderr
            );
            assert!(
                run.stdout.contains(&format!("\nerror: {unusable}: {key}")),
                "{key}: {}",
                run.stdout
            );
        }
    }
}

/// Operator walkthrough: a channel token file at 0644 was not warned about, and a gateway token
/// file at 0644 was warned about twice (on stderr by the resolver, on stdout by doctor).
#[test]
fn warns_once_about_every_loose_secret_file() {
    let files = Files::new();
    let agent = secret_file(
        &files,
        "agent.token",
        "agent-secret-from-a-file-0123",
        0o644,
    );
    let discord = secret_file(&files, "discord.token", "MTEw.discord-bot-token", 0o640);
    let text = config(&format!(
        "channels: {{ discord: {{ tokenFile: '{discord}', applicationId: '77' }} }},"
    ))
    .replace(
        "{ name: 'agent', token: 'agent-token-0123456789abcdef', scopes: ['agent'] }",
        &format!("{{ name: 'agent', tokenFile: '{agent}', scopes: ['agent'] }}"),
    );
    let path = files.write("gatehouse.json5", &text);
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.stderr, "");
    let warnings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            format!(
                "warning: `gateway.auth.tokens[2]`: secret file {agent} is readable by group or \
                 others (mode 0644); run chmod 600"
            ),
            format!(
                "warning: `channels.discord.tokenFile`: secret file {discord} is readable by \
                 group or others (mode 0640); run chmod 600"
            ),
        ],
        "{}",
        run.stdout
    );
}

/// Operator walkthrough: doctor counted `git`, an entry the policy ignores, as an allowlist
/// entry. It counts what the policy uses and warns with the words `gatehouse check` uses.
#[test]
fn counts_only_the_allowlist_entries_the_policy_uses() {
    let files = Files::new();
    let approvals = r#"{"version": 1, "agents": {"main": {"allowlist": [
        {"pattern": "git"}, {"pattern": "/usr/bin/git"}
    ]}}}"#;
    std::fs::create_dir(files.join("data")).unwrap();
    let approvals_file = files.write("data/exec-approvals.json", approvals);
    let checked = crate::gatehouse(
        &[
            "check",
            "--approvals",
            &approvals_file,
            "--",
            "/usr/bin/true",
        ],
        "",
    );
    let ignored = checked
        .stderr
        .lines()
        .find_map(|line| line.strip_prefix("gatehouse: warning: "))
        .unwrap_or_else(|| panic!("check warned about nothing: {}", checked.stderr));
    assert!(ignored.contains("`git` ignored"), "{ignored}");
    let run = doctor(&files.join("data"), &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "agent main: security allowlist, ask on-miss, askFallback deny, 1 allowlist entries\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("\nwarning: agent main: {ignored}\n")),
        "{}",
        run.stdout
    );
}

/// Operator walkthrough: `check` and `tools` read the config named by `GATEHOUSE_CONFIG`;
/// doctor checked the embedded default instead.
#[test]
fn reads_the_config_named_by_gatehouse_config() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let run = doctor(&files.join("data"), &[], &[("GATEHOUSE_CONFIG", &path)]);
    assert!(
        run.stdout.starts_with(&format!("config {path}: ok\n")),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// `security: full` runs every command with nobody asked; only `askFallback: full` was flagged.
#[test]
fn warns_about_an_agent_with_full_security() {
    let files = Files::new();
    let path = files.write(
        "gatehouse.json5",
        &config("agents: { list: [{ id: 'ops', tools: { exec: { security: 'full' } } }] },"),
    );
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "\nwarning: agent ops: security is full, so every command runs with nobody asked\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("agent main: security is full"),
        "{}",
        run.stdout
    );
}

#[test]
fn finds_no_problem_in_a_sound_config() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.ends_with("no problems found\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
}

/// Review: with no tokens configured, serve refuses a loose `admin.token`, but doctor only warned
/// (and warned about it even when serve never reads it).
#[test]
fn reports_the_admin_token_serve_would_refuse_only_when_serve_would_read_it() {
    let files = Files::new();
    let data = files.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let token = data.join("admin.token");
    std::fs::write(&token, "a-generated-admin-token-0123456789").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let bare = files.write("bare.json5", "{}\n");
    doctor_reports_the_refusal(&data, &data, &bare, "admin token file");
    let configured = files.write("gatehouse.json5", &config(""));
    let run = doctor(&data, &["--config", &configured], &[]);
    assert_eq!(run.code, 0, "serve never reads it here: {}", run.stdout);
}

/// Review: an unreadable `exec-approvals.json` stopped doctor before it printed what it had
/// already found.
#[test]
fn reports_an_unreadable_approvals_file_with_everything_else() {
    let files = Files::new();
    let data = files.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("exec-approvals.json"), "{ not json").unwrap();
    let path = files.write(
        "gatehouse.json5",
        &config("").replace(crate::gateway::AGENT, "too-short"),
    );
    let run = doctor(&data, &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stdout.contains("error: cannot read ") && run.stdout.contains("exec-approvals.json"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("token `agent` is shorter than 16 characters"),
        "the token error is still reported: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "\ndata directory {}: serve would refuse it\n",
            data.display()
        )),
        "{}",
        run.stdout
    );
}

/// Writes an intact audit log of `records` records into `data`, as a gateway leaves it.
fn audit_log(data: &Path, records: u64) -> std::path::PathBuf {
    use gatehouse_store::audit::{AuditEvent, AuditKind, AuditLog, AuditOptions};
    std::fs::create_dir_all(data).unwrap();
    let path = data.join("audit.jsonl");
    let (log, _) = AuditLog::open(&path, AuditOptions::default()).unwrap();
    for seq in 1..=records {
        let event = AuditEvent::new(AuditKind::Request, serde_json::json!({"command": "ls"}));
        log.append(1_700_000_000_000 + seq, event).unwrap();
    }
    path
}

/// Operator walkthrough: doctor found "no problems" (exit 0) in data directories serve refused
/// (exit 2): an audit log others can read, and an audit chain with a line that is no record.
/// Serve's message named the log's path twice.
#[test]
fn reports_the_audit_log_refusals_serve_stops_with() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let data = files.join("data");
    let log = audit_log(&data, 5);
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = doctor_reports_the_refusal(&data, &data, &path, "lets other users read");
    let shown = log.display().to_string();
    assert!(
        run.stdout.contains(&format!(
            "\nerror: store error: {shown}: mode 644 lets other users read the audit log; run \
             chmod 600\n"
        )),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.matches(&shown).count(), 1, "{}", run.stdout);
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("garbage\n");
    std::fs::write(&log, text).unwrap();
    let run = doctor_reports_the_refusal(&data, &data, &path, "broken audit chain");
    assert!(
        run.stdout.contains(&format!(
            "\nerror: store error: refusing to extend a broken audit chain: {shown}:6: not an \
             audit record"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "data directory {}: serve would refuse it\n",
            data.display()
        )),
        "{}",
        run.stdout
    );
}

/// An approvals database serve cannot open (here, a file that is no database) is an error
/// too, found without writing beside it.
#[test]
fn reports_an_approvals_database_serve_cannot_open() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let data = files.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("approvals.db"), "no database here\n".repeat(64)).unwrap();
    let before: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    let run = doctor(&data, &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("\nerror: store error: approvals database: file is not a database\n"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), before.len());
    doctor_reports_the_refusal(&data, &data, &path, "file is not a database");
}

/// Operator-CLI review: a malformed sessions.json stopped serve but passed doctor.
#[test]
fn reports_a_sessions_file_serve_cannot_read() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let data = files.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("sessions.json"), "{ not json").unwrap();
    doctor_reports_the_refusal(&data, &data, &path, "sessions file");
}

/// A data directory a gateway left behind, with records in its audit log, is sound.
#[test]
fn finds_no_problem_in_an_intact_data_directory() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let data = files.join("data");
    audit_log(&data, 3);
    let run = doctor(&data, &["--config", &path], &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout
            .contains(&format!("\ndata directory {}: ok\n", data.display())),
        "{}",
        run.stdout
    );
}

/// Operator walkthrough: with `askFallback: full` under `security: allowlist` doctor showed
/// `askFallback full` and warned that an unanswered approval runs the command, but a timeout
/// clamps the fallback to the security, and the gateway denied. It shows what applies, and
/// warns only where `full` does.
#[test]
fn shows_the_fallback_a_timeout_applies_and_warns_only_where_it_is_full() {
    let files = Files::new();
    let path = files.write(
        "gatehouse.json5",
        &config(
            "tools: { exec: { askFallback: 'full' } },
             agents: { list: [{ id: 'ops', tools: { exec: { security: 'full', ask: 'always' } } }] },",
        ),
    );
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    let text = &run.stdout;
    assert_eq!(run.code, 1, "{text}");
    assert!(
        text.contains(
            "agent main: security allowlist, ask on-miss, askFallback allowlist (configured full, \
             clamped to the security), 0 allowlist entries\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("agent ops: security full, ask always, askFallback full, 0 allowlist"),
        "{text}"
    );
    let warnings: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: agent ops: security is full, so every command runs with nobody asked",
            "warning: agent ops: askFallback is full, so an unanswered approval runs the command",
        ],
        "{text}"
    );
}

/// Operator walkthrough: the documented live check line was missing when the check failed.
#[test]
fn prints_the_live_check_line_when_the_gateway_cannot_be_reached() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", &config(""));
    let run = doctor(
        &files.join("data"),
        &[
            "--config",
            &path,
            "--url",
            "http://127.0.0.1:9",
            "--token",
            "t",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("\nlive check: failed\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\nwarning: live check: cannot reach the gateway at http://127.0.0.1:9"),
        "{}",
        run.stdout
    );
}

/// Review: an agent id in `exec-approvals.json` comes from requests and was printed raw.
#[test]
fn shows_agent_ids_without_their_escape_sequences() {
    let files = Files::new();
    let data = files.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("exec-approvals.json"),
        "{\"version\":1,\"agents\":{\"x\\u001b[2Jy\":{\"allowlist\":[{\"pattern\":\"git\"}]}}}\n",
    )
    .unwrap();
    std::fs::set_permissions(
        data.join("exec-approvals.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let path = files.write("gatehouse.json5", &config(""));
    let run = doctor(&data, &["--config", &path], &[]);
    assert!(
        run.stdout.contains("allowlist entry `git` ignored"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains('\u{1b}'), "{:?}", run.stdout);
}

/// Review: the safe-bin warnings were documented as doctor's (a safe bin nothing profiles, a
/// trusted directory others may write to), but doctor never showed them.
#[test]
fn warns_about_unprofiled_safe_bins_and_writable_trusted_dirs() {
    let files = Files::new();
    let open_dir = files.join("shared-bin");
    std::fs::create_dir(&open_dir).unwrap();
    std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let open_dir = open_dir.display().to_string();
    let tools = format!(
        "tools: {{ exec: {{ safeBins: ['head', 'myfilter'], safeBinTrustedDirs: ['{open_dir}'] }} }},
  agents: {{ list: [{{ id: 'ops' }}] }},"
    );
    let path = files.write("gatehouse.json5", &config_with("", &tools));
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    let text = &run.stdout;
    assert_eq!(run.code, 1, "{text}");
    for agent in ["main", "ops"] {
        assert!(
            text.contains(&format!(
                "warning: agent {agent}: safe bin myfilter has no profile (none built in, none \
                 under safeBinProfiles), so it is never allowed as a safe bin"
            )),
            "{text}"
        );
    }
    assert!(!text.contains("safe bin head "), "{text}");
    let writable = format!(
        "warning: safeBinTrustedDirs includes world-writable directory {open_dir}; remove it or \
         chmod 755 it"
    );
    assert_eq!(text.matches(&writable).count(), 1, "{text}");
}

/// A home for doctor's sandbox checks: `<dir>/home` with a workspace `work` and a `.ssh`.
fn sandbox_home(files: &Files) -> String {
    std::fs::create_dir_all(files.join("home/work")).unwrap();
    std::fs::create_dir_all(files.join("home/.ssh")).unwrap();
    let home = files.join("home").canonicalize().unwrap();
    home.display().to_string()
}

/// Issue 33: doctor shows each sandboxed agent's effective sandbox and runs bubblewrap once,
/// as a run would, to show that a sandbox starts on this host.
#[test]
fn shows_each_sandboxed_agent_and_that_a_sandbox_starts_here() {
    let files = Files::new();
    let home = sandbox_home(&files);
    let path = files.write(
        "gatehouse.json5",
        &config(
            "agents: { defaults: { workspace: '~/work', sandbox: { mode: 'non-main' } },
                       list: [{ id: 'ops', sandbox: { mode: 'off' } },
                              { id: 'web', sandbox: { mode: 'all', isolation: 'ephemeral' } }] },",
        ),
    );
    let run = doctor(
        &files.join("data"),
        &["--config", &path],
        &[("HOME", &home)],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    for expected in [
        "\nagent main: sandbox mode non-main, isolation home, network off, workspace ~/work\n",
        "\nagent web: sandbox mode all, isolation ephemeral, network off, workspace ~/work\n",
        "; a sandbox starts here\n",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }
    assert!(!run.stdout.contains("agent ops: sandbox"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("\nsandbox: bubblewrap ").count(), 1);
}

/// What would refuse every sandboxed run of an agent is an error, named by its key: a
/// workspace holding credentials, a bubblewrap that cannot be run.
#[test]
fn reports_sandbox_settings_that_would_refuse_every_run() {
    let files = Files::new();
    let home = sandbox_home(&files);
    let path = files.write(
        "gatehouse.json5",
        &config(
            "agents: { defaults: { workspace: '~', sandbox: { mode: 'all',
                                   bwrapPath: '/nonexistent/bwrap' } } },",
        ),
    );
    let run = doctor(
        &files.join("data"),
        &["--config", &path],
        &[("HOME", &home)],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "\nerror: agent main: sandbox: workspace: {home} contains {home}/.ssh"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "\nerror: sandbox: bubblewrap: `sandbox.bwrapPath` /nonexistent/bwrap is not an \
             executable file"
        ),
        "{}",
        run.stdout
    );
}

/// Issue 29: doctor says what allowlisting a program trusts (git the repository's hooks and
/// config) and that a carrier's entry never lets what it carries run.
#[test]
fn shows_what_allowlisting_each_program_trusts() {
    let files = Files::new();
    let approvals = r#"{"version": 1, "agents": {"main": {"allowlist": [
        {"pattern": "/usr/bin/git"}, {"pattern": "/usr/bin/sudo"}
    ]}}}"#;
    std::fs::create_dir(files.join("data")).unwrap();
    files.write("data/exec-approvals.json", approvals);
    let run = doctor(&files.join("data"), &[], &[]);
    assert!(
        run.stdout
            .contains("\nagent main: allowlisted /usr/bin/git trusts the repository's hooks"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "\nagent main: allowlisted /usr/bin/sudo is a carrier (runs a command as another user)"
        ),
        "{}",
        run.stdout
    );
}

/// Issue 35: a malformed `apiUrl` hid a malformed token, and a token read from `tokenFile` was
/// reported as `botToken`. Every broken key of every channel is listed, each named as written.
#[test]
fn lists_every_broken_channel_key_under_the_key_the_config_used() {
    let files = Files::new();
    let token = files.write("telegram.token", "not-a-bot-token");
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = files.write(
        "gatehouse.json5",
        &format!(
            "{{ channels: {{
                 telegram: {{ tokenFile: '{token}', apiUrl: 'not a url', webhookUrl: 'also bad' }},
                 discord: {{ tokenEnv: 'GATEHOUSE_TEST_UNSET_DISCORD', apiUrl: 'http://x/api/v10' }},
                 slack: {{ botToken: 'xoxp-user', appToken: 'xapp-1', apiUrl: '::' }},
               }} }}"
        ),
    );
    let run = doctor(&files.join("data"), &["--config", &path], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|line| line.strip_prefix("error: "))
        .collect();
    for expected in [
        "`channels.telegram` is not usable: invalid channels.telegram.tokenFile: expected the \
         form <digits>:<secret> as BotFather prints it",
        "`channels.telegram.apiUrl`: \"not a url\" is not a URL",
        "`channels.telegram.webhookUrl`: \"also bad\" is not a URL",
        "`channels.telegram.webhookUrl` needs a secret",
        "`channels.discord.tokenEnv`: environment variable GATEHOUSE_TEST_UNSET_DISCORD is not set",
        "`channels.discord.applicationId`: set the application's id",
        "`channels.discord` is not usable: invalid channels.discord.apiUrl",
        "`channels.slack` is not usable: invalid channels.slack.botToken: expected a bot token \
         starting with xoxb-",
        "`channels.slack.apiUrl`: \"::\" is not a URL",
    ] {
        let found = errors
            .iter()
            .filter(|line| line.starts_with(expected))
            .count();
        assert_eq!(found, 1, "{expected}\nin:\n{}", run.stdout);
    }
    assert!(
        !run.stdout.contains("channels.telegram.botToken"),
        "{}",
        run.stdout
    );
}
