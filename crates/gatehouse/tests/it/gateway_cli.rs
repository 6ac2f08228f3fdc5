//! The client commands (`request`, `run`, `approvals`) against a real server, with
//! address and token from `GATEHOUSE_URL`/`GATEHOUSE_TOKEN`.

use std::process::Output;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::gateway::{ADMIN, AGENT, APPROVER, Server, Ws, config, settled_long_ago};

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

/// Runs `args` as `token` against an address nothing listens on: for refusals that must come
/// before any call.
async fn offline(token: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(args)
        .env("GATEHOUSE_URL", "http://127.0.0.1:9")
        .env("GATEHOUSE_TOKEN", token)
        .output()
        .await
        .unwrap()
}

/// Answers approval `id` with `deny`, as an operator.
async fn deny(server: &Server, id: &str) {
    let denied = server.resolve(id, "deny").await;
    assert_eq!(denied["ok"], true, "{denied}");
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

/// Past its grace period the gateway refuses a late answer with `already_resolved`; `resolve`
/// still says who answered what and exits 1, as it does within the grace period.
#[tokio::test]
async fn resolve_after_the_grace_period_says_who_answered_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let id = settled_long_ago(&data, std::time::Duration::from_secs(60));
    std::fs::write(dir.path().join("gatehouse.json5"), config("")).unwrap();
    let server = Server::start_in(dir, "127.0.0.1:0").await;
    let late = output(
        &server,
        APPROVER,
        &["approvals", "resolve", &id[..8], "allow-once"],
    )
    .await;
    assert_eq!(
        late.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&late.stderr)
    );
    assert_eq!(
        stdout(&late),
        format!("{id}: not applied: already answered deny by admin\n")
    );
    let late = output(
        &server,
        APPROVER,
        &["approvals", "resolve", "--json", &id, "deny"],
    )
    .await;
    assert_eq!(late.status.code(), Some(1));
    let answer: Value = serde_json::from_str(&stdout(&late)).unwrap();
    assert_eq!(
        answer,
        json!({"id": id, "applied": false, "state": "denied", "decision": "deny",
               "resolvedBy": "admin", "allowlistAdded": []})
    );
}

/// `request`, and `run` too since `system.run` takes an `id` (operator walkthrough: `run`
/// named no approval while it waited), name the approval they wait on before the answer.
#[tokio::test]
async fn request_and_run_name_the_approval_they_wait_on_before_the_answer() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    // A command a person is asked about and whose binding can be computed from any directory
    // (`make deploy` without a makefile is refused before anyone is asked: issue 29 binds a
    // shell string's programs as an argv's).
    for command in ["request", "run"] {
        let (mut waiting, mut stderr, id) =
            waiting_on_approval(&server, &mut operator, &[command, "--", "ls -la /"]).await;
        assert_eq!(
            first_line(&mut stderr).await,
            format!("gatehouse: waiting for a decision on approval {id}\n"),
            "{command}"
        );
        deny(&server, &id).await;
        assert_eq!(waiting.wait().await.unwrap().code(), Some(20), "{command}");
    }
}

/// Starts the agent CLI with `args` (a `request` or `run` that asks a person) and waits for
/// its approval to be announced: the child, its stderr and the approval's id.
async fn waiting_on_approval(
    server: &Server,
    operator: &mut Ws,
    args: &[&str],
) -> (tokio::process::Child, tokio::process::ChildStderr, String) {
    let mut waiting = client(server, AGENT, args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let requested = operator.event("exec.approval.requested").await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let stderr = waiting.stderr.take().unwrap();
    (waiting, stderr, id)
}

/// The first line `stream` gives, read byte by byte so nothing after it is taken.
async fn first_line(stream: &mut tokio::process::ChildStderr) -> String {
    let mut line = String::new();
    while !line.contains('\n') {
        let mut byte = [0_u8; 1];
        tokio::io::AsyncReadExt::read_exact(stream, &mut byte)
            .await
            .unwrap();
        line.push(char::from(byte[0]));
    }
    line
}

/// Operator walkthrough: `request` named an approval before sending the request, so a request
/// refused outright (no token, a wrong one, a scope it lacks) named one that never existed.
#[tokio::test]
async fn request_refused_outright_names_no_approval() {
    let server = Server::start("").await;
    let _operator = server.ws(APPROVER).await;
    let wrong = output(
        &server,
        "not-a-token-of-this-gateway",
        &["request", "--", "ls"],
    )
    .await;
    let forbidden = output(&server, APPROVER, &["request", "--", "ls"]).await;
    for (out, code) in [(wrong, "unauthorized"), (forbidden, "forbidden")] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.starts_with("gatehouse: exec.approval.request: ")
                && stderr.ends_with(&format!("({code})\n"))
                && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
    let no_token = client(&server, AGENT, &["request", "--", "ls"])
        .env_remove("GATEHOUSE_TOKEN")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&no_token.stderr);
    assert!(
        stderr.starts_with("gatehouse: no token:") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// Operator walkthrough: `run` never named the approval it waited on; a denial names it now.
#[tokio::test]
async fn run_names_the_approval_a_person_denied() {
    let server = Server::start("").await;
    let mut operator = server.ws(APPROVER).await;
    let (mut waiting, mut stderr, id) =
        waiting_on_approval(&server, &mut operator, &["run", "--", "ls -la /"]).await;
    first_line(&mut stderr).await;
    deny(&server, &id).await;
    let mut rest = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut rest)
        .await
        .unwrap();
    assert_eq!(waiting.wait().await.unwrap().code(), Some(20));
    assert_eq!(
        rest,
        format!("gatehouse: denied (user-denied; approval {id}): user-denied\n")
    );
}

/// Operator walkthrough: `--limit 0` listed nothing as if nothing matched, and `--timeout 0`
/// created an approval that expired at once.
#[tokio::test]
async fn refuses_a_zero_limit_or_timeout_before_calling_the_gateway() {
    for args in [
        &["approvals", "list", "--limit", "0"][..],
        &["request", "--timeout", "0", "--", "ls"][..],
        &["run", "--timeout", "0", "--", "ls"][..],
    ] {
        let out = offline(AGENT, args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("must be at least 1"), "{args:?}: {stderr}");
    }
}

/// Operator walkthrough: `allowlist add git` added an entry the policy ignores (a bare name);
/// only `doctor` said so, later. It is refused with the policy's reason, before any call.
#[tokio::test]
async fn refuses_to_add_an_allowlist_entry_the_policy_would_ignore() {
    let out = offline(ADMIN, &["approvals", "allowlist", "add", "git"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "gatehouse: not added: allowlist entry `git` ignored: a bare name would match any \
         program of that name; use its absolute path (`command -v git` on the gateway host \
         prints it)\n"
    );
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
    // Operator walkthrough: the duplicate was named as typed, not as the entry it duplicates.
    let shouted = git.to_uppercase();
    let again = output(&server, ADMIN, &["approvals", "allowlist", "add", &shouted]).await;
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.starts_with(&format!("agent `main` already has `{git}` (entry "))
            && stderr.ends_with(&format!(
                "), the same rule as `{shouted}`; nothing changed\n"
            )),
        "{stderr}"
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
