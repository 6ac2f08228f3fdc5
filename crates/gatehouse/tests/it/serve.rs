#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic in a test helper is a failed test"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdout, Command};

use crate::gateway::{ADMIN, AGENT, APPROVER, Ws, config};

/// The shutdown grace `Limits::shutdown_grace` gives open connections.
const GRACE: Duration = Duration::from_secs(10);
/// Well inside [`GRACE`]: an answer that comes within it did not wait for the grace to run out.
const AT_ONCE: Duration = Duration::from_secs(6);
/// Every approval asks a person, so `system.run` waits on one.
const ASKING: &str = "tools: { exec: { security: 'allowlist', ask: 'always' } },";
/// Nothing asks, so `system.run` runs at once.
const FULL: &str = "tools: { exec: { security: 'full', ask: 'off' } },";

/// A running `gatehouse serve` and what it printed.
struct Served {
    child: Child,
    base: String,
    /// The generated admin token, when the server printed a login URL.
    token: String,
    _stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

/// `gatehouse serve` on `data_dir` with `extra` flags and no `--listen`; the caller's
/// `GATEHOUSE_CONFIG` is never inherited, so a developer's setting cannot change a result.
fn serve_command(data_dir: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    command
        .args(["serve", "--data-dir"])
        .arg(data_dir)
        .args(extra)
        .env_remove("XDG_STATE_HOME")
        .env_remove("GATEHOUSE_CONFIG")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// [`serve_command`] on a free loopback port.
fn gatehouse(data_dir: &Path, extra: &[&str]) -> Command {
    let mut command = serve_command(data_dir, &["--listen", "127.0.0.1:0"]);
    command.args(extra);
    command
}

/// Starts the embedded default, which prints a login URL carrying its admin token.
async fn start(data_dir: &Path) -> Served {
    launch(gatehouse(data_dir, &["--log-format", "json"]), true).await
}

/// Starts `gatehouse serve` with `config_text` as `<dir>/gatehouse.json5` and `<dir>/data` as
/// its data directory; a second call on the same `dir` restarts it on the same state.
async fn start_configured(dir: &Path, config_text: &str) -> Served {
    let file = dir.join("gatehouse.json5");
    std::fs::write(&file, config_text).unwrap();
    let file = file.display().to_string();
    launch(gatehouse(&dir.join("data"), &["--config", &file]), false).await
}

/// Spawns `command` and reads stdout until it listens (and, with `login`, until the login URL).
async fn launch(mut command: Command, login: bool) -> Served {
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let (base, token) = tokio::time::timeout(Duration::from_secs(30), async {
        let mut base = None;
        while let Some(line) = stdout.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("Gatehouse is listening on ") {
                base = Some(url.to_owned());
                if !login {
                    return (url.to_owned(), String::new());
                }
            }
            if let Some(url) = line.strip_prefix("Control UI login: ") {
                let (_, token) = url
                    .split_once("/#token=")
                    .expect("login URL carries the token");
                return (
                    base.expect("listening before the login URL"),
                    token.to_owned(),
                );
            }
        }
        panic!("gatehouse exited without listening");
    })
    .await
    .expect("not listening within 30 s");
    Served {
        child,
        base,
        token,
        _stdout: stdout,
    }
}

/// Sends SIGTERM to the server.
fn sigterm(served: &Served) {
    let pid = served.child.id().unwrap();
    // The shell's builtin `kill` avoids both `unsafe` libc calls and a dependency on procps.
    let sent = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -TERM {pid}"))
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Waits at most `limit` for the server to exit; its status and stderr.
async fn exited_within(mut served: Served, limit: Duration) -> (ExitStatus, String) {
    let status = tokio::time::timeout(limit, served.child.wait())
        .await
        .unwrap_or_else(|_| panic!("no exit within {limit:?} of SIGTERM"))
        .unwrap();
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(served.child.stderr.as_mut().unwrap(), &mut stderr)
        .await
        .unwrap();
    (status, stderr)
}

async fn terminate(served: Served) -> (ExitStatus, String) {
    sigterm(&served);
    exited_within(served, Duration::from_secs(15)).await
}

/// `POST /rpc` as `token`: the HTTP status and the body.
async fn rpc(base: &str, token: &str, method: &str, params: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/rpc"))
        .bearer_auth(token)
        .json(&json!({"method": method, "params": params}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// A request for an approval as `AGENT`, run in `cwd`.
fn ask_params(cwd: &Path, extra: Value) -> Value {
    let mut params = json!({
        "command": "make deploy",
        "argv": ["make", "deploy"],
        "cwd": cwd,
        "agentId": "main",
        "sessionKey": "s1",
    });
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    params
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

/// Review: `/healthz` half a second after SIGTERM was refused, where protocol.md promised 503.
/// Closing the listener at once is the behaviour (a proxy sees the backend down at its next
/// check, and a stopping gateway takes no new work), and the docs now say so; what is 503 is a
/// request already under way on a connection accepted before the signal.
#[tokio::test]
async fn refuses_new_connections_at_once_on_sigterm_and_answers_a_healthz_under_way_503() {
    let data_dir = tempfile::tempdir().unwrap();
    let served = start(data_dir.path()).await;
    let addr = served.base.trim_start_matches("http://").to_owned();
    let mut under_way = TcpStream::connect(&addr).await.unwrap();
    under_way
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: gatehouse\r\n")
        .await
        .unwrap();
    // Answered, so the connection above was accepted too: a listener accepts in order.
    let health = reqwest::get(format!("{}/healthz", served.base)).await;
    assert_eq!(health.unwrap().status().as_u16(), 200);

    let stopping = Instant::now();
    sigterm(&served);
    let refused = tokio::time::timeout(AT_ONCE, async {
        while TcpStream::connect(&addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(refused.is_ok(), "new connections are refused");
    under_way.write_all(b"\r\n").await.unwrap();
    let mut answer = String::new();
    let read = tokio::time::timeout(AT_ONCE, under_way.read_to_string(&mut answer)).await;
    read.unwrap().unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.ends_with("{\"status\":\"shutting-down\"}"),
        "{answer}"
    );
    let (status, stderr) = exited_within(served, AT_ONCE).await;
    assert!(status.success(), "{status:?}\n{stderr}");
    assert!(stopping.elapsed() < AT_ONCE, "{:?}", stopping.elapsed());
}

#[tokio::test]
async fn reuses_the_admin_token_across_restarts() {
    let data_dir = tempfile::tempdir().unwrap();
    let first = start(data_dir.path()).await;
    let token = first.token.clone();
    let (status, stderr) = terminate(first).await;
    assert!(status.success(), "{stderr}");
    // Operator walkthrough: a fresh database was logged as five schema upgrades.
    assert_eq!(
        stderr.matches("Creating the approvals database.").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("Upgrading"), "{stderr}");
    let second = start(data_dir.path()).await;
    assert_eq!(second.token, token);
    let (status, stderr) = terminate(second).await;
    assert!(status.success(), "{stderr}");
    assert!(
        !stderr.contains("Creating") && !stderr.contains("Upgrading"),
        "{stderr}"
    );
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

/// Operator report: SIGTERM waited for a blocking `exec.approval.request` until its client gave
/// up. Every call waiting for a person now answers `shutting_down` at once, over HTTP (503) and
/// WebSocket (before the 1001 close); the approvals stay pending and the next start cancels
/// them with `gateway-restart`, not `requester-gone`.
#[tokio::test]
async fn answers_calls_waiting_for_a_person_with_shutting_down_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let served = start_configured(dir.path(), &config(ASKING)).await;
    let mut operator = Ws::connect(&served.base, APPROVER, json!({})).await.0;
    let mut agent = Ws::connect(&served.base, AGENT, json!({})).await.0;

    let blocking = tokio::spawn(rpc_owned(
        served.base.clone(),
        "exec.approval.request",
        ask_params(&cwd, json!({})),
    ));
    let run = tokio::spawn(rpc_owned(
        served.base.clone(),
        "system.run",
        json!({"argv": ["true"], "cwd": cwd, "agentId": "main", "sessionKey": "s1"}),
    ));
    let accepted = agent
        .send(
            "exec.approval.request",
            ask_params(&cwd, json!({"twoPhase": true})),
        )
        .await;
    let accepted = agent.response(&accepted).await;
    let two_phase = accepted["payload"]["id"].as_str().unwrap().to_owned();
    let waiting = agent
        .send("exec.approval.waitDecision", json!({"id": two_phase}))
        .await;
    // Frames are read in order: once this is answered, the wait above is running.
    let status = agent.send("gateway.status", json!({})).await;
    agent.response(&status).await;
    let mut pending = Vec::new();
    for _ in 0..3 {
        let requested = operator.event("exec.approval.requested").await;
        pending.push(requested["payload"]["id"].as_str().unwrap().to_owned());
    }
    assert!(pending.contains(&two_phase), "{pending:?}");

    let stopping = Instant::now();
    sigterm(&served);
    let shutting_down = |(status, body): (u16, Value)| {
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["ok"], false, "{body}");
        assert_eq!(body["error"]["code"], "shutting_down", "{body}");
    };
    shutting_down(
        tokio::time::timeout(AT_ONCE, blocking)
            .await
            .unwrap()
            .unwrap(),
    );
    shutting_down(tokio::time::timeout(AT_ONCE, run).await.unwrap().unwrap());
    let answer = tokio::time::timeout(AT_ONCE, agent.response(&waiting))
        .await
        .unwrap();
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(answer["error"]["code"], "shutting_down", "{answer}");
    let (code, reason) = agent.close().await;
    assert_eq!(code, 1001, "{reason}");
    assert!(reason.starts_with("shutting_down: "), "{reason}");
    let (status, stderr) = exited_within(served, AT_ONCE).await;
    assert!(status.success(), "{status:?}\n{stderr}");
    assert!(stopping.elapsed() < AT_ONCE, "{:?}", stopping.elapsed());

    let restarted = start_configured(dir.path(), &config(ASKING)).await;
    for id in &pending {
        let (_, answer) = rpc(
            &restarted.base,
            APPROVER,
            "exec.approval.get",
            json!({"id": id}),
        )
        .await;
        assert_eq!(answer["payload"]["state"], "cancelled", "{answer}");
        assert_eq!(answer["payload"]["reason"], "gateway-restart", "{answer}");
    }
    let (status, stderr) = terminate(restarted).await;
    assert!(status.success(), "{stderr}");
    // Operator walkthrough: the cancellations at start were not logged at all.
    assert!(
        stderr.contains("Cancelled the approvals an earlier run left pending. count=3"),
        "{stderr}"
    );
}

/// `rpc` as `AGENT` with owned arguments, for a spawned task.
async fn rpc_owned(base: String, method: &'static str, params: Value) -> (u16, Value) {
    rpc(&base, AGENT, method, params).await
}

/// Operator report: an HTTP request still running (here a `system.run` of `sleep 60`) held the
/// process past the 10 s grace. Its connection is now dropped when the grace runs out.
#[tokio::test]
async fn drops_an_http_request_still_running_when_the_grace_ends() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let served = start_configured(dir.path(), &config(FULL)).await;
    let mut operator = Ws::connect(&served.base, APPROVER, json!({})).await.0;
    let url = format!("{}/rpc", served.base);
    let pid_file = cwd.join("run.pid");
    let run = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(AGENT)
            .json(&json!({"method": "system.run", "params":
                {"argv": ["sh", "-c", "echo $$ > run.pid; exec sleep 60"], "cwd": cwd,
                 "agentId": "main", "sessionKey": "s1"}}))
            .send()
            .await
    });
    operator.event("exec.running").await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc_entry = Path::new("/proc").join(pid.trim());
    assert!(proc_entry.exists(), "the run is going");

    let stopping = Instant::now();
    sigterm(&served);
    let (status, stderr) = exited_within(served, GRACE + Duration::from_secs(4)).await;
    assert!(status.success(), "{status:?}\n{stderr}");
    assert!(
        stopping.elapsed() >= GRACE - Duration::from_secs(1),
        "the run had its grace: {:?}",
        stopping.elapsed()
    );
    let dropped = tokio::time::timeout(AT_ONCE, run).await.unwrap().unwrap();
    assert!(dropped.is_err(), "{dropped:?}");
    // Dead once it is gone or a zombie not yet reaped by whoever inherited it.
    let alive = || {
        std::fs::read_to_string(proc_entry.join("stat")).is_ok_and(|stat| {
            stat.rsplit(") ")
                .next()
                .is_some_and(|rest| !rest.starts_with('Z'))
        })
    };
    let gone = Instant::now() + AT_ONCE;
    while alive() && Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(), "the run was killed with the gateway");
}

/// Operator report: a second `serve` on the same data directory hung on the audit log's lock
/// and took over silently when the first stopped. It now refuses at once, with exit status 2.
#[tokio::test]
async fn refuses_a_second_serve_on_the_same_data_directory() {
    let data_dir = tempfile::tempdir().unwrap();
    let first = start(data_dir.path()).await;
    let second = tokio::time::timeout(
        Duration::from_secs(20),
        gatehouse(data_dir.path(), &[]).output(),
    )
    .await
    .expect("the second serve neither started nor refused within 20 s")
    .unwrap();
    assert_eq!(second.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!(
            "data directory {} is in use by another gatehouse serve; stop it first or pass \
             another --data-dir",
            data_dir.path().display()
        )),
        "{stderr}"
    );
    assert!(second.stdout.is_empty());

    let health = reqwest::get(format!("{}/healthz", first.base))
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    assert!(terminate(first).await.0.success());
    // The lock died with the first process.
    let third = start(data_dir.path()).await;
    assert!(terminate(third).await.0.success());
}

/// Operator report: `--help` claimed `127.0.0.1:18790` was the default although `gateway.listen`
/// in the config wins over it.
#[test]
fn help_names_gateway_listen_before_the_built_in_address() {
    let help = crate::gatehouse(&["serve", "--help"], "");
    assert_eq!(help.code, 0, "{}", help.stderr);
    let words = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "Address to listen on [default: `gateway.listen` from the config, else 127.0.0.1:18790]"
        ),
        "{words}"
    );
}

/// Operator report: a config whose `gateway.listen` is not an address failed the start only
/// after `admin.token` was generated, leaving a token behind.
#[tokio::test]
async fn leaves_no_admin_token_behind_when_gateway_listen_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gatehouse.json5");
    std::fs::write(&file, "{ gateway: { listen: 'nowhere' } }").unwrap();
    let data_dir = dir.path().join("data");
    let file = file.display().to_string();
    let stderr = refused_start(&data_dir, &["--config", &file]).await;
    assert!(
        stderr.contains("`gateway.listen`: \"nowhere\" is not an IP address and port"),
        "{stderr}"
    );
    assert!(!data_dir.join("admin.token").exists());
}

/// Runs a `serve` that must refuse to start: exit status 2, nothing on stdout (so no login
/// URL); returns its stderr.
async fn refused_start(data_dir: &Path, extra: &[&str]) -> String {
    let output = serve_command(data_dir, extra).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Operator report: `GATEHOUSE_CONFIG` chose the config of `check` and `tools` but not of
/// `serve`, which silently ran the embedded default with a generated token instead.
#[tokio::test]
async fn reads_the_config_named_by_gatehouse_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gatehouse.json5");
    std::fs::write(&file, config("")).unwrap();
    let data_dir = dir.path().join("data");
    let mut command = gatehouse(&data_dir, &[]);
    command.env("GATEHOUSE_CONFIG", &file);
    let served = launch(command, false).await;
    let (status, answer) = rpc(&served.base, ADMIN, "gateway.status", json!({})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["payload"]["caller"]["name"], "admin", "{answer}");
    assert!(!data_dir.join("admin.token").exists());
    assert!(terminate(served).await.0.success());
}

/// Operator report: with the port taken, `serve` opened the database, generated `admin.token`
/// and connected the chat channels before it found out it could not listen.
#[tokio::test]
async fn fails_at_once_and_creates_nothing_when_the_port_is_taken() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let stderr = refused_start(&data_dir, &["--listen", &address]).await;
    assert!(
        stderr.contains(&format!("cannot listen on {address}")),
        "{stderr}"
    );
    for created_later in ["admin.token", "approvals.db", "exec-approvals.json"] {
        assert!(
            !data_dir.join(created_later).exists(),
            "{created_later} was created"
        );
    }
}
