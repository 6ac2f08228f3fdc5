//! What the docs tests share: the `sh` blocks of a Markdown section, and a shell to run them in
//! as a reader would (`sh -c`, the built `gatehouse` on `PATH`, a temporary home), each started
//! script in a process group of its own that is killed with the test, also when it fails.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// The repository's root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each `sh` block between the heading line `from` and the next heading of the same level
/// or higher, as written.
pub(crate) fn sh_blocks(markdown: &str, from: &str) -> Vec<String> {
    let level = from.chars().take_while(|c| *c == '#').count();
    let start = markdown
        .find(&format!("\n{from}\n"))
        .unwrap_or_else(|| panic!("no heading {from:?}"));
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in markdown[start + 1..].lines().skip(1) {
        let heading = line.chars().take_while(|c| *c == '#').count();
        if block.is_none() && heading > 0 && heading <= level && line[heading..].starts_with(' ') {
            break;
        }
        match (&mut block, line.trim_end()) {
            (None, "```sh") => block = Some(String::new()),
            (Some(text), "```") => {
                blocks.push(std::mem::take(text));
                block = None;
            }
            (Some(text), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The command lines of `blocks`: comments (whole lines, or after ` # `) and blank lines
/// dropped.
pub(crate) fn command_lines(blocks: &[String]) -> Vec<String> {
    blocks
        .iter()
        .flat_map(|block| block.lines())
        .map(|line| line.split(" # ").next().unwrap_or(line).trim().to_owned())
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// A free loopback port (free when asked: the caller binds it soon after).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A reader's shell: `gatehouse` on `PATH`, a temporary working directory and state, and no
/// `GATEHOUSE_*` variable but those the test sets.
pub(crate) struct DocShell {
    bin_dir: PathBuf,
    pub(crate) home: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl DocShell {
    pub(crate) fn new() -> Self {
        DocShell {
            bin_dir: Path::new(env!("CARGO_BIN_EXE_gatehouse"))
                .parent()
                .unwrap()
                .to_path_buf(),
            home: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    /// Sets `name` for every script this shell runs.
    pub(crate) fn with_env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// `sh -c SCRIPT` in this shell's directory, in a process group of its own.
    fn command(&self, script: &str) -> Command {
        let path = format!(
            "{}:{}",
            self.bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("sh");
        command
            .args(["-c", script])
            .current_dir(self.home.path())
            .env("PATH", path)
            .env("XDG_STATE_HOME", self.home.path().join("state"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("RUST_LOG", "info")
            .env_remove("GATEHOUSE_URL")
            .env_remove("GATEHOUSE_TOKEN")
            .env_remove("GATEHOUSE_CONFIG")
            .env_remove("GATEHOUSE_CONTEXT")
            .env_remove("GATEHOUSE_LISTEN")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }

    /// Runs `script` to its end; it must exit 0. Its stdout.
    pub(crate) async fn run(&self, script: &str) -> String {
        let out = tokio::time::timeout(Duration::from_secs(60), self.command(script).output())
            .await
            .unwrap_or_else(|_| panic!("`{script}` did not end within 60 s"))
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "`{script}` failed: {stdout}{stderr}");
        stdout
    }

    /// Starts `script` and returns at once; see [`Started`].
    pub(crate) fn start(&self, script: &str) -> Started {
        let mut child = self.command(script).spawn().unwrap();
        let group = Group(child.id().unwrap());
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Started {
            child,
            _group: group,
            stdout,
            stderr,
        }
    }
}

/// A script still running, with what it printed so far.
pub(crate) struct Started {
    child: Child,
    _group: Group,
    pub(crate) stdout: Arc<Mutex<String>>,
    pub(crate) stderr: Arc<Mutex<String>>,
}

impl Started {
    /// Waits for it to exit 0 and returns its stdout.
    pub(crate) async fn succeeded(mut self) -> String {
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("no exit within 60 s")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let printed = self.stdout.lock().unwrap().clone();
        let errors = self.stderr.lock().unwrap().clone();
        assert!(status.success(), "{status}: {printed}{errors}");
        printed
    }
}

/// A started script's process group, killed when dropped, so no `gatehouse` under its `sh`
/// outlives the test.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0)])
            .stderr(Stdio::null())
            .status();
    }
}

/// Collects a child's stream into a shared buffer, line by line.
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

/// The first line of `seen` holding `marker`, once it arrives (60 s at most).
pub(crate) async fn line_with(seen: &Arc<Mutex<String>>, marker: &str, what: &str) -> String {
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
