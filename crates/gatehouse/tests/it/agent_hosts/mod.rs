//! Agent hosts asking Gatehouse: `gatehouse hook claude-code|codex` and `POST
//! /hooks/claude-code`, driven by the hosts' documented inputs (the fixtures captured from
//! them) and by the real Claude Code and Codex CLIs running offline against the fake model
//! APIs, with approvals answered from the Telegram fake.

mod claude_code;
mod codex;
mod hook_command;
mod http_hook;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use gatehouse_fakes::{Call, FakeHandle};
use serde_json::{Value, json};

use crate::gateway::Server;

/// The Telegram user who approves; their private chat gets the cards.
pub(crate) const APPROVER: i64 = 4242;
/// How long to wait for a card or a host.
pub(crate) const WAIT: Duration = Duration::from_secs(90);

/// A gateway whose Telegram channel is the fake, with a workspace for the agents:
/// - `main`: exec runs without asking; `write` always asks a person; files only in the
///   workspace (`.env` is a denied file there);
/// - `strict`: no exec at all;
/// - `careful`: every command asks a person.
pub(crate) struct Gatehouse {
    pub(crate) telegram: FakeHandle,
    pub(crate) server: Server,
    /// The workspace (canonical), where the hosts run.
    pub(crate) workspace: PathBuf,
}

impl Gatehouse {
    pub(crate) async fn start() -> Gatehouse {
        let telegram = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let workspace = tempfile::tempdir().unwrap().keep().canonicalize().unwrap();
        let server = Server::start(&format!(
            "channels: {{ telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
               execApprovals: {{ approvers: [{APPROVER}] }} }} }},
             tools: {{ profile: 'full', fs: {{ workspaceOnly: true }}, alwaysAsk: ['write'],
               exec: {{ security: 'full', ask: 'off' }} }},
             agents: {{ defaults: {{ workspace: '{}' }}, list: [
               {{ id: 'main' }},
               {{ id: 'strict', tools: {{ exec: {{ security: 'deny' }} }} }},
               {{ id: 'careful', tools: {{ exec: {{ security: 'full', ask: 'always' }} }} }},
             ] }},",
            telegram.base_url,
            workspace.display()
        ))
        .await;
        Gatehouse {
            telegram,
            server,
            workspace,
        }
    }

    /// The `count`-th approval card sent to the approver (from 1), once it is there and the
    /// fake has answered it (its message id is in the answer).
    pub(crate) async fn card(&self, count: usize) -> Call {
        self.telegram
            .wait_for_calls("sendMessage", count, WAIT)
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let card = self.telegram.calls_of("sendMessage")[count - 1].clone();
            if card.answer["result"]["message_id"].is_i64() {
                assert_eq!(card.body["chat_id"], json!(APPROVER), "{:?}", card.body);
                return card;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "card never answered"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Presses the button whose label contains `label` on `card`, as the approver.
    pub(crate) async fn press(&self, card: &Call, label: &str) {
        let data = card.body["reply_markup"]["inline_keyboard"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|row| row.as_array().cloned().unwrap_or_default())
            .find(|button| button["text"].as_str().unwrap_or_default().contains(label))
            .unwrap_or_else(|| panic!("no {label:?} button on {}", card.body))["callback_data"]
            .clone();
        let message_id = card.answer["result"]["message_id"].clone();
        let update = json!({"callback_query": {
            "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "data": data,
            "message": {"message_id": message_id, "chat": {"id": APPROVER}},
        }});
        self.telegram
            .control("/_fake/inject", &update)
            .await
            .unwrap();
    }
}

impl Drop for Gatehouse {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.workspace);
    }
}

/// A hook input fixture captured from the host (crates/gatehouse-hooks/tests/fixtures), with
/// its `cwd` and the paths under the capture's project moved to `workspace`.
pub(crate) fn fixture(host_dir: &str, name: &str, workspace: &Path) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gatehouse-hooks/tests/fixtures")
        .join(host_dir)
        .join(name);
    let mut input: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let captured = input["cwd"].as_str().unwrap().to_owned();
    let moved = input
        .to_string()
        .replace(&captured, &workspace.display().to_string());
    input = serde_json::from_str(&moved).unwrap();
    input
}

/// An installed agent host's native binary: `$var`, else `relative` under `agent-hosts/` in the
/// target directory this test was built in (where .ci/run installs it).
pub(crate) fn host_binary(var: &str, relative: &str, package: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    PathBuf::from(env!("CARGO_BIN_EXE_gatehouse"))
        .ancestors()
        .map(|dir| dir.join("agent-hosts").join(relative))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "this test runs the real {package} from npm, installed by .ci/run under \
                 <target dir>/agent-hosts/ (`npm install --prefix target/agent-hosts/… \
                 --ignore-scripts {package}`), or set {var} to its native binary"
            )
        })
}

/// Runs an agent host's `program` with `args` in `dir`, with a clean environment holding only
/// `PATH`, `HOME` = `home` and `env`, to its end, while `during` acts (presses cards); asserts
/// it exited 0.
pub(crate) async fn run_host(
    program: &Path,
    args: &[&str],
    dir: &Path,
    home: &Path,
    env: &[(&str, &str)],
    during: impl Future<Output = ()>,
) {
    let child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (output, ()) = tokio::join!(
        tokio::time::timeout(WAIT * 2, child.wait_with_output()),
        during
    );
    let output = output
        .unwrap_or_else(|_| panic!("{} did not finish", program.display()))
        .unwrap();
    assert!(
        output.status.success(),
        "{}: {}\n{}",
        program.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The `gatehouse` binary under test.
pub(crate) fn gatehouse_binary() -> &'static str {
    env!("CARGO_BIN_EXE_gatehouse")
}
