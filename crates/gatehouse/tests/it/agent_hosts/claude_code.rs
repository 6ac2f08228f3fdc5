//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned by .ci/run) running
//! offline against the fake Anthropic Messages API: the model asks for Bash and Write calls,
//! Claude Code runs `gatehouse hook claude-code` (or posts to `/hooks/claude-code`), the
//! gateway decides, a person answers on the Telegram fake — and what actually happened (a file
//! made or not, the tool result Claude Code sent back to the model) is asserted.

use std::path::Path;

use gatehouse_fakes::model::{Script, ToolResult, Turn, anthropic};
use serde_json::{Value, json};

use super::{Gatehouse, gatehouse_binary, host_binary, run_host};
use crate::gateway::AGENT;

/// The version these tests are written against (.ci/run installs it).
const VERSION: &str = "2.1.332";

fn claude() -> std::path::PathBuf {
    host_binary(
        "GATEHOUSE_CLAUDE_CODE",
        "claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
        "@anthropic-ai/claude-code@2.1.332",
    )
}

/// A command hook running `gatehouse hook claude-code ARGS` for both events, as the docs'
/// snippet has it (exec form, `onFailure: "block"`).
fn command_hooks(args: &[&str]) -> Value {
    let mut argv = vec!["hook", "claude-code"];
    argv.extend_from_slice(args);
    let hook = json!([{"matcher": "*", "hooks": [{"type": "command", "command": gatehouse_binary(),
        "args": argv, "timeout": 120, "onFailure": "block"}]}]);
    json!({"hooks": {"PreToolUse": hook, "PermissionRequest": hook}})
}

/// Runs `claude -p go` in `project` with `settings` as `.claude/settings.json`, the model
/// following `script`, with `env` added; while it runs, `during` acts (presses a card). The
/// tool results Claude Code sent back to the model, in order.
async fn run_claude(
    project: &Path,
    settings: &Value,
    script: Vec<Turn>,
    env: &[(&str, &str)],
    during: impl Future<Output = ()>,
) -> Vec<ToolResult> {
    let model = anthropic::spawn("127.0.0.1:0".parse().unwrap(), Script::new(script))
        .await
        .unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let base_url = model.base_url.clone();
    let mut all = vec![
        ("ANTHROPIC_BASE_URL", base_url.as_str()),
        ("ANTHROPIC_API_KEY", "sk-fake"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
    ];
    all.extend_from_slice(env);
    let args = ["-p", "go", "--model", "claude-opus-4-5"];
    run_host(&claude(), &args, project, home.path(), &all, during).await;
    anthropic::tool_results(&model.calls())
}

#[tokio::test]
async fn the_installed_claude_code_is_the_version_the_contract_was_written_against() {
    let output = std::process::Command::new(claude())
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&output.stdout);
    assert_eq!(version.trim(), format!("{VERSION} (Claude Code)"));
}

/// One session: a Bash call the policy allows runs; a Write to a denied file is refused and the
/// model reads why; a Write the policy asks about becomes a Telegram card, Allow once is
/// pressed, and the file is written.
#[tokio::test]
async fn claude_code_runs_what_gatehouse_allows_and_a_person_approves_and_nothing_else() {
    let g = Gatehouse::start().await;
    let ws = &g.workspace;
    let script = vec![
        Turn::tool(
            "Bash",
            json!({"command": "echo ran > by-bash.txt", "description": "Make a file"}),
        ),
        Turn::tool(
            "Write",
            json!({"file_path": ws.join(".env"), "content": "TOKEN=stolen\n"}),
        ),
        Turn::tool(
            "Write",
            json!({"file_path": ws.join("notes.md"), "content": "approved\n"}),
        ),
        Turn::text("done"),
    ];
    let env = [
        ("GATEHOUSE_URL", g.server.base.as_str()),
        ("GATEHOUSE_TOKEN", AGENT),
    ];
    let press = async {
        let card = g.card(1).await;
        let text = card.body["text"].as_str().unwrap();
        assert!(text.contains("Claude Code on "), "{text}");
        assert!(text.contains("notes.md"), "{text}");
        g.press(&card, "Allow once").await;
    };
    let settings = command_hooks(&["--approval-timeout", "100"]);
    let results = run_claude(ws, &settings, script, &env, press).await;
    assert_eq!(results.len(), 3, "{results:#?}");

    assert!(!results[0].is_error, "{results:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("by-bash.txt")).unwrap(),
        "ran\n"
    );

    assert!(results[1].is_error, "{results:#?}");
    assert!(
        results[1]
            .output
            .starts_with("PreToolUse:Write hook error: Gatehouse denied this call: "),
        "{results:#?}"
    );
    assert!(!ws.join(".env").exists());

    assert!(!results[2].is_error, "{results:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.md")).unwrap(),
        "approved\n"
    );
}

/// The gateway is down: Claude Code is told why, and the command does not run.
#[tokio::test]
async fn claude_code_runs_nothing_when_the_gateway_is_down() {
    let project = tempfile::tempdir().unwrap();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let script = vec![
        Turn::tool("Bash", json!({"command": "echo ran > by-bash.txt"})),
        Turn::text("done"),
    ];
    let env = [
        ("GATEHOUSE_URL", closed.as_str()),
        ("GATEHOUSE_TOKEN", AGENT),
    ];
    let results = run_claude(project.path(), &command_hooks(&[]), script, &env, async {}).await;
    assert_eq!(results.len(), 1, "{results:#?}");
    assert!(results[0].is_error, "{results:#?}");
    assert!(
        results[0]
            .output
            .contains("Gatehouse could not be reached (cannot reach the gateway at"),
        "{results:#?}"
    );
    assert!(!project.path().join("by-bash.txt").exists());
}

/// The `http` hook: Claude Code posts each call to `/hooks/claude-code` with the agent token;
/// the gateway answers in process. Allowed Bash runs; the denied file is refused.
#[tokio::test]
async fn claude_code_over_the_http_hook_gets_the_same_decisions() {
    let g = Gatehouse::start().await;
    let ws = &g.workspace;
    let hook = json!([{"matcher": "*", "hooks": [{"type": "http",
        "url": format!("{}/hooks/claude-code", g.server.base),
        "headers": {"Authorization": "Bearer $GATEHOUSE_TOKEN"},
        "allowedEnvVars": ["GATEHOUSE_TOKEN"], "timeout": 120, "onFailure": "block"}]}]);
    let settings = json!({"hooks": {"PreToolUse": hook, "PermissionRequest": hook}});
    let script = vec![
        Turn::tool("Bash", json!({"command": "echo ran > by-http.txt"})),
        Turn::tool(
            "Write",
            json!({"file_path": ws.join(".env"), "content": "TOKEN=stolen\n"}),
        ),
        Turn::text("done"),
    ];
    let env = [("GATEHOUSE_TOKEN", AGENT)];
    let results = run_claude(ws, &settings, script, &env, async {}).await;
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(!results[0].is_error, "{results:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("by-http.txt")).unwrap(),
        "ran\n"
    );
    assert!(results[1].is_error, "{results:#?}");
    assert!(
        results[1].output.contains("Gatehouse denied this call: "),
        "{results:#?}"
    );
    assert!(!ws.join(".env").exists());
}

/// Only the `PermissionRequest` hook installed: Claude Code asks it where it would show its
/// dialog; a person denies the write on Telegram, and the model reads their refusal.
#[tokio::test]
async fn claude_code_permission_requests_are_decided_on_telegram() {
    let g = Gatehouse::start().await;
    let ws = &g.workspace;
    let mut settings = command_hooks(&["--approval-timeout", "100"]);
    settings["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PreToolUse");
    let script = vec![
        Turn::tool(
            "Write",
            json!({"file_path": ws.join("notes.md"), "content": "refused\n"}),
        ),
        Turn::text("done"),
    ];
    let env = [
        ("GATEHOUSE_URL", g.server.base.as_str()),
        ("GATEHOUSE_TOKEN", AGENT),
    ];
    let press = async {
        let card = g.card(1).await;
        assert!(
            card.body["text"]
                .as_str()
                .unwrap()
                .contains("PermissionRequest"),
            "{:?}",
            card.body
        );
        g.press(&card, "Deny").await;
    };
    let results = run_claude(ws, &settings, script, &env, press).await;
    assert_eq!(results.len(), 1, "{results:#?}");
    assert!(results[0].is_error, "{results:#?}");
    assert!(
        results[0].output.starts_with("Denied in Gatehouse by "),
        "{results:#?}"
    );
    assert!(!ws.join("notes.md").exists());
}
