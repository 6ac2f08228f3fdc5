//! `gatehouse mcp` under a second real MCP client: the MCP Inspector's CLI (npm
//! `@modelcontextprotocol/inspector`, pinned by .ci/run), which also checks that the tools'
//! schemas are portable to clients with a single-type schema dialect (Gemini's).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tokio::process::Command;

use crate::gateway::{AGENT, Server};
use crate::mcp::allowlist;

/// The Inspector version the test is written against (.ci/run installs it).
const INSPECTOR_VERSION: &str = "2.12.0";

/// Environment variable naming the `mcp-inspector` program, for machines where the copy
/// .ci/run installs (`<target dir>/mcp-inspector`) is not the one to use.
const INSPECTOR_VAR: &str = "GATEHOUSE_MCP_INSPECTOR";

/// The Inspector's exit status when a tool answered `isError: true`.
const EXIT_TOOL_ERROR: i32 = 5;

fn inspector() -> PathBuf {
    if let Some(path) = std::env::var_os(INSPECTOR_VAR) {
        return PathBuf::from(path);
    }
    PathBuf::from(env!("CARGO_BIN_EXE_gatehouse"))
        .ancestors()
        .map(|dir| dir.join("mcp-inspector/node_modules/.bin/mcp-inspector"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "this test needs the MCP Inspector's CLI (npm @modelcontextprotocol/inspector@\
                 {INSPECTOR_VERSION}) at <target dir>/mcp-inspector: run .ci/run once, or `npm \
                 install --prefix target/mcp-inspector --ignore-scripts \
                 @modelcontextprotocol/inspector@{INSPECTOR_VERSION}`, or set {INSPECTOR_VAR}"
            )
        })
}

/// What one Inspector run printed, and its exit status.
struct Inspected {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the Inspector's CLI on `gatehouse mcp` for `server` with `args` after the server's.
async fn inspect(server: &Server, args: &[&str]) -> Inspected {
    let run = Command::new(inspector())
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["mcp", "--url", &server.base, "--token", AGENT])
        .args(args)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the Inspector did not finish within 60 s")
        .unwrap();
    Inspected {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// `tools/call run_command` with `command` and `cwd_arg` (`cwd=…`).
async fn run_command(server: &Server, command: &str, cwd_arg: &str) -> Inspected {
    let command_arg = format!("command={command}");
    let args = ["--method", "tools/call", "--tool-name", "run_command"];
    let args = [
        &args[..],
        &["--tool-arg", &command_arg, "--tool-arg", cwd_arg],
    ]
    .concat();
    inspect(server, &args).await
}

#[tokio::test]
async fn the_inspector_finds_portable_schemas_a_run_and_a_refusal() {
    let version = std::process::Command::new(inspector())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        INSPECTOR_VERSION
    );
    let server = Server::start("").await;
    allowlist(&server, "printf");
    let cwd = server.scratch();
    let cwd_arg = format!("cwd={}", cwd.display());

    let listed = inspect(&server, &["--method", "tools/list", "--strict"]).await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    // `--strict` prints each portability finding (warnings too) on stderr.
    assert!(!listed.stderr.contains("Warning"), "{}", listed.stderr);
    let tools: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(tools["tools"].as_array().unwrap().len(), 2);

    let ran = run_command(&server, "printf inspected", &cwd_arg).await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let result: Value = serde_json::from_str(&ran.stdout).unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Exit code 0") && text.ends_with("inspected"),
        "{text}"
    );

    // Nobody is connected to approve it: refused, and the Inspector reports a tool error.
    let refused = run_command(&server, "touch marker", &cwd_arg).await;
    assert_eq!(refused.code, EXIT_TOOL_ERROR, "{}", refused.stdout);
    assert!(
        refused.stdout.contains("no-approval-route"),
        "{}",
        refused.stdout
    );
    assert!(!cwd.join("marker").exists());
}
