//! The real Codex CLI (npm `@openai/codex`, pinned by .ci/run) running offline against the fake
//! OpenAI Responses API: the model asks for shell commands, Codex runs `gatehouse hook codex`,
//! the gateway asks a person on the Telegram fake, and what ran (a file made or not, the
//! output Codex sent back to the model) is asserted.

use std::path::Path;

use gatehouse_fakes::model::{Script, ToolResult, Turn, openai};
use serde_json::json;

use super::{Gatehouse, gatehouse_binary, host_binary, run_host};
use crate::gateway::AGENT;

/// The version these tests are written against (.ci/run installs it).
const VERSION: &str = "0.171.0";

fn codex() -> std::path::PathBuf {
    host_binary(
        "GATEHOUSE_CODEX",
        "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        "@openai/codex@0.171.0",
    )
}

/// Runs `codex exec go` in `project`, the model following `script`, its hooks running
/// `gatehouse hook codex HOOK_ARGS` against `url`; while it runs, `during` acts. The outputs
/// Codex sent back to the model, in order.
async fn run_codex(
    project: &Path,
    url: &str,
    hook_args: &str,
    script: Vec<Turn>,
    during: impl Future<Output = ()>,
) -> Vec<ToolResult> {
    let model = openai::spawn("127.0.0.1:0".parse().unwrap(), Script::new(script))
        .await
        .unwrap();
    // Codex refuses to set up its helpers under /tmp, so its home is in the target directory.
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let hook = format!(
        "type = \"command\"\ncommand = \"{} hook codex {hook_args}\"\ntimeout = 120\n",
        gatehouse_binary()
    );
    std::fs::write(
        home.path().join(".codex/config.toml"),
        format!(
            "model = \"gpt-5\"\nmodel_provider = \"fake\"\n\n\
             [[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\n{hook}\n\
             [[hooks.PermissionRequest]]\nmatcher = \"*\"\n[[hooks.PermissionRequest.hooks]]\n{hook}\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = \"{}\"\n\
             env_key = \"FAKE_KEY\"\nwire_api = \"responses\"\n",
            model.base_url
        ),
    )
    .unwrap();
    let args = [
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        "-s",
        "danger-full-access",
        "go",
    ];
    let env = [
        ("FAKE_KEY", "sk-fake"),
        ("GATEHOUSE_URL", url),
        ("GATEHOUSE_TOKEN", AGENT),
    ];
    run_host(&codex(), &args, project, home.path(), &env, during).await;
    openai::tool_results(&model.calls())
}

#[tokio::test]
async fn the_installed_codex_is_the_version_the_contract_was_written_against() {
    let output = std::process::Command::new(codex())
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&output.stdout);
    assert_eq!(version.trim(), format!("codex-cli {VERSION}"));
}

/// Every command asks a person (agent `careful`): the first is allowed on Telegram and runs,
/// the second is denied and does not; Codex tells the model why.
#[tokio::test]
async fn codex_runs_a_command_only_after_a_person_allows_it_on_telegram() {
    let g = Gatehouse::start().await;
    let ws = &g.workspace;
    let script = vec![
        Turn::tool("exec_command", json!({"cmd": "echo ran > allowed.txt"})),
        Turn::tool("exec_command", json!({"cmd": "echo ran > denied.txt"})),
        Turn::text("done"),
    ];
    let press = async {
        let first = g.card(1).await;
        let text = first.body["text"].as_str().unwrap();
        assert!(text.contains("Codex on "), "{text}");
        assert!(text.contains("allowed.txt"), "{text}");
        g.press(&first, "Allow once").await;
        let second = g.card(2).await;
        assert!(
            second.body["text"].as_str().unwrap().contains("denied.txt"),
            "{:?}",
            second.body
        );
        g.press(&second, "Deny").await;
    };
    let args = "--agent careful --approval-timeout 100";
    let results = run_codex(ws, &g.server.base, args, script, press).await;
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("allowed.txt")).unwrap(),
        "ran\n"
    );
    assert!(!results[0].output.contains("blocked"), "{results:#?}");
    assert!(!ws.join("denied.txt").exists());
    assert!(
        results[1]
            .output
            .contains("Command blocked by PreToolUse hook: Denied in Gatehouse by "),
        "{results:#?}"
    );
}

/// The gateway is down: the command does not run, and the model reads why.
#[tokio::test]
async fn codex_runs_nothing_when_the_gateway_is_down() {
    let project = tempfile::tempdir().unwrap();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let script = vec![
        Turn::tool("exec_command", json!({"cmd": "echo ran > by-codex.txt"})),
        Turn::text("done"),
    ];
    let results = run_codex(project.path(), &closed, "", script, async {}).await;
    assert_eq!(results.len(), 1, "{results:#?}");
    assert!(
        results[0]
            .output
            .contains("Command blocked by PreToolUse hook: Gatehouse could not be reached"),
        "{results:#?}"
    );
    assert!(!project.path().join("by-codex.txt").exists());
}
