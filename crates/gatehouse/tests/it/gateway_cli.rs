//! The client commands (`request`, `run`, `approvals`) against a real server, with
//! address and token from `GATEHOUSE_URL`/`GATEHOUSE_TOKEN`.

use std::process::Output;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::gateway::{ADMIN, AGENT, APPROVER, Server};

fn client(server: &Server, token: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    command
        .args(args)
        .current_dir(server.scratch())
        .env("GATEHOUSE_URL", &server.base)
        .env("GATEHOUSE_TOKEN", token)
        .kill_on_drop(true);
    command
}

async fn output(server: &Server, token: &str, args: &[&str]) -> Output {
    client(server, token, args).output().await.unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn request_exits_20_when_nobody_can_be_asked() {
    let server = Server::start("").await;
    let out = output(&server, AGENT, &["request", "--", "make", "deploy"]).await;
    assert_eq!(out.status.code(), Some(20));
    assert!(
        stdout(&out).contains("no-approval-route"),
        "{}",
        stdout(&out)
    );
}

#[tokio::test]
async fn request_exits_0_when_a_person_allows_and_approvals_cli_sees_it() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let waiting = client(&server, AGENT, &["request", "--json", "--", "make deploy"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let requested = operator.event("exec.approval.requested").await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let listed = output(
        &server,
        APPROVER,
        &["approvals", "list", "--state", "pending"],
    )
    .await;
    assert!(stdout(&listed).contains(&id), "{}", stdout(&listed));
    let latest = output(
        &server,
        APPROVER,
        &["approvals", "list", "--newest-first", "--limit", "1"],
    )
    .await;
    assert!(stdout(&latest).contains(&id), "{}", stdout(&latest));
    let resolved = output(
        &server,
        APPROVER,
        &["approvals", "resolve", &id[..8], "allow-once"],
    )
    .await;
    assert_eq!(stdout(&resolved), format!("{id}: allow-once\n"));
    let again = output(&server, APPROVER, &["approvals", "resolve", &id, "deny"]).await;
    assert_eq!(again.status.code(), Some(1), "a later answer did not apply");
    assert_eq!(
        stdout(&again),
        format!("{id}: not applied: already answered allow-once by approver\n")
    );
    let out = waiting.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["decision"], "allow-once");
    assert_eq!(answer["id"], id.as_str(), "the id named while waiting");
    let got = output(&server, APPROVER, &["approvals", "get", "--json", &id]).await;
    let got: Value = serde_json::from_str(&stdout(&got)).unwrap();
    assert_eq!(got["resolvedBy"], "approver");
    let shown = stdout(&output(&server, APPROVER, &["approvals", "get", &id]).await);
    assert!(
        shown.contains("state      allowed: allow-once by approver")
            && shown.contains("command    make deploy"),
        "{shown}"
    );
}

#[tokio::test]
async fn request_names_the_approval_it_waits_on_before_the_answer() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let mut waiting = client(&server, AGENT, &["request", "--", "make deploy"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let requested = operator.event("exec.approval.requested").await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let mut stderr = waiting.stderr.take().unwrap();
    let mut line = String::new();
    while !line.contains('\n') {
        let mut byte = [0_u8; 1];
        tokio::io::AsyncReadExt::read_exact(&mut stderr, &mut byte)
            .await
            .unwrap();
        line.push(char::from(byte[0]));
    }
    assert_eq!(
        line,
        format!("gatehouse: waiting for a decision on approval {id}\n")
    );
    server
        .ok(
            APPROVER,
            "exec.approval.resolve",
            json!({"id": id, "decision": "deny"}),
        )
        .await;
    assert_eq!(waiting.wait().await.unwrap().code(), Some(20));
}

#[tokio::test]
async fn shows_agent_text_without_its_escape_sequences() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    let accepted = server
        .ok(
            AGENT,
            "exec.approval.request",
            json!({"command": "ls \u{1b}[2J\u{202e}gnp.exe", "cwd": server.scratch(),
                   "agentId": "main", "sessionKey": "s1", "twoPhase": true}),
        )
        .await;
    let id = accepted["id"].as_str().unwrap();
    for args in [vec!["approvals", "list"], vec!["approvals", "get", id]] {
        let shown = stdout(&output(&server, APPROVER, &args).await);
        assert!(shown.contains(id), "{args:?}: {shown}");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
            "{args:?}: {shown:?}"
        );
    }
}

#[tokio::test]
async fn takes_the_server_flags_after_a_subcommand_and_says_where_a_token_comes_from() {
    let server = Server::start("").await;
    let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    let listed = command
        .args([
            "approvals",
            "list",
            "--url",
            &server.base,
            "--token",
            APPROVER,
        ])
        .env_remove("GATEHOUSE_URL")
        .env_remove("GATEHOUSE_TOKEN")
        .output()
        .await
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&listed.stderr),
        "no approvals match\n"
    );
    let no_token = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["approvals", "list", "--url", &server.base])
        .env_remove("GATEHOUSE_TOKEN")
        .output()
        .await
        .unwrap();
    assert_eq!(no_token.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&no_token.stderr);
    assert!(
        stderr.contains("GATEHOUSE_TOKEN") && stderr.contains("admin.token"),
        "{stderr}"
    );
}

#[tokio::test]
async fn run_relays_output_and_exit_status() {
    let server = Server::start("tools: { exec: { security: 'full', ask: 'off' } },").await;
    let out = output(
        &server,
        AGENT,
        &["run", "--", "sh", "-c", "echo out; exit 3"],
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "out\n");
    let denied = output(&server, APPROVER, &["run", "--", "ls"]).await;
    assert_eq!(denied.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&denied.stderr).contains("forbidden"));
}

#[tokio::test]
async fn allowlist_add_list_and_remove_edit_the_servers_file() {
    let server = Server::start("").await;
    let check = json!({"argv": ["git", "status"], "cwd": server.scratch(), "agentId": "main"});
    let asked = server.ok(AGENT, "exec.policy.check", check.clone()).await;
    assert_eq!(asked["decision"], "ask");
    let git = asked["segments"][0]["resolvedPath"]
        .as_str()
        .unwrap()
        .to_owned();
    let added = output(&server, ADMIN, &["approvals", "allowlist", "add", &git]).await;
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let again = output(&server, ADMIN, &["approvals", "allowlist", "add", &git]).await;
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("nothing changed"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let listed = output(
        &server,
        APPROVER,
        &["approvals", "allowlist", "list", "--json"],
    )
    .await;
    let listed: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed["allowlist"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["allowlist"][0]["pattern"], git.as_str());
    let shown = stdout(&output(&server, APPROVER, &["approvals", "allowlist", "list"]).await);
    assert!(
        shown.starts_with("agent main: 1 allowlist entries\n") && shown.contains(&git),
        "{shown}"
    );
    // The server now allows git without asking.
    let allowed = server.ok(AGENT, "exec.policy.check", check).await;
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    let removed = output(&server, ADMIN, &["approvals", "allowlist", "remove", &git]).await;
    assert!(removed.status.success());
    let shown = stdout(&output(&server, APPROVER, &["approvals", "allowlist", "list"]).await);
    assert_eq!(shown, "agent main: no allowlist entries\n");
}
