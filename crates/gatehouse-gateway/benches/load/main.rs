//! Load benchmark: 1,000 requesters, each on its own connection, against a real gateway on
//! loopback with the durable store on, and one operator client resolving each approval the
//! moment its `exec.approval.requested` event arrives.
//!
//! `LOAD_MODE=open` (the default, the figure the budget is checked against): requests arrive on
//! a Poisson schedule at `LOAD_RATE` per second in aggregate (2,000) for `LOAD_SECS` (10) after
//! `LOAD_WARMUP_SECS` (2) of the same; latency runs from each request's scheduled moment to its
//! decision (see `open_loop.rs`). `LOAD_MODE=closed`: every requester sends `LOAD_ROUNDS` (3)
//! requests back to back, which measures the most approvals per second. Either way the same
//! shape with `gateway.status` in place of `exec.approval.request` runs first as the baseline.
//!
//! Other env: `LOAD_REQUESTERS` (1,000), `LOAD_DIR` (where the database and logs go; the default
//! temporary directory is on disk, `/dev/shm` shows the gateway without the disk's fsyncs),
//! `LOAD_SERVER_THREADS` (2 gateway workers) and `LOAD_CLIENT_THREADS` (2 client workers: with
//! one, the operator's frames wait behind the requesters' work and the client's own delays show
//! up as server latency). `LOAD_DUMP=FILE` writes every measured approval's moments to `FILE`
//! as CSV (see `dump.rs`), to see when in a run the slow ones came. Before it starts the
//! gateway, the bench spins a thread per core for `LOAD_PROBE_SECS` (3; 0 skips it) and
//! reports how often the machine took a core away and how long a thread takes to wake another
//! that sleeps (see `host.rs`); each phase's CPU line also
//! gives the share of the cores' time the hypervisor stole, and the next line splits the
//! gateway's CPU by its threads: the runtime, the approvals writer every approval queues for,
//! the audit writer and the checkpointer (see `cpu.rs`).
//! Run: `cargo bench -p gatehouse-gateway --bench load`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark that cannot set itself up should stop loudly"
)]

mod batches;
mod closed_loop;
mod cpu;
mod dump;
mod host;
mod http1;
mod open_loop;
mod operator;
mod report;
mod server;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use http1::{Connection, Encoded};
use report::Latencies;

const ADMIN: &str = "bench-admin-token-0123456789";
const AGENT: &str = "bench-agent-token-0123456789";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let probe = Duration::from_secs_f64(env_or("LOAD_PROBE_SECS", 3.0));
    if !probe.is_zero() {
        println!("host: {}", host::Stalls::probe(probe).line());
        if let Some(wakes) = host::WakeRoundTrips::probe(probe, Duration::from_micros(300)) {
            println!("host: {}", wakes.line());
        }
    }
    let requesters: usize = env_or("LOAD_REQUESTERS", 1_000);
    let dir = match std::env::var_os("LOAD_DIR") {
        Some(base) => tempfile::tempdir_in(base).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let server = server::start(dir.path(), env_or("LOAD_SERVER_THREADS", 2), requesters * 2);
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(env_or("LOAD_CLIENT_THREADS", 2))
        .thread_name("client")
        .enable_all()
        .build()
        .unwrap();
    client.block_on(run(server.addr, dir.path(), requesters));
}

/// The open loop's schedule, read from the environment once.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    rate: f64,
    warmup: Duration,
    secs: Duration,
}

impl Schedule {
    fn from_env() -> Self {
        Self {
            rate: env_or("LOAD_RATE", 2_000.0),
            warmup: Duration::from_secs_f64(env_or("LOAD_WARMUP_SECS", 2.0)),
            secs: Duration::from_secs_f64(env_or("LOAD_SECS", 10.0)),
        }
    }

    /// About how many approvals it creates, warm-up included, with room for the Poisson
    /// process's variation.
    fn approvals(&self) -> usize {
        (self.rate * (self.warmup + self.secs).as_secs_f64() * 1.2) as usize + 1_000
    }
}

async fn run(addr: SocketAddr, cwd: &Path, requesters: usize) {
    let mode = std::env::var("LOAD_MODE").unwrap_or_else(|_| "open".into());
    let schedule = Schedule::from_env();
    let rounds: usize = env_or("LOAD_ROUNDS", 3);
    let approvals_expected = match mode.as_str() {
        "closed" => requesters * (rounds + 1),
        _ => schedule.approvals(),
    };
    let seen = operator::log(approvals_expected);
    let operator = tokio::spawn(operator::operate(
        format!("ws://{addr}/ws"),
        std::sync::Arc::clone(&seen),
    ));
    // Let the operator subscribe before the first request, or requests would expire no-route.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut connections = Vec::with_capacity(requesters);
    for _ in 0..requesters {
        connections.push(Connection::open(addr).await);
    }
    let approvals: Vec<_> = (0..requesters)
        .map(|i| Encoded::rpc(addr, AGENT, "exec.approval.request", &approval(cwd, i)))
        .collect();
    let status = vec![Encoded::rpc(addr, AGENT, "gateway.status", &json!({})); requesters];
    println!(
        "mode: {mode}, requesters: {requesters}, data dir: {}",
        cwd.display()
    );
    match mode.as_str() {
        "open" => open(schedule, addr, connections, &approvals, &status, &seen).await,
        "closed" => closed(rounds, connections, &approvals, &status).await,
        other => panic!("LOAD_MODE is open or closed, not {other:?}"),
    }
    operator.abort();
}

async fn open(
    Schedule { rate, warmup, secs }: Schedule,
    addr: SocketAddr,
    connections: Vec<Connection>,
    approvals: &[Encoded],
    status: &[Encoded],
    seen: &operator::Log,
) {
    println!("offered: {rate:.0}/s for {secs:?} after {warmup:?} of warm-up");
    let (connections, _) = open_loop::run(connections, approvals, decided, rate, warmup).await;
    let before = cpu::Usage::now();
    let (connections, baseline) = open_loop::run(connections, status, answered, rate, secs).await;
    let between = cpu::Usage::now();
    let batches_before = batches::BatchTimes::read(addr).await;
    let (_, measured) = open_loop::run(connections, approvals, decided, rate, secs).await;
    let after = cpu::Usage::now();
    let batches = batches::BatchTimes::read(addr).await.since(&batches_before);
    print_open("approval request→decision", &measured, (between, after));
    println!("  database: {}", batches.line(measured.samples.len()));
    let seen = seen.lock().unwrap();
    print_stages(&measured, &seen);
    if let Some(path) = std::env::var_os("LOAD_DUMP") {
        dump::write(Path::new(&path), &measured, &seen);
    }
    print_open("baseline gateway.status  ", &baseline, (before, between));
}

/// One approval's time from sent to decision, split at the two moments the operator saw: the
/// event's arrival and its resolve's answer.
pub(crate) struct Stages {
    /// Sent → event at the operator.
    pub(crate) announce: Duration,
    /// Event → resolve answered; `None` if the operator's resolve went unanswered.
    pub(crate) decide: Option<Duration>,
    /// Event → requester answered.
    pub(crate) answer: Duration,
}

impl Stages {
    pub(crate) fn of(
        sample: &open_loop::Sample,
        seen: &HashMap<String, operator::Seen>,
    ) -> Option<Self> {
        let seen = seen.get(sample.approval.as_ref()?)?;
        Some(Self {
            announce: seen.event.saturating_duration_since(sample.sent),
            decide: seen
                .resolved
                .map(|resolved| resolved.saturating_duration_since(seen.event)),
            answer: sample.done.saturating_duration_since(seen.event),
        })
    }
}

fn print_stages(phase: &open_loop::Phase, seen: &HashMap<String, operator::Seen>) {
    let mut announce = Vec::new();
    let mut decide = Vec::new();
    let mut answer = Vec::new();
    for stages in phase.samples.iter().filter_map(|s| Stages::of(s, seen)) {
        announce.push(stages.announce);
        answer.push(stages.answer);
        decide.extend(stages.decide);
    }
    for (label, stage) in [
        (
            "sent → event at operator (policy, insert, fan-out)",
            announce,
        ),
        ("event → resolve answered (round trip, CAS commit)", decide),
        ("event → requester answered (decision, wake, HTTP)", answer),
    ] {
        let stage = Latencies::new(stage);
        println!(
            "  stage {label}: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
            stage.ms(0.5),
            stage.ms(0.9),
            stage.ms(0.99)
        );
    }
}

fn print_open(label: &str, phase: &open_loop::Phase, (from, to): (cpu::Usage, cpu::Usage)) {
    let samples = &phase.samples;
    let last = samples
        .iter()
        .map(|s| s.done)
        .max()
        .unwrap_or(phase.started);
    let per_second = samples.len() as f64 / (last - phase.started).as_secs_f64();
    let corrected = Latencies::new(samples.iter().map(|s| s.done - s.scheduled).collect());
    let service = Latencies::new(samples.iter().map(|s| s.done - s.sent).collect());
    let lag = Latencies::new(samples.iter().map(|s| s.sent - s.scheduled).collect());
    println!("{label}: {} done, {per_second:.0}/s", corrected.count());
    println!("  from scheduled: {}", corrected.line());
    println!("  from sent:      {}", service.line());
    println!(
        "  send lag (scheduled→sent): p50 {:.3} ms, p99 {:.3} ms",
        lag.ms(0.5),
        lag.ms(0.99)
    );
    let (gateway, client) = from.per_request(&to, samples.len());
    println!(
        "  CPU per request: gateway {} µs, client {} µs; the host stole {:.1} % of the cores' time",
        gateway.as_micros(),
        client.as_micros(),
        from.stolen_percent(&to)
    );
    let by_thread: Vec<String> = from
        .per_request_by_thread(&to, samples.len())
        .map(|(label, split)| {
            format!(
                "{label} {} µs (kernel {})",
                split.sum().as_micros(),
                split.kernel.as_micros()
            )
        })
        .collect();
    println!("  gateway CPU by thread: {}", by_thread.join(", "));
}

async fn closed(
    rounds: usize,
    connections: Vec<Connection>,
    approvals: &[Encoded],
    status: &[Encoded],
) {
    let (connections, _, _) = closed_loop::run(connections, approvals, decided, 1).await;
    let (connections, baseline, baseline_wall) =
        closed_loop::run(connections, status, answered, rounds).await;
    let (_, measured, wall) = closed_loop::run(connections, approvals, decided, rounds).await;
    for (label, latencies, wall) in [
        ("approval request→decision", measured, wall),
        ("baseline gateway.status  ", baseline, baseline_wall),
    ] {
        let latencies = Latencies::new(latencies);
        let per_second = latencies.count() as f64 / wall.as_secs_f64();
        println!("{label}: {} done, {per_second:.0}/s", latencies.count());
        println!("  {}", latencies.line());
    }
}

/// Waits for every requester task; their connections (for the next phase) and all they measured.
async fn gather<T>(
    tasks: Vec<tokio::task::JoinHandle<(Connection, Vec<T>)>>,
) -> (Vec<Connection>, Vec<T>) {
    let mut connections = Vec::with_capacity(tasks.len());
    let mut measured = Vec::new();
    for task in tasks {
        let (connection, done) = task.await.unwrap();
        connections.push(connection);
        measured.extend(done);
    }
    (connections, measured)
}

fn approval(cwd: &Path, i: usize) -> Value {
    json!({"command": "make deploy", "argv": ["make", "deploy"], "cwd": cwd,
           "agentId": format!("agent-{}", i % 16), "sessionKey": "bench"})
}

fn answered(answer: &Value) {
    assert_eq!(answer["ok"], true, "{answer}");
}

fn decided(answer: &Value) {
    answered(answer);
    assert_eq!(answer["payload"]["decision"], "allow-once", "{answer}");
}
