//! The README's quickstart, verbatim: its `sh` blocks are read from README.md, must be exactly
//! the commands this test knows, and are run with `sh -c` against the real binary, with the
//! Control UI opened in headless Chromium and **Allow once** pressed there, as a newcomer would.
//! Only the environment differs from a newcomer's: a free port (`GATEHOUSE_LISTEN` for `serve`,
//! `GATEHOUSE_URL` for the rest) and a temporary `XDG_STATE_HOME`, so the test can run beside
//! anything else on the machine.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use crate::cdp::Browser;

/// The quickstart's commands, in order, as README.md must spell them.
const QUICKSTART: [&str; 6] = [
    "cargo install --locked --path crates/gatehouse",
    "gatehouse serve",
    "gatehouse status",
    "gatehouse request -- make deploy",
    "gatehouse approvals list --state pending",
    "gatehouse approvals resolve <id> allow-once",
];

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The commands of every `sh` block from `## Install` up to the end of `## Quickstart…` (its
/// `###` subsections have none), comments and blank lines dropped.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("\n## Install").expect("README has ## Install");
    let rest = &readme[start..];
    let after_quickstart = rest
        .find("\n## Quickstart")
        .expect("README has ## Quickstart")
        + 1;
    let end = rest[after_quickstart..]
        .find("\n## ")
        .map_or(rest.len(), |at| after_quickstart + at);
    let mut commands = Vec::new();
    let mut in_block = false;
    for line in rest[..end].lines() {
        match (in_block, line.trim()) {
            (false, "```sh") => in_block = true,
            (true, "```") => in_block = false,
            (true, text) => {
                let command = text.split(" # ").next().unwrap_or(text).trim();
                if !command.is_empty() && !command.starts_with('#') {
                    commands.push(command.to_owned());
                }
            }
            _ => {}
        }
    }
    commands
}

/// What a newcomer's shell would have, on a port and state directory of the test's own.
struct Shell {
    bin_dir: PathBuf,
    state: tempfile::TempDir,
    work: tempfile::TempDir,
    listen: String,
}

impl Shell {
    fn new() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Shell {
            bin_dir: Path::new(env!("CARGO_BIN_EXE_gatehouse"))
                .parent()
                .unwrap()
                .to_path_buf(),
            state: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            listen: format!("127.0.0.1:{port}"),
        }
    }

    /// `sh -c LINE` with `gatehouse` on `PATH`.
    fn command(&self, line: &str) -> Command {
        let path = format!(
            "{}:{}",
            self.bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("sh");
        command
            .args(["-c", line])
            .current_dir(self.work.path())
            .env("PATH", path)
            .env("XDG_STATE_HOME", self.state.path())
            .env("XDG_CONFIG_HOME", self.state.path().join("config"))
            .env("GATEHOUSE_LISTEN", &self.listen)
            .env("GATEHOUSE_URL", format!("http://{}", self.listen))
            .env("RUST_LOG", "info")
            .env_remove("GATEHOUSE_TOKEN")
            .env_remove("GATEHOUSE_CONFIG")
            .env_remove("GATEHOUSE_CONTEXT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so `Group` ends the `gatehouse` under `sh` too.
            .process_group(0)
            .kill_on_drop(true);
        command
    }

    /// Runs `line` to its end: exit code and stdout, with stderr in the panic message.
    async fn run(&self, line: &str) -> (i32, String) {
        let out = tokio::time::timeout(Duration::from_secs(60), self.command(line).output())
            .await
            .unwrap_or_else(|_| panic!("`{line}` did not end within 60 s"))
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        assert_eq!(code, 0, "`{line}` failed: {stdout}{stderr}");
        (code, stdout)
    }
}

/// A started line's process group, killed when dropped (also when an assertion fails), so
/// no `gatehouse` outlives the test.
struct Group(u32);

impl Group {
    fn of(child: &Child) -> Self {
        Group(child.id().unwrap())
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0)])
            .stderr(Stdio::null())
            .status();
    }
}

/// Collects a child's stream into a shared buffer and waits for a line with `marker`.
fn collect(stream: impl AsyncRead + Unpin + Send + 'static) -> Arc<Mutex<String>> {
    let seen = Arc::new(Mutex::new(String::new()));
    let into = Arc::clone(&seen);
    tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut text = into.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
    seen
}

/// The first line of `seen` holding `marker`, once it arrives.
async fn line_with(seen: &Arc<Mutex<String>>, marker: &str, what: &str) -> String {
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Some(line) = seen
                .lock()
                .unwrap()
                .lines()
                .find(|line| line.contains(marker))
            {
                return line.to_owned();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {what} within 60 s: {}", seen.lock().unwrap()))
}

/// Starts `request` and returns it with the approval id it names while it waits.
async fn waiting_request(shell: &Shell, line: &str) -> (Child, Group, Arc<Mutex<String>>, String) {
    let mut child = shell.command(line).spawn().unwrap();
    let group = Group::of(&child);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let named = line_with(
        &stderr,
        "waiting for a decision on approval ",
        "approval id",
    )
    .await;
    let id = named.rsplit(' ').next().unwrap().to_owned();
    (child, group, stdout, id)
}

/// Waits for `child` to exit 0 and returns what it printed on stdout.
async fn succeeded(mut child: Child, stdout: &Arc<Mutex<String>>) -> String {
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the request did not end within 60 s of the decision")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let printed = stdout.lock().unwrap().clone();
    assert!(status.success(), "{status}: {printed}");
    printed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_quickstart_works_verbatim() {
    assert_eq!(
        readme_commands(),
        QUICKSTART,
        "README.md's quickstart changed: update this test with it"
    );
    let [install, serve, status, request, list, resolve] = QUICKSTART;

    // Not run (a release build takes many minutes): the path must be this binary's crate.
    let path = install.split_once("--path ").map(|(_, path)| path).unwrap();
    let manifest = std::fs::read_to_string(root().join(path).join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"gatehouse\""), "{manifest}");
    assert!(
        root().join("Cargo.lock").exists(),
        "--locked needs Cargo.lock"
    );

    let shell = Shell::new();
    let mut gateway = shell.command(serve).spawn().unwrap();
    let _gateway_group = Group::of(&gateway);
    let served = collect(gateway.stdout.take().unwrap());
    let log = collect(gateway.stderr.take().unwrap());
    let login = line_with(&served, "Control UI login: ", "login URL").await;
    let login_url = login.trim_start_matches("Control UI login: ");
    line_with(&log, "No approval route yet", "start-up warning").await;

    let browser = Browser::start().await;
    let page = browser.new_page(1280, 800, false).await;
    page.navigate(login_url).await;
    page.wait_for(
        "document.body.dataset.connection === 'connected'",
        "the Control UI to connect",
    )
    .await;

    let (_, shown) = shell.run(status).await;
    let token_file = shell.state.path().join("gatehouse/admin.token");
    assert!(
        shown.contains("identity   admin (operator.admin)")
            && shown.contains(&format!("token from {}", token_file.display()))
            && shown.contains("operators  1 connected: control-ui as admin"),
        "{shown}"
    );

    // Approved in the Control UI.
    let (waiting, _group, stdout, id) = waiting_request(&shell, request).await;
    let card = format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{card}\") !== null"),
        "the approval in the Control UI",
    )
    .await;
    page.click(&format!("{card} button[data-decision='allow-once']"))
        .await;
    let answer = succeeded(waiting, &stdout).await;
    assert!(
        answer.starts_with(&format!("allow-once (by admin; approval {id})")),
        "{answer}"
    );
    for logged in [
        "Approval requested.",
        "Approval delivered to operator clients.",
        "Approval decided.",
    ] {
        let line = line_with(&log, logged, logged).await;
        assert!(line.contains(&id), "{line}");
    }

    // Approved from a shell.
    let (waiting, _group, stdout, id) = waiting_request(&shell, request).await;
    let (_, listed) = shell.run(list).await;
    assert!(
        listed.starts_with("ID ") && listed.contains(&id),
        "{listed}"
    );
    let (_, resolved) = shell.run(&resolve.replace("<id>", &id[..8])).await;
    assert_eq!(resolved, format!("{id}: allow-once\n"));
    succeeded(waiting, &stdout).await;
    assert_eq!(browser.problems(), Vec::<String>::new());
}
