//! `gatehouse mcp` driven by a real MCP client nobody here wrote: the official MCP Python SDK
//! (PyPI `mcp`, pinned by .ci/run), through `fixtures/mcp_driver.py`, against a real
//! `gatehouse serve`. The test acts as the operator over the gateway's own protocol.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::gateway::{ADMIN, AGENT, APPROVER, Server};

/// The MCP Python SDK version the tests are written against (.ci/run installs it).
const SDK_VERSION: &str = "2.3.0";

/// Environment variable naming a Python that has the MCP SDK, for machines where the venv
/// .ci/run makes (`<target dir>/mcp-python`) is not the one to use.
const PYTHON_VAR: &str = "GATEHOUSE_MCP_PYTHON";

/// A policy that asks a person about every command.
const ASKING: &str = "tools: { exec: { security: 'allowlist', ask: 'always' } },";

/// The Python with the SDK: `GATEHOUSE_MCP_PYTHON`, else `mcp-python/bin/python` in the target
/// directory this test binary was built in (or any directory above it).
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os(PYTHON_VAR) {
        return PathBuf::from(path);
    }
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_gatehouse"));
    binary
        .ancestors()
        .map(|dir| dir.join("mcp-python/bin/python"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the MCP tests need the official MCP Python SDK (PyPI mcp=={SDK_VERSION}) in a \
                 venv at <target dir>/mcp-python: run .ci/run once, or `python3 -m venv \
                 target/mcp-python && target/mcp-python/bin/pip install mcp=={SDK_VERSION}`, or \
                 set {PYTHON_VAR} to a Python that has it"
            )
        })
}

/// The Python SDK's client, running `gatehouse mcp` as its stdio server.
struct Client {
    child: Child,
    stdin: ChildStdin,
    events: Lines<BufReader<ChildStdout>>,
    /// The `ready` event: what `initialize` answered.
    ready: Value,
}

impl Client {
    /// Starts `gatehouse mcp ARGS` under the SDK's client, with `env` added to the server's
    /// environment as a client config's `env` block would.
    async fn start(args: &[&str], env: &[(&str, &str)]) -> Client {
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/mcp_driver.py");
        let mut child = Command::new(python())
            .arg(driver)
            .arg(env!("CARGO_BIN_EXE_gatehouse"))
            .arg("mcp")
            .args(args)
            .env_remove("GATEHOUSE_URL")
            .env_remove("GATEHOUSE_TOKEN")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let events = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut client = Client {
            child,
            stdin,
            events,
            ready: Value::Null,
        };
        client.ready = client.next().await;
        assert_eq!(client.ready["event"], "ready", "{}", client.ready);
        assert_eq!(
            client.ready["sdk"], SDK_VERSION,
            "the tests are written against mcp=={SDK_VERSION}"
        );
        client
    }

    /// Starts `gatehouse mcp` for `server` as the agent token, with `args`.
    async fn of(server: &Server, args: &[&str]) -> Client {
        let mut all = vec!["--url", &server.base, "--token", AGENT];
        all.extend_from_slice(args);
        Client::start(&all, &[]).await
    }

    async fn send(&mut self, op: Value) {
        let line = format!("{op}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }

    /// The driver's next event.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.events.next_line())
            .await
            .expect("no event from the MCP client within 60 s")
            .unwrap()
            .expect("the MCP client exited");
        serde_json::from_str(&line).unwrap()
    }

    async fn tools(&mut self) -> Vec<Value> {
        self.send(json!({"op": "list"})).await;
        let tools = self.next().await;
        tools["tools"].as_array().unwrap().clone()
    }

    /// Starts a call (`op` holds `tool`, `args` and any cancel option) without waiting.
    async fn start_call(&mut self, op: Value) {
        let mut op = op;
        op["op"] = json!("call");
        self.send(op).await;
    }

    /// The progress events and the final event of the call in flight.
    async fn outcome(&mut self) -> (Vec<Value>, Value) {
        let mut progress = Vec::new();
        loop {
            let event = self.next().await;
            if event["event"] == "progress" {
                progress.push(event);
            } else {
                return (progress, event);
            }
        }
    }

    /// Calls `tool` with `args`; its final event.
    async fn call(&mut self, tool: &str, args: Value) -> Value {
        self.start_call(json!({"tool": tool, "args": args})).await;
        self.outcome().await.1
    }

    /// Closes the session (stdin) and waits for the client, and with it the server, to exit.
    async fn close(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the MCP client did not exit within 20 s of its input closing")
            .unwrap();
        assert!(status.success(), "the MCP client failed: {status}");
    }
}

/// The real path of `program` on `PATH`, as the gateway's allowlist matches it.
pub(crate) fn on_path(program: &str) -> String {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap()
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// Allowlists `program` for agent `main` in the gateway's `exec-approvals.json` (read per
/// request, so it applies at once).
pub(crate) fn allowlist(server: &Server, program: &str) {
    let file =
        json!({"version": 1, "agents": {"main": {"allowlist": [{"pattern": on_path(program)}]}}});
    std::fs::write(server.data().join("exec-approvals.json"), file.to_string()).unwrap();
}

fn text(event: &Value) -> &str {
    event["text"].as_str().unwrap()
}

#[tokio::test]
async fn the_sdk_lists_both_tools_with_strict_schemas() {
    let server = Server::start("").await;
    let mut client = Client::of(&server, &[]).await;
    assert_eq!(client.ready["server"]["name"], "gatehouse");
    assert!(
        client.ready["instructions"]
            .as_str()
            .unwrap()
            .contains("check_command")
    );
    let tools = client.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["check_command", "run_command"]);
    let run = &tools[1];
    assert_eq!(run["inputSchema"]["required"], json!(["cwd"]));
    assert_eq!(run["inputSchema"]["additionalProperties"], false);
    for field in ["command", "argv", "cwd", "env", "timeoutMs", "description"] {
        assert!(
            run["inputSchema"]["properties"][field]["description"].is_string(),
            "{field} undocumented: {run}"
        );
    }
    assert_eq!(run["annotations"]["destructiveHint"], true);
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    client.close().await;
}

#[tokio::test]
async fn check_command_gives_the_policys_answer_for_each_segment_and_runs_nothing() {
    let server = Server::start("").await;
    allowlist(&server, "printf");
    let cwd = server.scratch();
    let mut client = Client::of(&server, &[]).await;
    let allowed = client
        .call(
            "check_command",
            json!({"command": "printf hi | wc -l", "cwd": cwd}),
        )
        .await;
    assert_eq!(allowed["isError"], false, "{allowed}");
    assert_eq!(allowed["structured"]["decision"], "allow", "{allowed}");
    let shown = text(&allowed);
    assert!(shown.starts_with("allow: "), "{shown}");
    assert!(
        shown.contains(&format!("printf hi -> {}", on_path("printf"))),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("wc -l -> {}", on_path("wc"))),
        "{shown}"
    );
    // The same decision `exec.policy.check` gives, field for field.
    let direct = server
        .ok(
            AGENT,
            "exec.policy.check",
            json!({"command": "printf hi | wc -l", "cwd": cwd, "agentId": "main"}),
        )
        .await;
    assert_eq!(allowed["structured"], direct);

    let marker = cwd.join("marker");
    let command = format!("touch {}", marker.display());
    let asks = client
        .call("check_command", json!({"command": command, "cwd": cwd}))
        .await;
    assert_eq!(asks["structured"]["decision"], "ask", "{asks}");
    assert!(text(&asks).contains("would ask a person first"), "{asks}");
    assert!(!marker.exists(), "check_command ran the command");
    client.close().await;
}

#[tokio::test]
async fn runs_an_allowlisted_command_and_returns_its_output() {
    let server = Server::start("").await;
    allowlist(&server, "printf");
    // Found through GATEHOUSE_URL and GATEHOUSE_TOKEN, as a client config's `env` block sets them.
    let mut client = Client::start(
        &[],
        &[("GATEHOUSE_URL", &server.base), ("GATEHOUSE_TOKEN", AGENT)],
    )
    .await;
    let result = client
        .call(
            "run_command",
            json!({"argv": ["printf", "%s\\n", "hello", "$HOME"], "cwd": server.scratch()}),
        )
        .await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        text(&result)
            .lines()
            .next()
            .unwrap()
            .split(" (")
            .next()
            .unwrap(),
        "Exit code 0"
    );
    // No shell: `$HOME` arrives as it was written.
    assert!(
        text(&result).contains("--- stdout ---\nhello\n$HOME"),
        "{result}"
    );
    assert_eq!(result["structured"]["exitCode"], 0);
    assert_eq!(result["structured"]["approval"], Value::Null);
    client.close().await;
}

#[tokio::test]
async fn long_output_is_cut_in_the_middle_and_every_cut_is_marked() {
    let server = Server::start("tools: { exec: { security: 'full', ask: 'off' } },").await;
    let mut client = Client::of(&server, &["--max-output-bytes", "1000"]).await;
    // 23,901 bytes: under the gateway's 64 KiB, over this server's 1,000.
    let result = client
        .call(
            "run_command",
            json!({"command": "seq 1 5000; echo the-end", "cwd": server.scratch()}),
        )
        .await;
    let shown = text(&result);
    assert!(shown.contains("--- stdout ---\n1\n2\n3\n"), "{shown}");
    assert!(
        shown.ends_with("the-end\n[gatehouse: 22901 bytes of stdout were left out in the middle]"),
        "{shown}"
    );
    assert!(!shown.contains("the gateway kept only"), "{shown}");
    assert_eq!(result["structured"]["outputCut"], true);
    // Over the gateway's limit: it kept the beginning, and the result says so.
    let result = client
        .call(
            "run_command",
            json!({"command": "head -c 70000 /dev/zero | tr '\\0' x", "cwd": server.scratch()}),
        )
        .await;
    assert!(
        text(&result).ends_with(
            "[gatehouse: the gateway kept only the first part of stdout; the rest was never read]"
        ),
        "{result}"
    );
    client.close().await;
}

/// Starts `run_command` for a command that asks, and returns the approval as the operator's
/// `exec.approval.requested` event carries it.
async fn asked(
    server: &Server,
    client: &mut Client,
    operator: &mut crate::gateway::Ws,
    call: Value,
) -> Value {
    client.start_call(call).await;
    let requested = operator.event("exec.approval.requested").await;
    let id = requested["payload"]["id"].as_str().unwrap();
    server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await
}

#[tokio::test]
async fn waits_for_a_person_reports_progress_and_runs_once_approved() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut client = Client::of(&server, &[]).await;
    let work = server.scratch();
    let call = json!({"tool": "run_command", "args": {
        "command": "echo approved-run > out.txt; cat out.txt",
        "cwd": work, "description": "write the marker"}});
    let approval = asked(&server, &mut client, &mut operator, call).await;
    let id = approval["id"].as_str().unwrap().to_owned();
    // Approvers see the client as it introduced itself in `initialize`.
    let session = approval["request"]["sessionKey"].as_str().unwrap();
    assert!(session.starts_with("mcp:gatehouse-it@1.2.3:"), "{approval}");
    assert_eq!(approval["request"]["agentId"], "main");
    assert!(!work.join("out.txt").exists(), "ran before anyone approved");

    let pending = client.next().await;
    assert_eq!(pending["event"], "progress", "{pending}");
    let message = pending["message"].as_str().unwrap();
    for part in [
        "Waiting for a person to approve `echo approved-run > out.txt; cat out.txt`",
        "(the agent says: write the marker)",
        &format!("Approval {} (id {id})", &id[..8]),
        "Control UI",
    ] {
        assert!(message.contains(part), "{part:?} missing from {message}");
    }

    let resolved = server.resolve(&id, "allow-once").await;
    assert_eq!(resolved["ok"], true, "{resolved}");
    let (_, result) = client.outcome().await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        text(&result).contains("--- stdout ---\napproved-run"),
        "{result}"
    );
    assert!(
        text(&result).contains(&format!("Approval {}: allow-once by approver", &id[..8])),
        "{result}"
    );
    assert_eq!(result["structured"]["runId"], id.as_str());
    assert_eq!(result["structured"]["approval"]["resolvedBy"], "approver");
    client.close().await;
}

/// Clients that reset their timeout on progress rely on hearing something while a person takes
/// their time and while the approved command runs.
#[tokio::test]
async fn a_long_wait_and_a_long_run_keep_reporting_progress() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut client = Client::of(&server, &[]).await;
    let call = json!({"tool": "run_command", "args": {
        "command": "sleep 5; echo slept", "cwd": server.scratch()}});
    let approval = asked(&server, &mut client, &mut operator, call).await;
    let id = approval["id"].as_str().unwrap();
    let mut progress = vec![client.next().await];
    // The wait outlasts one heartbeat (10 s) before anyone answers.
    while !progress.last().unwrap()["message"]
        .as_str()
        .unwrap()
        .starts_with("Still waiting")
    {
        progress.push(client.next().await);
    }
    assert!(
        progress.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .contains(&format!("approval {}", &id[..8])),
        "{progress:?}"
    );
    server.resolve(id, "allow-once").await;
    let (more, result) = client.outcome().await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        more.iter()
            .any(|p| p["message"] == "Approved (allow-once by approver); running"),
        "{more:?}"
    );
    progress.extend(more);
    let steps: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    client.close().await;
}

#[tokio::test]
async fn a_denied_command_is_a_tool_error_with_the_approvers_reason_and_never_runs() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut client = Client::of(&server, &["--agent", "ops", "--session", "chosen-session"]).await;
    let work = server.scratch();
    let call = json!({"tool": "run_command", "args": {"argv": ["touch", "marker"], "cwd": work}});
    let approval = asked(&server, &mut client, &mut operator, call).await;
    assert_eq!(approval["request"]["agentId"], "ops");
    assert_eq!(approval["request"]["sessionKey"], "chosen-session");
    let id = approval["id"].as_str().unwrap();
    let denied = server
        .ok(
            APPROVER,
            "exec.approval.resolve",
            json!({"id": id, "decision": "deny", "reason": "use the staging box"}),
        )
        .await;
    assert_eq!(denied["applied"], true);
    let (_, result) = client.outcome().await;
    assert_eq!(result["isError"], true, "{result}");
    let shown = text(&result);
    assert!(shown.contains("a person denied it"), "{shown}");
    assert!(
        shown.contains(&format!(
            "Approval {}: deny by approver: \"use the staging box\"",
            &id[..8]
        )),
        "{shown}"
    );
    assert_eq!(result["structured"]["reason"], "user-denied");
    assert!(!work.join("marker").exists());
    client.close().await;
}

#[tokio::test]
async fn a_command_the_policy_refuses_is_a_tool_error_and_never_runs() {
    let server = Server::start("tools: { exec: { security: 'deny' } },").await;
    let mut client = Client::of(&server, &[]).await;
    let work = server.scratch();
    let result = client
        .call(
            "run_command",
            json!({"command": "touch marker", "cwd": work}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).starts_with("Gatehouse did not run the command: the policy refuses it."),
        "{result}"
    );
    assert!(text(&result).contains("security is deny"), "{result}");
    assert!(!work.join("marker").exists());
    // Arguments the gateway could read another way are refused before it is asked.
    let both = client
        .call(
            "run_command",
            json!({"command": "ls", "argv": ["ls"], "cwd": work}),
        )
        .await;
    assert_eq!(both["isError"], true);
    assert!(text(&both).contains("not both"), "{both}");
    let relative = client
        .call("run_command", json!({"command": "ls", "cwd": "work"}))
        .await;
    assert!(text(&relative).contains("absolute"), "{relative}");
    // An unknown tool is the protocol's error, not a crash.
    let unknown = client.call("rm_everything", json!({})).await;
    assert_eq!(unknown["event"], "protocolError", "{unknown}");
    client.close().await;
}

#[tokio::test]
async fn cancelling_a_call_withdraws_its_pending_approval() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut client = Client::of(&server, &[]).await;
    let work = server.scratch();
    let call = json!({"tool": "run_command", "cancelOnProgress": true,
        "args": {"command": "touch marker", "cwd": work}});
    let approval = asked(&server, &mut client, &mut operator, call).await;
    let (progress, last) = client.outcome().await;
    assert_eq!(progress.len(), 1, "{progress:?}");
    assert_eq!(last["event"], "cancelled", "{last}");
    // The server is still up (the session goes on); the gateway heard the request go away.
    let cancelled = operator.event("exec.approval.cancelled").await;
    assert_eq!(cancelled["payload"]["id"], approval["id"]);
    assert_eq!(cancelled["payload"]["reason"], "requester-gone");
    let answer = server
        .resolve(approval["id"].as_str().unwrap(), "allow-once")
        .await;
    assert_eq!(answer["error"]["code"], "approval_cancelled", "{answer}");
    assert!(!work.join("marker").exists());
    // And it still answers.
    let checked = client
        .call("check_command", json!({"command": "ls", "cwd": work}))
        .await;
    assert_eq!(checked["isError"], false, "{checked}");
    client.close().await;
}

#[tokio::test]
async fn cancelling_a_running_command_kills_it() {
    let server = Server::start("tools: { exec: { security: 'full', ask: 'off' } },").await;
    let mut client = Client::of(&server, &[]).await;
    let work = server.scratch();
    client
        .start_call(json!({"tool": "run_command", "cancelAfter": 2.0,
            "args": {"command": "echo $$ > pid; exec sleep 60", "cwd": work}}))
        .await;
    let (_, last) = client.outcome().await;
    assert_eq!(last["event"], "cancelled", "{last}");
    let pid = std::fs::read_to_string(work.join("pid")).unwrap();
    let process = PathBuf::from(format!("/proc/{}", pid.trim()));
    for _ in 0..50 {
        if !process.exists() {
            client.close().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the command (pid {}) outlived its cancelled call",
        pid.trim()
    );
}

#[tokio::test]
async fn with_the_gateway_down_every_call_is_an_error_and_nothing_runs() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path().display().to_string();
    let mut client = Client::start(&["--url", &url, "--token", ADMIN], &[]).await;
    assert_eq!(client.tools().await.len(), 2);
    for tool in ["check_command", "run_command"] {
        let result = client
            .call(tool, json!({"command": "touch marker", "cwd": cwd}))
            .await;
        assert_eq!(result["isError"], true, "{result}");
        assert!(
            text(&result).contains(&format!("cannot reach the gateway at {url}")),
            "{result}"
        );
        assert!(text(&result).contains("Nothing was run"), "{result}");
    }
    assert!(!work.path().join("marker").exists());
    client.close().await;
}
