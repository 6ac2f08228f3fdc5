#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic in a test helper is a failed test"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdout, Command};

/// A running `gatehouse serve` and what it printed.
struct Served {
    child: Child,
    base: String,
    token: String,
    _stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

fn gatehouse(data_dir: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .args(extra)
        .env_remove("XDG_STATE_HOME")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

async fn start(data_dir: &Path) -> Served {
    let mut child = gatehouse(data_dir, &["--log-format", "json"])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let login = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("Control UI login: ") {
                return url.to_owned();
            }
        }
        panic!("gatehouse exited without printing a login URL");
    })
    .await
    .expect("no login URL within 30 s");
    let (base, token) = login
        .split_once("/#token=")
        .expect("login URL carries the token");
    Served {
        child,
        base: base.to_owned(),
        token: token.to_owned(),
        _stdout: stdout,
    }
}

async fn terminate(mut served: Served) -> (ExitStatus, String) {
    let pid = served.child.id().unwrap();
    // The shell's builtin `kill` avoids both `unsafe` libc calls and a dependency on procps.
    let sent = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -TERM {pid}"))
        .status()
        .unwrap();
    assert!(sent.success());
    let status = tokio::time::timeout(Duration::from_secs(15), served.child.wait())
        .await
        .expect("no exit within 15 s of SIGTERM")
        .unwrap();
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(served.child.stderr.as_mut().unwrap(), &mut stderr)
        .await
        .unwrap();
    (status, stderr)
}

#[tokio::test]
async fn serves_with_a_generated_admin_token_and_exits_cleanly_on_sigterm() {
    let data_dir = tempfile::tempdir().unwrap();
    let served = start(data_dir.path()).await;
    assert!(
        served.base.starts_with("http://127.0.0.1:"),
        "{}",
        served.base
    );

    let token_file = data_dir.path().join("admin.token");
    assert_eq!(
        std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap().trim(),
        served.token
    );

    let client = reqwest::Client::new();
    let health = client
        .get(format!("{}/healthz", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let status: serde_json::Value = client
        .post(format!("{}/rpc", served.base))
        .bearer_auth(&served.token)
        .json(&json!({"method": "gateway.status"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status["ok"], true, "{status}");
    assert_eq!(
        status["payload"]["caller"],
        json!({"name": "admin", "scopes": ["operator.admin"]})
    );

    let (status, stderr) = terminate(served).await;
    assert!(status.success(), "{status:?}\n{stderr}");
    // Logs are JSON lines and never carry the token.
    let token = std::fs::read_to_string(&token_file).unwrap();
    assert!(!stderr.contains(token.trim()), "{stderr}");
    assert!(
        stderr
            .lines()
            .all(|line| serde_json::from_str::<serde_json::Value>(line).is_ok()),
        "{stderr}"
    );
    assert!(stderr.contains("Gatehouse stopped."), "{stderr}");
}

#[tokio::test]
async fn reuses_the_admin_token_across_restarts() {
    let data_dir = tempfile::tempdir().unwrap();
    let first = start(data_dir.path()).await;
    let token = first.token.clone();
    assert!(terminate(first).await.0.success());
    let second = start(data_dir.path()).await;
    assert_eq!(second.token, token);
    assert!(terminate(second).await.0.success());
}

#[tokio::test]
async fn refuses_to_start_with_a_token_file_others_can_read() {
    let data_dir = tempfile::tempdir().unwrap();
    let token_file = data_dir.path().join("admin.token");
    std::fs::write(&token_file, "a-token-that-leaked-0123456789\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = gatehouse(data_dir.path(), &[]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("accessible by group or others (mode 644)"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}
