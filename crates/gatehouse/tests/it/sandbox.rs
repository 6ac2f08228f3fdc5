//! Sandboxed `system.run` against the real binary and the real bubblewrap: what each isolation
//! mode shows and keeps, the network, the environment a run starts with, `/elevated` moving a
//! run to the host, the binding checked through a bind mount, and a refused mount.
//!
//! Each server runs with a `HOME` of the test's own (`<dir>/home`, holding a visible
//! `Documents`, hidden `.ssh` and `.secret`, and the workspace `work`), so no test reads or
//! writes the real home.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::gateway::{AGENT, APPROVER, Server, Ws, config};

/// A variable of the gateway's own that no command may see.
const GATEWAY_ONLY: (&str, &str) = ("GATEHOUSE_TEST_GATEWAY_ONLY", "gateway-secret-value");

/// Every command runs without a person unless a test asks for one.
const FULL: &str = "security: 'full', ask: 'off'";

/// A server whose agents run sandboxed under `sandbox` (JSON5 keys of `agents.defaults.sandbox`
/// beside `mode: 'all'`), with `exec` settings `exec` and `extra` top-level keys.
struct Sandboxed {
    server: Server,
    home: PathBuf,
}

impl Sandboxed {
    /// A sandboxed `main` agent with the workspace `~/work`, `sandbox` beside `mode: 'all'`,
    /// exec settings `exec` and `extra` top-level keys.
    async fn start(sandbox: &str, exec: &str, extra: &str) -> Sandboxed {
        Self::with_config(&format!(
            "tools: {{ exec: {{ {exec} }} }},
             agents: {{ defaults: {{ workspace: '~/work', sandbox: {{ mode: 'all', {sandbox} }} }} }},
             {extra}"
        ))
        .await
    }

    /// The same home and workspace with no sandbox: every run on the host.
    async fn on_host() -> Sandboxed {
        Self::with_config(&format!(
            "tools: {{ exec: {{ {FULL} }} }}, agents: {{ defaults: {{ workspace: '~/work' }} }},"
        ))
        .await
    }

    /// A server with `keys` (top-level JSON5 keys beside the tokens).
    async fn with_config(keys: &str) -> Sandboxed {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        for sub in ["Documents", ".ssh", ".secret", "work"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        std::fs::write(home.join("Documents/readme.txt"), "visible\n").unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE\n").unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(dir.path().join("gatehouse.json5"), config(keys)).unwrap();
        let home_var = home.display().to_string();
        let env = [("HOME", home_var.as_str()), GATEWAY_ONLY, ("PS4", "$(id)")];
        let server = Server::start_in_with_env(dir, "127.0.0.1:0", &env).await;
        Sandboxed { server, home }
    }

    fn workspace(&self) -> PathBuf {
        self.home.join("work")
    }

    fn root(&self) -> &Path {
        self.home.parent().unwrap()
    }

    /// `system.run` params of `command` (a shell string) in the workspace, with `extra`.
    fn params(&self, command: &str, extra: Value) -> Value {
        let mut params = json!({"command": command, "cwd": self.workspace(), "agentId": "main",
                                "sessionKey": "agent:main:telegram:group:1"});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        params
    }

    /// The answer of `system.run` of `command`.
    async fn run(&self, command: &str) -> Value {
        self.run_with(command, json!({})).await
    }

    async fn run_with(&self, command: &str, extra: Value) -> Value {
        self.server
            .ok(AGENT, "system.run", self.params(command, extra))
            .await
    }
}

/// `(exitCode, stdout)` of a finished run; panics with the answer otherwise.
fn finished(answer: &Value) -> (i64, String) {
    assert_eq!(answer["status"], "finished", "{answer}");
    (
        answer["exitCode"].as_i64().unwrap(),
        answer["stdout"].as_str().unwrap().to_owned(),
    )
}

/// `(reason, detail)` of a denied run.
fn denied(answer: &Value) -> (String, String) {
    assert_eq!(answer["status"], "denied", "{answer}");
    (
        answer["reason"].as_str().unwrap().to_owned(),
        answer["detail"].as_str().unwrap().to_owned(),
    )
}

/// Prints `present` or `absent` for each path, one per line.
fn probe_paths(paths: &[&str]) -> String {
    paths
        .iter()
        .map(|path| format!("if [ -e {path} ]; then echo present; else echo absent; fi"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[tokio::test]
async fn home_isolation_persists_its_own_home_and_hides_the_real_one() {
    let sandboxed = Sandboxed::start("isolation: 'home'", FULL, "").await;
    let home = sandboxed.home.display().to_string();
    let first = sandboxed
        .run(&format!(
            "echo kept > ~/note && {} && echo \"$HOME\"",
            probe_paths(&["~/.ssh", "~/Documents", "~/.secret"])
        ))
        .await;
    assert_eq!(
        finished(&first),
        (0, format!("absent\nabsent\nabsent\n{home}\n"))
    );
    // The note went to the agent's own home under the data directory, not the real home.
    assert!(!sandboxed.home.join("note").exists());
    let kept = sandboxed.server.data().join("sandbox/main/home/note");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "kept\n");
    let second = sandboxed.run("cat ~/note").await;
    assert_eq!(finished(&second), (0, "kept\n".to_owned()));
}

#[tokio::test]
async fn ephemeral_isolation_keeps_nothing_but_the_workspace() {
    let sandboxed = Sandboxed::start("isolation: 'ephemeral'", FULL, "").await;
    let first = sandboxed
        .run("echo gone > ~/note && echo stays > kept.txt")
        .await;
    assert_eq!(finished(&first).0, 0);
    let second = sandboxed.run(&probe_paths(&["~/note", "kept.txt"])).await;
    assert_eq!(finished(&second), (0, "absent\npresent\n".to_owned()));
    assert_eq!(
        std::fs::read_to_string(sandboxed.workspace().join("kept.txt")).unwrap(),
        "stays\n"
    );
}

#[tokio::test]
async fn a_write_outside_the_workspace_fails_and_the_host_is_unchanged() {
    let sandboxed = Sandboxed::start("isolation: 'ephemeral'", FULL, "").await;
    let outside = sandboxed.root().join("outside");
    for target in [
        outside.join("planted"),
        PathBuf::from("/usr/planted-by-a-sandboxed-run"),
        PathBuf::from("/etc/planted-by-a-sandboxed-run"),
    ] {
        let answer = sandboxed
            .run(&format!("echo x > {}", target.display()))
            .await;
        assert_ne!(finished(&answer).0, 0, "{} {answer}", target.display());
        assert!(!target.exists(), "{}", target.display());
    }
    // The rest of the host is not even visible.
    let answer = sandboxed
        .run(&probe_paths(&[
            &outside.display().to_string(),
            "/etc/shadow",
        ]))
        .await;
    assert_eq!(finished(&answer), (0, "absent\nabsent\n".to_owned()));
}

#[tokio::test]
async fn autodocs_read_shows_the_homes_plain_directories_read_only() {
    let sandboxed = Sandboxed::start("isolation: 'autodocs-read'", FULL, "").await;
    let answer = sandboxed
        .run(&format!(
            "cat ~/Documents/readme.txt && {}",
            probe_paths(&["~/.ssh", "~/.secret"])
        ))
        .await;
    assert_eq!(
        finished(&answer),
        (0, "visible\nabsent\nabsent\n".to_owned())
    );
    let write = sandboxed.run("echo x > ~/Documents/new.txt").await;
    assert_ne!(finished(&write).0, 0, "{write}");
    assert!(!sandboxed.home.join("Documents/new.txt").exists());
}

#[tokio::test]
async fn autodocs_write_writes_through_to_the_homes_directories() {
    let sandboxed = Sandboxed::start("isolation: 'autodocs-write'", FULL, "").await;
    let answer = sandboxed
        .run(&format!(
            "echo written > ~/Documents/new.txt && {}",
            probe_paths(&["~/.ssh"])
        ))
        .await;
    assert_eq!(finished(&answer), (0, "absent\n".to_owned()));
    assert_eq!(
        std::fs::read_to_string(sandboxed.home.join("Documents/new.txt")).unwrap(),
        "written\n"
    );
}

#[tokio::test]
async fn volumes_isolation_keeps_only_the_volumes() {
    let sandboxed = Sandboxed::start("isolation: 'volumes', volumes: ['~/.cache']", FULL, "").await;
    let first = sandboxed
        .run("echo cached > ~/.cache/c && echo lost > ~/loose")
        .await;
    assert_eq!(finished(&first).0, 0);
    let second = sandboxed
        .run(&probe_paths(&["~/.cache/c", "~/loose"]))
        .await;
    assert_eq!(finished(&second), (0, "present\nabsent\n".to_owned()));
}

/// The gateway listens on the host's loopback; a sandboxed run without `network` has its own.
#[tokio::test]
async fn a_sandboxed_run_has_no_network_unless_the_config_allows_it() {
    let port = |server: &Server| {
        server
            .base
            .rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('/')
            .to_owned()
    };
    let connect = |port: String| {
        format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' && echo connected || echo refused")
    };
    let closed = Sandboxed::start("isolation: 'ephemeral'", FULL, "").await;
    let answer = closed.run(&connect(port(&closed.server))).await;
    assert_eq!(finished(&answer).1, "refused\n", "{answer}");
    let open = Sandboxed::start("isolation: 'ephemeral', network: true", FULL, "").await;
    let answer = open.run(&connect(port(&open.server))).await;
    assert_eq!(finished(&answer).1, "connected\n", "{answer}");
}

#[tokio::test]
async fn a_run_starts_with_a_built_environment_not_the_gateways() {
    let sandboxed = Sandboxed::start("isolation: 'ephemeral'", FULL, "").await;
    let answer = sandboxed
        .run_with("env", json!({"env": {"CI": "1", "LANG": "zh_TW.BIG5"}}))
        .await;
    let (_, env) = finished(&answer);
    assert!(!env.contains(GATEWAY_ONLY.0), "{env}");
    assert!(!env.contains(GATEWAY_ONLY.1), "{env}");
    assert!(!env.contains("PS4="), "{env}");
    assert!(env.contains("CI=1\n"), "{env}");
    // A locale the analysis cannot read as the shell does is overridden.
    assert!(env.contains("LC_ALL=C.UTF-8\n"), "{env}");
    assert!(
        env.contains("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"),
        "{env}"
    );
    // The same on the host.
    let host = Sandboxed::on_host().await;
    let (_, env) = finished(&host.run("env").await);
    assert!(!env.contains(GATEWAY_ONLY.0), "{env}");
    assert!(!env.contains("PS4="), "{env}");
}

#[tokio::test]
async fn a_secret_looking_request_variable_is_refused_with_its_reason() {
    for sandboxed in [
        Sandboxed::start("isolation: 'ephemeral'", FULL, "").await,
        Sandboxed::on_host().await,
    ] {
        let answer = sandboxed
            .run_with(
                "echo should-not-run",
                json!({"env": {"GITHUB_TOKEN": "x", "DATABASE_URL": "postgres://app:pw@db/app"}}),
            )
            .await;
        let (reason, detail) = denied(&answer);
        assert_eq!(reason, "environment", "{answer}");
        assert!(
            detail.contains("\"GITHUB_TOKEN\": its name looks like a credential's (*_TOKEN)"),
            "{detail}"
        );
        assert!(detail.contains("\"DATABASE_URL\""), "{detail}");
        assert!(
            !detail.contains("pw@"),
            "values are never repeated: {detail}"
        );
    }
}

/// `/elevated on|full` moves a sandboxed session's exec to the host; `off` keeps it in the
/// sandbox with the agent's own policy.
#[tokio::test]
async fn elevated_runs_on_the_host_and_off_stays_in_the_sandbox() {
    let gates = "elevated: { enabled: true, allowFrom: { telegram: ['4242'] } },";
    let sandboxed = Sandboxed::with_config(&format!(
        "tools: {{ {gates} exec: {{ {FULL} }} }},
         agents: {{ defaults: {{ workspace: '~/work',
                                sandbox: {{ mode: 'all', isolation: 'ephemeral' }} }} }},"
    ))
    .await;
    let probe = probe_paths(&["~/.ssh"]);
    let sender = json!({"channel": "telegram", "id": "4242"});
    let in_sandbox = sandboxed.run(&probe).await;
    assert_eq!(finished(&in_sandbox).1, "absent\n");
    let on_host = sandboxed
        .run_with(&probe, json!({"elevated": "full", "sender": sender}))
        .await;
    assert_eq!(finished(&on_host).1, "present\n");
    let kept_in = sandboxed.run_with(&probe, json!({"elevated": "off"})).await;
    assert_eq!(finished(&kept_in).1, "absent\n");
}

/// An approved sandboxed run whose script was edited through the workspace's bind mount after
/// approval does not run.
#[tokio::test]
async fn a_script_edited_after_approval_is_a_binding_mismatch_in_the_sandbox() {
    let sandboxed = Sandboxed::start(
        "isolation: 'ephemeral'",
        "security: 'allowlist', ask: 'always'",
        "",
    )
    .await;
    let script = sandboxed.workspace().join("run.sh");
    std::fs::write(&script, "echo approved\n").unwrap();
    let mut agent = sandboxed.server.ws(AGENT).await;
    let mut operator = sandboxed.server.ws(APPROVER).await;
    let pending = agent
        .send("system.run", sandboxed.params("sh run.sh", json!({})))
        .await;
    let requested = operator.event("exec.approval.requested").await;
    let request = &requested["payload"]["request"];
    assert_eq!(request["host"], "sandbox", "{requested}");
    std::fs::write(&script, "echo swapped\n").unwrap();
    let answer = approve(&mut operator, &mut agent, &requested, &pending).await;
    let (reason, detail) = denied(&answer);
    assert_eq!(
        (reason.as_str(), detail.as_str()),
        ("binding-mismatch", "approval binding mismatch: script")
    );
    // Unedited, the same approval flow runs it in the sandbox.
    std::fs::write(&script, "echo approved; echo $HOME\n").unwrap();
    let pending = agent
        .send("system.run", sandboxed.params("sh run.sh", json!({})))
        .await;
    let requested = operator.event("exec.approval.requested").await;
    let answer = approve(&mut operator, &mut agent, &requested, &pending).await;
    assert_eq!(
        finished(&answer),
        (0, format!("approved\n{}\n", sandboxed.home.display()))
    );
}

/// Answers the approval `requested` announced with allow-once; the agent's answer.
async fn approve(operator: &mut Ws, agent: &mut Ws, requested: &Value, pending: &str) -> Value {
    let id = requested["payload"]["id"].as_str().unwrap();
    let resolved = operator
        .call(
            "exec.approval.resolve",
            json!({"id": id, "decision": "allow-once"}),
        )
        .await;
    assert_eq!(resolved["payload"]["applied"], true, "{resolved}");
    agent.response(pending).await["payload"].clone()
}

#[tokio::test]
async fn a_mount_the_checks_refuse_denies_the_run_with_the_reason() {
    let sandboxed =
        Sandboxed::start("isolation: 'ephemeral', extraPaths: ['/etc']", FULL, "").await;
    let answer = sandboxed.run("echo should-not-run").await;
    let (reason, detail) = denied(&answer);
    assert_eq!(reason, "sandbox", "{answer}");
    assert!(detail.starts_with("extraPaths[0]: /etc"), "{detail}");
    // A workspace holding credentials (the whole home, with its `.ssh`) is refused too.
    let home_workspace = Sandboxed::with_config(&format!(
        "tools: {{ exec: {{ {FULL} }} }},
         agents: {{ defaults: {{ workspace: '~', sandbox: {{ mode: 'all' }} }} }},"
    ))
    .await;
    let params = json!({"command": "true", "cwd": home_workspace.home, "agentId": "main",
                        "sessionKey": "s"});
    let answer = home_workspace.server.ok(AGENT, "system.run", params).await;
    let (reason, detail) = denied(&answer);
    assert_eq!(reason, "sandbox", "{answer}");
    assert!(detail.starts_with("workspace: "), "{detail}");
    assert!(detail.contains(".ssh"), "{detail}");
    // The working directory must be one the sandbox sees at the same path.
    let outside = sandboxed.root().join("outside");
    let params = json!({"command": "true", "cwd": outside, "agentId": "main", "sessionKey": "s"});
    let answer = sandboxed.server.ok(AGENT, "system.run", params).await;
    assert_eq!(denied(&answer).0, "sandbox", "{answer}");
}
