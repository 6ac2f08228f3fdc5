//! Load benchmark: 1,000 concurrent requesters against a real gateway on loopback, with an
//! operator client resolving each approval as its `exec.approval.requested` event arrives.
//!
//! Reports request→decision latency (p50, p99) and approvals per second with the durable store
//! (SQLite, WAL, `synchronous=FULL`) and the audit log on, plus a baseline measured in the same
//! run: `gateway.status` round trips at the same concurrency, so the figures read as ratios too.
//!
//! Run: `cargo bench -p gatehouse-gateway --bench load`. Env: `LOAD_REQUESTERS` (1,000),
//! `LOAD_ROUNDS` (3 requests per requester), `LOAD_DIR` (where the database and logs go, e.g.
//! `/dev/shm` to see the gateway without the disk's fsync cost).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark that cannot set itself up should stop loudly"
)]

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use gatehouse_config::Config;
use gatehouse_gateway::{
    ExecLimits, ExecServices, ExecSetup, GatewaySettings, GatewayState, Limits, Scope, Secret,
    TokenSpec,
};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

const ADMIN: &str = "bench-admin-token-0123456789";
const AGENT: &str = "bench-agent-token-0123456789";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let requesters = env_usize("LOAD_REQUESTERS", 1_000);
    let rounds = env_usize("LOAD_ROUNDS", 3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(requesters, rounds));
}

async fn run(requesters: usize, rounds: usize) {
    let dir = match std::env::var_os("LOAD_DIR") {
        Some(base) => tempfile::tempdir_in(base).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let settings = GatewaySettings {
        listen: ([127, 0, 0, 1], 0).into(),
        tokens: vec![
            TokenSpec {
                name: "admin".into(),
                secret: Secret::new(ADMIN),
                scopes: vec![Scope::Admin],
            },
            TokenSpec {
                name: "agent".into(),
                secret: Secret::new(AGENT),
                scopes: vec![Scope::Agent],
            },
        ],
        limits: Limits {
            rate: None,
            event_queue: 1 << 16,
            max_in_flight: 1 << 14,
            ..Limits::default()
        },
    };
    let exec = ExecServices::start(ExecSetup {
        config: Config::default(),
        approvals_file: dir.path().join("exec-approvals.json"),
        database: dir.path().join("approvals.db"),
        audit_log: dir.path().join("audit.jsonl"),
        limits: ExecLimits {
            max_pending_per_agent: requesters * 2,
            event_buffer: 1 << 16,
            ..ExecLimits::default()
        },
    })
    .await
    .unwrap();
    let state = GatewayState::with_exec(&settings, exec).unwrap();
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(gatehouse_gateway::serve(
        listener,
        state.clone(),
        std::future::pending(),
    ));
    let base = format!("http://{addr}");
    let operator = tokio::spawn(operate(format!("ws://{addr}/ws")));
    // Let the operator subscribe before the first request, or requests would expire no-route.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(requesters)
        .build()
        .unwrap();
    let cwd = dir.path().to_path_buf();

    // Warm up connections and the store.
    drive(&http, &base, requesters.min(100), 1, |i| approval(&cwd, i)).await;

    let (baseline, baseline_wall) = drive(&http, &base, requesters, rounds, |_| {
        ("gateway.status", json!({}))
    })
    .await;
    let (latencies, wall) = drive(&http, &base, requesters, rounds, |i| approval(&cwd, i)).await;

    let total = latencies.len();
    let per_second = total as f64 / wall.as_secs_f64();
    let base_per_second = baseline.len() as f64 / baseline_wall.as_secs_f64();
    let (p50, p99) = (percentile(&latencies, 0.50), percentile(&latencies, 0.99));
    let (b50, b99) = (percentile(&baseline, 0.50), percentile(&baseline, 0.99));
    println!("requesters: {requesters}, rounds: {rounds}, approvals: {total}");
    println!(
        "approval request→decision: p50 {:.2} ms, p99 {:.2} ms, {per_second:.0} approvals/s",
        ms(p50),
        ms(p99)
    );
    println!(
        "baseline gateway.status:   p50 {:.2} ms, p99 {:.2} ms, {base_per_second:.0} calls/s",
        ms(b50),
        ms(b99)
    );
    println!(
        "ratios: p50 {:.1}x, p99 {:.1}x, throughput {:.2}x of baseline",
        ms(p50) / ms(b50).max(f64::EPSILON),
        ms(p99) / ms(b99).max(f64::EPSILON),
        per_second / base_per_second
    );
    operator.abort();
    server.abort();
}

fn approval(cwd: &std::path::Path, i: usize) -> (&'static str, Value) {
    (
        "exec.approval.request",
        json!({"command": "make deploy", "argv": ["make", "deploy"], "cwd": cwd,
               "agentId": format!("agent-{}", i % 16), "sessionKey": "bench"}),
    )
}

/// `requesters` tasks, each calling `rounds` times in a row; the latency of every call, and the
/// wall time of the whole batch.
async fn drive(
    http: &reqwest::Client,
    base: &str,
    requesters: usize,
    rounds: usize,
    call: impl Fn(usize) -> (&'static str, Value),
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let tasks: Vec<_> = (0..requesters)
        .map(|i| {
            let http = http.clone();
            let url = format!("{base}/rpc");
            let (method, params) = call(i);
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(rounds);
                for _ in 0..rounds {
                    let sent = Instant::now();
                    let answer: Value = http
                        .post(&url)
                        .bearer_auth(AGENT)
                        .json(&json!({"method": method, "params": params}))
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    assert_eq!(answer["ok"], true, "{answer}");
                    if method == "exec.approval.request" {
                        assert_eq!(answer["payload"]["decision"], "allow-once", "{answer}");
                    }
                    latencies.push(sent.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let wall = started.elapsed();
    all.sort_unstable();
    (all, wall)
}

/// The operator: resolves every approval as soon as it is announced.
async fn operate(url: String) {
    let (socket, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
        .await
        .unwrap();
    let (mut sink, mut stream) = socket.split();
    let connect = json!({"type": "req", "id": "c", "method": "connect",
        "params": {"token": ADMIN, "client": {"name": "bench", "version": "0"}}});
    sink.send(Message::text(connect.to_string())).await.unwrap();
    let mut next = 0u64;
    while let Some(Ok(message)) = stream.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let frame: Value = serde_json::from_str(&text).unwrap();
        if frame["event"] == "exec.approval.requested" {
            next += 1;
            let resolve = json!({"type": "req", "id": next.to_string(),
                "method": "exec.approval.resolve",
                "params": {"id": frame["payload"]["id"], "decision": "allow-once"}});
            sink.send(Message::text(resolve.to_string())).await.unwrap();
        }
    }
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}
