//! What asking Gatehouse costs an agent host per tool call, on the allow path, each side by
//! side with its baseline in the same run (issue 32's budgets):
//!
//! - `gatehouse hook claude-code` (a process per call: read the event, one `tools.call.check`
//!   over loopback HTTP, answer) against spawning `/bin/true` plus one loopback HTTP round trip
//!   to `/healthz` — budget 3×;
//! - `POST /hooks/claude-code` (in process) against a `gateway.status` round trip over
//!   `POST /rpc` on the same keep-alive connection — budget 2×.
//!
//! Both call a real `gatehouse serve` (the release binary) this bench starts. Besides
//! criterion's report it prints each median and the ratio; figures go to
//! `docs/performance.md` ("Agent-host hooks").
//!
//! Run: `cargo bench -p gatehouse --bench hook -- --warm-up-time 1 --measurement-time 5`

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const GATEHOUSE: &str = env!("CARGO_BIN_EXE_gatehouse");
const AGENT: &str = "agent-token-0123456789abcdef";
const SAMPLES: usize = 20;

/// A gateway with one agent token; exec runs without asking.
struct Gateway {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
    workspace: String,
}

impl Gateway {
    fn start() -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().canonicalize().unwrap().display().to_string();
        let config = dir.path().join("gatehouse.json5");
        std::fs::write(
            &config,
            format!(
                "{{ gateway: {{ auth: {{ tokens: [{{ name: 'agent', token: '{AGENT}', \
                 scopes: ['agent'] }}] }} }},
                   tools: {{ profile: 'full', exec: {{ security: 'full', ask: 'off' }} }},
                   agents: {{ defaults: {{ workspace: '{workspace}' }} }} }}"
            ),
        )
        .unwrap();
        let mut child = Command::new(GATEHOUSE)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = loop {
            let line = lines.next().expect("serve exited").unwrap();
            if let Some(url) = line.strip_prefix("Gatehouse is listening on ") {
                break url.to_owned();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Gateway {
            child,
            base,
            _dir: dir,
            workspace,
        }
    }

    /// A PreToolUse event for Bash `git status` in the workspace: allowed.
    fn event(&self) -> String {
        json!({"session_id": "a8aac326-aed7-410b-807e-d5e29c28e48a", "cwd": self.workspace,
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "git status", "description": "Status"},
               "tool_use_id": "toolu_bench"})
        .to_string()
    }

    fn address(&self) -> String {
        self.base.trim_start_matches("http://").to_owned()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `/bin/true`, then `GET /healthz` on a fresh connection: a process and a loopback round trip.
fn baseline_process(address: &str) {
    let status = Command::new("/bin/true").status().unwrap();
    assert!(status.success());
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// One `gatehouse hook claude-code` process answering `event`; its stdout.
fn hook_process(gateway: &Gateway, event: &str) -> String {
    let mut child = Command::new(GATEHOUSE)
        .args(["hook", "claude-code", "--url", &gateway.base])
        .env("GATEHOUSE_TOKEN", AGENT)
        .env_remove("GATEHOUSE_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

/// Times `iters` runs of `work`, recording each run's wall time.
fn timed(iters: u64, times: &mut Vec<Duration>, mut work: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        let one = Instant::now();
        work();
        times.push(one.elapsed());
    }
    start.elapsed()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn report(what: &str, baseline: &mut [Duration], measured: &mut [Duration], budget: f64) {
    let (base, hook) = (median(baseline), median(measured));
    let ratio = hook.as_secs_f64() / base.as_secs_f64();
    println!("{what}: median {hook:?} vs baseline {base:?}: ratio {ratio:.2}x (budget {budget}x)");
}

fn hook_command(c: &mut Criterion) {
    let gateway = Gateway::start();
    let event = gateway.event();
    let address = gateway.address();
    let answer = hook_process(&gateway, &event);
    assert!(
        answer.contains(r#""permissionDecision":"allow""#),
        "{answer}"
    );
    let (mut baseline, mut measured) = (Vec::new(), Vec::new());
    let mut group = c.benchmark_group("hook_command");
    group.sample_size(SAMPLES);
    group.bench_function("baseline_true_plus_healthz", |b| {
        b.iter_custom(|iters| timed(iters, &mut baseline, || baseline_process(&address)));
    });
    group.bench_function("gatehouse_hook_claude_code_allow", |b| {
        b.iter_custom(|iters| {
            timed(iters, &mut measured, || {
                hook_process(&gateway, &event);
            })
        });
    });
    group.finish();
    report("hook command", &mut baseline, &mut measured, 3.0);
}

fn hook_http(c: &mut Criterion) {
    let gateway = Gateway::start();
    let event = gateway.event();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    let post = |path: &str, body: String| {
        let request = client
            .post(format!("{}{path}", gateway.base))
            .bearer_auth(AGENT)
            .header("Content-Type", "application/json")
            .body(body);
        runtime.block_on(async move {
            let response = request.send().await.unwrap();
            response.json::<Value>().await.unwrap()
        })
    };
    let status = json!({"method": "gateway.status", "params": {}}).to_string();
    assert_eq!(post("/rpc", status.clone())["ok"], true);
    let answer = post("/hooks/claude-code", event.clone());
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{answer}"
    );
    let (mut baseline, mut measured) = (Vec::new(), Vec::new());
    let mut group = c.benchmark_group("hook_http");
    group.sample_size(SAMPLES);
    group.bench_function("baseline_gateway_status", |b| {
        b.iter_custom(|iters| {
            timed(iters, &mut baseline, || {
                post("/rpc", status.clone());
            })
        });
    });
    group.bench_function("post_hooks_claude_code_allow", |b| {
        b.iter_custom(|iters| {
            timed(iters, &mut measured, || {
                post("/hooks/claude-code", event.clone());
            })
        });
    });
    group.finish();
    report("HTTP hook", &mut baseline, &mut measured, 2.0);
}

criterion_group!(benches, hook_command, hook_http);
criterion_main!(benches);
