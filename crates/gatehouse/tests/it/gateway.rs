//! Shared helpers for the end-to-end gateway tests: start the real `gatehouse serve` with a
//! config holding one token per scope, and talk to it over `POST /rpc` and `/ws`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// `operator.admin`.
pub(crate) const ADMIN: &str = "admin-token-0123456789abcdef";
/// `operator.approvals`.
pub(crate) const APPROVER: &str = "approver-token-0123456789abc";
/// `agent`.
pub(crate) const AGENT: &str = "agent-token-0123456789abcdef";
/// A second `agent` token, to show agents cannot see each other's approvals.
pub(crate) const OTHER_AGENT: &str = "other-agent-token-0123456789";

/// The config every test server starts with, plus `extra` top-level keys (JSON5).
pub(crate) fn config(extra: &str) -> String {
    config_with_gateway("", extra)
}

/// [`config`] with `gateway_extra` keys inside `gateway` (JSON5, e.g. `limits: {…},`).
pub(crate) fn config_with_gateway(gateway_extra: &str, extra: &str) -> String {
    format!(
        "{{
  gateway: {{ {gateway_extra} auth: {{ tokens: [
    {{ name: 'admin', token: '{ADMIN}', scopes: ['operator.admin'] }},
    {{ name: 'approver', token: '{APPROVER}', scopes: ['operator.approvals'] }},
    {{ name: 'agent', token: '{AGENT}', scopes: ['agent'] }},
    {{ name: 'other-agent', token: '{OTHER_AGENT}', scopes: ['agent'] }},
  ] }} }},
  {extra}
}}"
    )
}

/// A running server with its own data directory.
pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
    pub(crate) dir: tempfile::TempDir,
    http: reqwest::Client,
}

impl Server {
    /// Starts a server on a free loopback port with `config(extra)`.
    pub(crate) async fn start(extra: &str) -> Server {
        Self::start_on(extra, "127.0.0.1:0").await
    }

    /// Starts a server on a free loopback port with the whole config `text`.
    pub(crate) async fn start_with_config(text: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gatehouse.json5"), text).unwrap();
        Self::start_in(dir, "127.0.0.1:0").await
    }

    /// [`Server::start`] on `listen`, for configs that must name the server's own address.
    pub(crate) async fn start_on(extra: &str, listen: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gatehouse.json5"), config(extra)).unwrap();
        Self::start_in(dir, listen).await
    }

    /// Starts a server on `dir`, which holds `gatehouse.json5` and may hold a `data` directory
    /// prepared by the test.
    pub(crate) async fn start_in(dir: tempfile::TempDir, listen: &str) -> Server {
        Self::start_in_with_env(dir, listen, &[]).await
    }

    /// [`Server::start_in`] with `env` added to the server's environment (a `HOME` of the
    /// test's own, a variable that must not reach commands).
    pub(crate) async fn start_in_with_env(
        dir: tempfile::TempDir,
        listen: &str,
        env: &[(&str, &str)],
    ) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
            .args(["serve", "--listen", listen, "--config"])
            .arg(dir.path().join("gatehouse.json5"))
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let base = listening_base(&mut child).await;
        Server {
            child,
            base,
            dir,
            http: reqwest::Client::new(),
        }
    }

    /// Stops the server with SIGKILL-free shutdown (SIGTERM) and starts it again on the same
    /// data directory.
    pub(crate) async fn restart(self) -> Server {
        self.restart_after("TERM").await
    }

    /// Kills the server with SIGKILL, as a crash would, and starts it again on the same data
    /// directory.
    pub(crate) async fn restart_after_kill(self) -> Server {
        self.restart_after("KILL").await
    }

    async fn restart_after(mut self, signal: &str) -> Server {
        let pid = self.child.id().unwrap();
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("kill -{signal} {pid}"))
            .status()
            .unwrap();
        tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("no exit within 20 s of the signal")
            .unwrap();
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        Self::start_in(dir, "127.0.0.1:0").await
    }

    /// Kills the server with SIGKILL (a crash: nothing is flushed, nothing finished) and starts
    /// it again on the same data directory.
    pub(crate) async fn crash_restart(mut self) -> Server {
        self.child.kill().await.unwrap();
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        Self::start_in(dir, "127.0.0.1:0").await
    }

    /// The data directory.
    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A scratch directory for scripts and cwd's.
    pub(crate) fn scratch(&self) -> PathBuf {
        let path = self.dir.path().join("work");
        std::fs::create_dir_all(&path).unwrap();
        path.canonicalize().unwrap()
    }

    /// `GET path` (no token): the body as text.
    pub(crate) async fn get_text(&self, path: &str) -> String {
        let response = self.http.get(format!("{}{path}", self.base)).send().await;
        response.unwrap().text().await.unwrap()
    }

    /// `POST /rpc` as `token`; the whole answer `{ok, payload | error}`.
    pub(crate) async fn rpc(&self, token: &str, method: &str, params: Value) -> Value {
        self.http
            .post(format!("{}/rpc", self.base))
            .bearer_auth(token)
            .json(&json!({"method": method, "params": params}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `exec.approval.resolve` of `id` (or a prefix) with `decision`, as the approver token;
    /// the whole answer.
    pub(crate) async fn resolve(&self, id: &str, decision: &str) -> Value {
        let params = json!({"id": id, "decision": decision});
        self.rpc(APPROVER, "exec.approval.resolve", params).await
    }

    /// `POST /rpc` that must succeed; its payload.
    pub(crate) async fn ok(&self, token: &str, method: &str, params: Value) -> Value {
        let answer = self.rpc(token, method, params).await;
        assert_eq!(answer["ok"], true, "{method}: {answer}");
        answer["payload"].clone()
    }

    /// `POST /rpc` that must fail; its error code.
    pub(crate) async fn error_code(&self, token: &str, method: &str, params: Value) -> String {
        let answer = self.rpc(token, method, params).await;
        assert_eq!(answer["ok"], false, "{method}: {answer}");
        answer["error"]["code"].as_str().unwrap().to_owned()
    }

    /// A connected WebSocket client.
    pub(crate) async fn ws(&self, token: &str) -> Ws {
        self.ws_with(token, json!({})).await.0
    }

    /// A WebSocket client connected with `extra` connect params (`since`, `instance`), and the
    /// connect answer's payload.
    pub(crate) async fn ws_with(&self, token: &str, extra: Value) -> (Ws, Value) {
        Ws::connect(&self.base, token, extra).await
    }
}

/// The base URL a starting `gatehouse serve` (stdout piped) says it listens on; its stdout is
/// drained from then on, so the server never blocks on a full pipe.
pub(crate) async fn listening_base(child: &mut Child) -> String {
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("Gatehouse is listening on ") {
                return url.to_owned();
            }
        }
        panic!("gatehouse exited without listening");
    })
    .await
    .expect("not listening within 60 s");
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    base
}

/// One WebSocket connection; frames that are not the awaited one are kept for later.
pub(crate) struct Ws {
    stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    backlog: Vec<Value>,
}

/// What a WebSocket client read: a JSON frame, or the close frame's code and reason.
enum Frame {
    Json(Value),
    Close(u16, String),
}

impl Ws {
    /// Connects to the gateway at `base` (`http://…`) and sends `connect` with `token` and the
    /// `extra` connect params (`since`, `instance`); the connect answer's payload.
    pub(crate) async fn connect(base: &str, token: &str, extra: Value) -> (Ws, Value) {
        let url = format!("{}/ws", base.replacen("http", "ws", 1));
        let (stream, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let mut ws = Ws {
            stream,
            next_id: 0,
            backlog: Vec::new(),
        };
        let mut params = json!({"token": token, "client": {"name": "it", "version": "0"}});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let answer = ws.call("connect", params).await;
        assert_eq!(answer["ok"], true, "{answer}");
        (ws, answer["payload"].clone())
    }

    /// Sends a request and returns its id without waiting.
    pub(crate) async fn send(&mut self, method: &str, params: Value) -> String {
        self.next_id += 1;
        let id = self.next_id.to_string();
        let frame = json!({"type": "req", "id": id, "method": method, "params": params});
        self.stream
            .send(Message::text(frame.to_string()))
            .await
            .unwrap();
        id
    }

    /// Sends a request and waits for its response frame.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(&id).await
    }

    /// The response to request `id`.
    pub(crate) async fn response(&mut self, id: &str) -> Value {
        self.wait_for(|frame| frame["type"] == "res" && frame["id"] == id)
            .await
    }

    /// The next event named `name`.
    pub(crate) async fn event(&mut self, name: &str) -> Value {
        self.wait_for(|frame| frame["type"] == "event" && frame["event"] == name)
            .await
    }

    /// The close frame's code and reason; JSON frames before it are kept for later.
    pub(crate) async fn close(&mut self) -> (u16, String) {
        loop {
            match self.frame().await {
                Frame::Json(frame) => self.backlog.push(frame),
                Frame::Close(code, reason) => return (code, reason),
            }
        }
    }

    async fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(index);
        }
        loop {
            match self.frame().await {
                Frame::Json(frame) if wanted(&frame) => return frame,
                Frame::Json(frame) => self.backlog.push(frame),
                Frame::Close(code, reason) => panic!("closed with {code}: {reason}"),
            }
        }
    }

    async fn frame(&mut self) -> Frame {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), self.stream.next())
                .await
                .expect("no frame within 30 s")
                .expect("stream ended without a close frame")
                .unwrap();
            match message {
                Message::Text(text) => return Frame::Json(serde_json::from_str(&text).unwrap()),
                Message::Close(Some(close)) => {
                    return Frame::Close(u16::from(close.code), close.reason.as_str().to_owned());
                }
                Message::Close(None) => return Frame::Close(1005, String::new()),
                _ => {}
            }
        }
    }
}

/// Writes an executable script and returns its path.
pub(crate) fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The audit records of approval `id`, once `complete` holds for them (the log is written
/// asynchronously); fails after 5 s.
pub(crate) async fn audit_records(
    server: &Server,
    id: &str,
    complete: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    audit_matching(server, |record| record["approvalId"] == id, complete).await
}

/// The audit records `keep` selects, in log order, once `complete` accepts them (5 s at most).
pub(crate) async fn audit_matching(
    server: &Server,
    keep: impl Fn(&Value) -> bool,
    complete: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let log = server.data().join("audit.jsonl");
    let mut records = Vec::new();
    for _ in 0..50 {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        records = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|record| keep(record))
            .collect();
        if complete(&records) {
            return records;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("audit records incomplete: {records:?}");
}

/// Stores an approval denied by `admin` `age` ago in the database of `data`, as an earlier run
/// would have; its id.
pub(crate) fn settled_long_ago(data: &std::path::Path, age: std::time::Duration) -> String {
    use gatehouse_approvals::{ApprovalRequest, NewApproval, Resolution, mint_approval_id};
    use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let settled_at = now - age.as_millis() as u64;
    let id = mint_approval_id(settled_at - 1_000).to_string();
    let store =
        SqliteApprovalStore::open(data.join("approvals.db"), SqliteOptions::default()).unwrap();
    let request = ApprovalRequest {
        command: "make deploy".to_owned(),
        ..ApprovalRequest::default()
    };
    store
        .insert(&NewApproval {
            id: id.clone(),
            request,
            created_at_ms: settled_at - 1_000,
            expires_at_ms: settled_at + 60_000,
        })
        .unwrap();
    let deny = Resolution::Decided {
        decision: gatehouse_policy::ApprovalDecision::Deny,
        resolved_by: Some("admin".to_owned()),
        reason: None,
    };
    store.resolve(&id, &deny, settled_at).unwrap();
    id
}
