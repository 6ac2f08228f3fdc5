//! Approvals on PostgreSQL against SQLite, and two replicas against one, as ratios in one run:
//! request→decision latency (one approval at a time: created, decided, its waiter answered) and
//! throughput (64 at once), and one replica on a database already holding a long history
//! against one on a fresh database. The approval managers are the real ones, on the real stores; the
//! PostgreSQL server is a real one the bench starts (`gatehouse-fakes`), on this machine.
//!
//! That server runs with `fsync = off` (a test cluster), so its figures are set against
//! SQLite on tmpfs (no flush either) for the protocol's cost, and against SQLite on the disk
//! for what an operator's default costs. Two replicas are two managers with their own stores
//! in this one process, sharing its two cores. Figures go to `docs/performance.md`
//! ("Replicas on PostgreSQL") and the capacity model in `docs/high-availability.md`.

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gatehouse_approvals::{
    ApprovalManager, ApprovalRequest, ApprovalStore, CreateApproval, EventKind, IdDisclosure,
    ManagerConfig, SystemClock,
};
use gatehouse_fakes::postgres::TempCluster;
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{
    PgApprovalStore, PgOptions, SqliteApprovalStore, SqliteOptions,
};
use gatehouse_store::approvals_file::ExecApprovalsStore;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use uuid::Uuid;

/// Approvals in flight at once in the throughput benches.
const CONCURRENCY: usize = 64;

/// Settled approvals kept in the `postgres_long_history` database before it is measured: its
/// ratio to `postgres_one_replica` says whether an approval's cost grows with the history kept.
const HISTORY: usize = 12_800;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// One gateway's approval manager, and which approvals it has heard of (a replica can decide
/// another's approval once it adopted it).
#[derive(Clone)]
struct Replica {
    manager: ApprovalManager,
    heard: Arc<Heard>,
    _dir: Arc<tempfile::TempDir>,
}

/// Approvals a replica announced, and the flows waiting to hear of one.
#[derive(Default)]
struct Heard {
    state: Mutex<HeardState>,
}

#[derive(Default)]
struct HeardState {
    seen: HashSet<Uuid>,
    waiting: HashMap<Uuid, oneshot::Sender<()>>,
}

impl Heard {
    fn announced(&self, id: Uuid) {
        let mut state = self.state.lock().unwrap();
        match state.waiting.remove(&id) {
            Some(waiter) => drop(waiter.send(())),
            None => drop(state.seen.insert(id)),
        }
    }

    async fn of(&self, id: Uuid) {
        let heard = {
            let mut state = self.state.lock().unwrap();
            if state.seen.remove(&id) {
                return;
            }
            let (sender, receiver) = oneshot::channel();
            state.waiting.insert(id, sender);
            receiver
        };
        heard.await.unwrap();
    }
}

async fn replica(store: Arc<dyn ApprovalStore>) -> Replica {
    let dir = tempfile::tempdir().unwrap();
    let file = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
    let (manager, mut events) = ApprovalManager::start(
        store,
        Arc::new(file),
        Arc::new(SystemClock),
        ManagerConfig::default(),
    )
    .await
    .unwrap();
    let heard = Arc::new(Heard::default());
    let hearing = Arc::clone(&heard);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if matches!(event.kind, EventKind::Requested { .. }) {
                hearing.announced(event.id);
            }
        }
    });
    Replica {
        manager,
        heard,
        _dir: Arc::new(dir),
    }
}

async fn on_sqlite(dir: &Path) -> Replica {
    let store =
        SqliteApprovalStore::open(dir.join("approvals.sqlite"), SqliteOptions::default()).unwrap();
    replica(Arc::new(store)).await
}

async fn on_postgres(url: &str) -> Replica {
    let store = PgApprovalStore::connect(url, PgOptions::default())
        .await
        .unwrap();
    replica(Arc::new(store)).await
}

/// What the gateway stores for `make deploy` in a project directory.
fn create(n: usize) -> CreateApproval {
    CreateApproval {
        id: None,
        request: ApprovalRequest {
            command: format!("make deploy TARGET=host-{n}"),
            argv: vec!["make".into(), "deploy".into(), format!("TARGET=host-{n}")],
            cwd: Some("/srv/projects/website".into()),
            agent_id: Some("main".into()),
            session_key: Some("agent:main:main".into()),
            requested_by: Some("agent".into()),
            ..ApprovalRequest::default()
        },
        timeout: None,
        allow_always_patterns: Vec::new(),
    }
}

/// One approval from request to decision: created on `asked` with its requester waiting,
/// decided on `deciding` (once it heard of it), the requester answered.
async fn request_to_decision(asked: &Replica, deciding: &Replica, n: usize) {
    let (created, decision) = asked.manager.create_awaited(create(n)).await.unwrap();
    deciding.heard.of(created.id).await;
    let resolved = deciding
        .manager
        .resolve(
            &created.id.to_string(),
            ApprovalDecision::AllowOnce,
            "bench",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    assert!(resolved.outcome.applied());
    let record = decision.decided().await.unwrap();
    assert_eq!(record.decision, Some(ApprovalDecision::AllowOnce));
}

/// [`CONCURRENCY`] approvals at once; flow `n` is asked on `pairs[n % len].0` and decided on
/// `.1`.
async fn concurrently(pairs: &[(Replica, Replica)]) {
    let flows: Vec<_> = (0..CONCURRENCY)
        .map(|n| {
            let (asked, deciding) = pairs[n % pairs.len()].clone();
            tokio::spawn(async move { request_to_decision(&asked, &deciding, n).await })
        })
        .collect();
    for flow in flows {
        flow.await.unwrap();
    }
}

fn replicas(c: &mut Criterion) {
    let rt = runtime();
    let cluster = TempCluster::start().unwrap();
    let disk = tempfile::tempdir().unwrap();
    let tmpfs = tempfile::tempdir_in("/dev/shm").unwrap();
    let sqlite_disk = rt.block_on(on_sqlite(disk.path()));
    let sqlite_tmpfs = rt.block_on(on_sqlite(tmpfs.path()));
    let one = rt.block_on(on_postgres(&cluster.url()));
    let two_url = cluster.create_database("two_replicas").unwrap();
    let (a, b) = rt.block_on(async { (on_postgres(&two_url).await, on_postgres(&two_url).await) });
    let history_url = cluster.create_database("long_history").unwrap();
    let long_history = rt.block_on(async {
        let replica = on_postgres(&history_url).await;
        let pairs = [(replica.clone(), replica.clone())];
        for _ in 0..HISTORY / CONCURRENCY {
            concurrently(&pairs).await;
        }
        replica
    });

    // Each setup: who asks and who decides. On two replicas every approval is decided on the
    // replica that did not create it, so its requester hears the decision through the database.
    let setups: [(&str, Vec<(Replica, Replica)>); 5] = [
        ("sqlite_disk", vec![(sqlite_disk.clone(), sqlite_disk)]),
        ("sqlite_tmpfs", vec![(sqlite_tmpfs.clone(), sqlite_tmpfs)]),
        ("postgres_one_replica", vec![(one.clone(), one)]),
        (
            "postgres_long_history",
            vec![(long_history.clone(), long_history)],
        ),
        (
            "postgres_two_replicas",
            vec![(a.clone(), b.clone()), (b, a)],
        ),
    ];

    let mut latency = c.benchmark_group("request_to_decision");
    latency
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(1));
    for (name, pairs) in &setups {
        let (asked, deciding) = &pairs[0];
        latency.bench_function(*name, |bench| {
            bench.iter(|| rt.block_on(request_to_decision(asked, deciding, 0)));
        });
    }
    latency.finish();

    let mut throughput = c.benchmark_group("concurrent_64");
    throughput
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6))
        .throughput(Throughput::Elements(CONCURRENCY as u64));
    for (name, pairs) in &setups {
        throughput.bench_function(*name, |bench| {
            bench.iter(|| rt.block_on(concurrently(pairs)));
        });
    }
    throughput.finish();
    drop(setups);
    drop(rt);
    drop(cluster);
}

criterion_group!(benches, replicas);
criterion_main!(benches);
