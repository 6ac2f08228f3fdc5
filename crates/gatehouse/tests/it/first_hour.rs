//! A new operator's first hour with the real binary: the CLI finding this machine's gateway and
//! its admin token by itself, `login` contexts, `status`, what `serve` logs about requests and
//! decisions (and the missing approval route), `--help` examples and shell completions.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::gateway::{Ws, listening_base};

/// `gatehouse serve` on the embedded default, as a newcomer starts it: no config, the default
/// data directory under a temporary `XDG_STATE_HOME`, on a free port (`GATEHOUSE_LISTEN`).
struct Local {
    child: Child,
    home: tempfile::TempDir,
    base: String,
    /// Everything `serve` logged on stderr so far.
    log: Arc<Mutex<String>>,
}

impl Local {
    async fn start() -> Local {
        let home = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
            .arg("serve")
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("GATEHOUSE_LISTEN", format!("127.0.0.1:{port}"))
            .env("RUST_LOG", "info")
            .env_remove("GATEHOUSE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let into = Arc::clone(&log);
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                let mut log = into.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let base = listening_base(&mut child).await;
        Local {
            child,
            home,
            base,
            log,
        }
    }

    fn token_file(&self) -> PathBuf {
        self.home.path().join("state/gatehouse/admin.token")
    }

    fn admin_token(&self) -> String {
        std::fs::read_to_string(self.token_file())
            .unwrap()
            .trim()
            .to_owned()
    }

    /// The CLI as the same user on the same machine: the gateway's address, nothing else.
    fn cli(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
        command
            .args(args)
            .current_dir(self.home.path())
            .env("XDG_STATE_HOME", self.home.path().join("state"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("GATEHOUSE_URL", &self.base)
            .env_remove("GATEHOUSE_TOKEN")
            .env_remove("GATEHOUSE_CONTEXT")
            .env_remove("GATEHOUSE_CONFIG")
            .stdin(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    async fn output(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.cli(args).output().await.unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Waits until `serve` logged a line holding every one of `parts`.
    async fn logged(&self, parts: &[&str]) -> String {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let log = self.log.lock().unwrap().clone();
                if let Some(line) = log
                    .lines()
                    .find(|line| parts.iter().all(|part| line.contains(part)))
                {
                    return line.to_owned();
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no log line with {parts:?}: {}", self.log.lock().unwrap()))
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[tokio::test]
async fn the_cli_finds_the_local_gateway_and_its_admin_token_by_itself() {
    let local = Local::start().await;
    let (code, stdout, stderr) = local.output(&["status"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("gateway    {} (from GATEHOUSE_URL)", local.base))
            && stdout.contains(&format!(
                "identity   admin (operator.admin) (token from {})",
                local.token_file().display()
            ))
            && stdout.contains("operators  none connected")
            && stdout.contains("chat       no channel configured")
            && stdout.contains("pending    0 approvals wait for a person"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: nobody can answer an approval now"),
        "{stderr}"
    );
    let (_, json, _) = local.output(&["status", "--json"]).await;
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["gateway"]["urlFrom"], "GATEHOUSE_URL");
    assert_eq!(json["status"]["operatorClients"], json!([]));
    assert_eq!(json["status"]["pendingApprovals"], 0);

    // A token file others can read is refused with the fix, not used.
    std::fs::set_permissions(local.token_file(), std::fs::Permissions::from_mode(0o640)).unwrap();
    let (code, _, stderr) = local.output(&["approvals", "list"]).await;
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!(
            "admin token file {} is readable by group or others (mode 640), so it is not used: \
             run `chmod 600 {}`",
            local.token_file().display(),
            local.token_file().display()
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn status_names_the_operator_clients_connected_and_what_waits() {
    let local = Local::start().await;
    let _ui = Ws::connect(&local.base, &local.admin_token(), json!({})).await;
    let mut request = local.cli(&["request", "--", "make", "deploy"]);
    let _waiting = request
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    local.logged(&["Approval requested."]).await;
    let (code, stdout, stderr) = local.output(&["status"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("operators  1 connected: it as admin")
            && stdout.contains("pending    1 approval waits for a person"),
        "{stdout}"
    );
    assert!(!stderr.contains("nobody can answer"), "{stderr}");
}

#[tokio::test]
async fn login_saves_a_context_that_later_commands_use_and_logout_forgets_it() {
    let local = Local::start().await;
    let token_path = local.home.path().join("ops.token");
    std::fs::write(&token_path, local.admin_token()).unwrap();
    let mut login = local.cli(&[
        "login",
        "--context",
        "lab",
        "--url",
        &local.base,
        "--with-token",
    ]);
    let login = login
        .env_remove("GATEHOUSE_URL")
        .stdin(std::fs::File::open(&token_path).unwrap())
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&login.stdout);
    assert!(
        login.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&login.stderr)
    );
    assert!(
        said.starts_with(&format!(
            "Logged in to {} as admin (operator.admin); saved as context lab (current)",
            local.base
        )),
        "{said}"
    );
    let contexts = local.home.path().join("config/gatehouse/contexts.json");
    let mode = std::fs::metadata(&contexts).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let (_, listed, _) = local.output(&["login", "--list"]).await;
    let mut lines = listed.lines();
    assert_eq!(
        lines
            .next()
            .map(str::split_whitespace)
            .map(Iterator::collect::<Vec<_>>),
        Some(vec!["CURRENT", "NAME", "URL", "IDENTITY"])
    );
    assert!(lines.next().unwrap().starts_with("*  "), "{listed}");
    assert!(
        !listed.contains(&local.admin_token()),
        "the token is never listed"
    );

    // Without GATEHOUSE_URL, and with the local token moved away, only the context can say
    // where and who.
    std::fs::rename(local.token_file(), local.home.path().join("moved")).unwrap();
    let status = local
        .cli(&["status"])
        .env_remove("GATEHOUSE_URL")
        .output()
        .await
        .unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains(&format!("gateway    {} (from context lab)", local.base))
            && shown.contains("(token from context lab)"),
        "{shown}{}",
        String::from_utf8_lossy(&status.stderr)
    );

    let (code, said, _) = local.output(&["logout"]).await;
    assert_eq!(
        (code, said.as_str()),
        (0, "Forgot context lab and its token\n")
    );
    let status = local
        .cli(&["status"])
        .env_remove("GATEHOUSE_URL")
        .output()
        .await
        .unwrap();
    assert_eq!(status.status.code(), Some(2));
}

#[tokio::test]
async fn a_wrong_token_is_not_saved() {
    let local = Local::start().await;
    let login = local
        .cli(&["login", "--url", &local.base])
        .env("GATEHOUSE_TOKEN", "not-the-token-0123456789")
        .output()
        .await
        .unwrap();
    assert_eq!(login.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&login.stderr);
    assert!(
        stderr.contains("not saved: the gateway at") && stderr.contains("unauthorized"),
        "{stderr}"
    );
    assert!(
        !local
            .home
            .path()
            .join("config/gatehouse/contexts.json")
            .exists()
    );
}

#[tokio::test]
async fn serve_logs_each_approval_and_warns_when_nobody_can_answer() {
    let local = Local::start().await;
    local
        .logged(&["WARN", "No approval route yet", "Open the Control UI"])
        .await;

    // Nobody connected: the request expires at once, with a warning naming the fix.
    let (code, _, stderr) = local.output(&["request", "--", "make", "deploy"]).await;
    assert_eq!(code, 20);
    assert!(stderr.contains("nobody could be asked"), "{stderr}");
    let expired = local.logged(&["WARN", "Approval expired at once"]).await;
    assert!(
        expired.contains("approval_id=") && expired.contains("agent_id=\"main\""),
        "{expired}"
    );

    // With an operator connected: requested, delivered, decided, each with its ids.
    let (mut operator, _) = Ws::connect(&local.base, &local.admin_token(), json!({})).await;
    let waiting = local
        .cli(&["request", "--", "make", "deploy"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let requested = operator.event("exec.approval.requested").await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let line = local.logged(&["INFO", "Approval requested.", &id]).await;
    assert!(
        line.contains("token=\"admin\"") && line.contains("program="),
        "{line}"
    );
    local
        .logged(&["Approval delivered to operator clients.", &id])
        .await;
    let (code, _, stderr) = local
        .output(&["approvals", "resolve", &id, "deny", "--reason", "not now"])
        .await;
    assert_eq!(code, 0, "{stderr}");
    let decided = local.logged(&["Approval decided.", &id]).await;
    assert!(
        decided.contains("decision=\"deny\"") || decided.contains("decision=deny"),
        "{decided}"
    );
    assert!(decided.contains("resolved_by=\"admin\""), "{decided}");
    let exit = waiting.wait_with_output().await.unwrap();
    assert_eq!(exit.status.code(), Some(20));
    let log = local.log.lock().unwrap().clone();
    assert!(!log.contains(&local.admin_token()), "a token in the log");
    assert!(
        !log.contains("make deploy"),
        "the command is left to the audit log"
    );
}

/// Every command's `--help` ends with examples.
#[test]
fn every_command_help_has_examples() {
    let commands: &[&[&str]] = &[
        &[],
        &["check"],
        &["tools"],
        &["serve"],
        &["request"],
        &["run"],
        &["approvals"],
        &["approvals", "list"],
        &["approvals", "get"],
        &["approvals", "resolve"],
        &["approvals", "allowlist", "list"],
        &["approvals", "allowlist", "add"],
        &["approvals", "allowlist", "remove"],
        &["doctor"],
        &["audit", "verify"],
        &["audit", "tail"],
        &["status"],
        &["login"],
        &["logout"],
        &["completions"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let run = crate::gatehouse(&args, "");
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(
            run.stdout.contains("\nExamples:\n  "),
            "{args:?}: {}",
            run.stdout
        );
    }
}

#[test]
fn prints_completion_scripts_that_the_shell_loads() {
    for shell in ["bash", "zsh", "fish"] {
        let run = crate::gatehouse(&["completions", shell], "");
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(
            run.stdout.contains("gatehouse") && run.stdout.contains("approvals"),
            "{shell}"
        );
    }
    let script = crate::gatehouse(&["completions", "bash"], "").stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gatehouse.bash");
    std::fs::write(&file, script).unwrap();
    let loaded = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p gatehouse",
            file.display()
        ))
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{loaded:?}");
    assert!(
        String::from_utf8_lossy(&loaded.stdout).contains("gatehouse"),
        "{loaded:?}"
    );
    let unknown = crate::gatehouse(&["completions", "powershell"], "");
    assert_eq!(unknown.code, 2);
}

/// Issue 35: suggestions named a guessed `/usr/bin/…`. `allowlist add ls` adds the path `ls`
/// resolves to on the gateway host (symlinks followed, as the policy resolves it) and says so.
#[tokio::test]
async fn allowlist_add_resolves_a_bare_name_on_the_gateway_host() {
    let local = Local::start().await;
    let ls = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("ls"))
        .find(|candidate| candidate.is_file())
        .unwrap()
        .canonicalize()
        .unwrap()
        .display()
        .to_string();
    let (code, stdout, stderr) = local
        .output(&["approvals", "allowlist", "add", "--agent", "main", "ls"])
        .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!("gatehouse: `ls` resolves to {ls} on the gateway host; adding that\n")
    );
    assert!(stdout.contains(&format!("  {ls}  never")), "{stdout}");
    let (code, _, stderr) = local
        .output(&["approvals", "allowlist", "add", "no-such-program-here"])
        .await;
    assert_eq!(code, 2);
    assert!(
        stderr.contains("not added: allowlist entry `no-such-program-here` ignored: a bare name"),
        "{stderr}"
    );
}
