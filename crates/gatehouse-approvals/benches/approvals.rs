//! Budgets of the approvals core: create+resolve throughput on the durable SQLite store, and
//! the manager's memory per pending approval at 100,000 pending (budget: under 2 KiB,
//! excluding the database), measured with a counting global allocator and compared with an
//! empty `DashMap<Uuid, ()>` of the same size built in the same run.
//!
//! SQLite allocates through its own allocator, not Rust's, so the counter sees the manager's
//! memory, not the page cache. Figures go to `docs/performance.md` ("Approvals core").

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::System;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dashmap::DashMap;
use gatehouse_approvals::{
    ApprovalManager, ApprovalRequest, CreateApproval, EventSubscription, IdDisclosure,
    ManagerConfig, SystemClock,
};
use gatehouse_policy::{ApprovalDecision, Ask, Security};
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
use gatehouse_store::approvals_file::ExecApprovalsStore;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio::runtime::Runtime;
use uuid::Uuid;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PENDING: usize = 100_000;
const BUDGET_BYTES: f64 = 2048.0;
const CONCURRENCY: usize = 64;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn manager_in(dir: &Path) -> (ApprovalManager, EventSubscription) {
    let store =
        SqliteApprovalStore::open(dir.join("approvals.sqlite"), SqliteOptions::default()).unwrap();
    let file = ExecApprovalsStore::new(dir.join("exec-approvals.json"));
    ApprovalManager::start(
        Arc::new(store),
        Arc::new(file),
        Arc::new(SystemClock),
        ManagerConfig::default(),
    )
    .await
    .unwrap()
}

/// A realistic request: what the gateway stores for `make deploy` in a project directory.
fn create(n: usize) -> CreateApproval {
    CreateApproval {
        id: None,
        request: ApprovalRequest {
            command: format!("make deploy TARGET=host-{n}"),
            argv: vec!["make".into(), "deploy".into(), format!("TARGET=host-{n}")],
            cwd: Some("/srv/projects/website".into()),
            env_keys: vec!["DEPLOY_TOKEN".into()],
            host: Some("gateway".into()),
            agent_id: Some("main".into()),
            session_key: Some("agent:main:telegram:group:-100123".into()),
            resolved_path: Some("/usr/bin/make".into()),
            security: Some(Security::Allowlist),
            ask: Some(Ask::OnMiss),
            ..ApprovalRequest::default()
        },
        timeout: None,
        allow_always_patterns: vec!["/usr/bin/make".into()],
    }
}

async fn create_then_resolve(manager: &ApprovalManager, n: usize) {
    let id = manager.create(create(n)).await.unwrap().id;
    let resolved = manager
        .resolve(
            &id.to_string(),
            ApprovalDecision::Deny,
            "bench",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    assert!(resolved.outcome.applied());
}

fn create_resolve(c: &mut Criterion) {
    let rt = runtime();
    // On the real disk every transition is an fsynced SQLite commit; on tmpfs the same code runs
    // without the disk, which shows what the manager itself costs.
    let disk = tempfile::tempdir().unwrap();
    let tmpfs = tempfile::tempdir_in("/dev/shm").ok();
    let mut group = c.benchmark_group("create_resolve");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    for (medium, dir) in [("disk", Some(&disk)), ("tmpfs", tmpfs.as_ref())] {
        let Some(dir) = dir else { continue };
        let (manager, events) = rt.block_on(manager_in(dir.path()));
        drop(events);
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("sequential_{medium}"), |b| {
            b.iter(|| rt.block_on(create_then_resolve(&manager, 0)));
        });
        group.throughput(Throughput::Elements(CONCURRENCY as u64));
        group.bench_function(format!("concurrent_64_{medium}"), |b| {
            b.iter(|| rt.block_on(concurrent_batch(&manager)));
        });
    }
    group.finish();
}

async fn concurrent_batch(manager: &ApprovalManager) {
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|n| {
            let manager = manager.clone();
            tokio::spawn(async move { create_then_resolve(&manager, n).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

fn net_bytes(region: &Region<'_, System>) -> f64 {
    let change = region.change();
    change.bytes_allocated as f64 - change.bytes_deallocated as f64
}

/// Baseline: the least any id-keyed concurrent index could cost.
fn baseline_per_entry() -> f64 {
    let region = Region::new(GLOBAL);
    let map: DashMap<Uuid, ()> = DashMap::new();
    for _ in 0..PENDING {
        map.insert(Uuid::new_v4(), ());
    }
    let used = net_bytes(&region);
    drop(map);
    used / PENDING as f64
}

async fn create_pending(manager: &ApprovalManager, count: usize) -> Vec<Uuid> {
    let mut ids = Vec::with_capacity(count);
    for batch in (0..count).collect::<Vec<_>>().chunks(256) {
        let tasks: Vec<_> = batch
            .iter()
            .map(|&n| {
                let manager = manager.clone();
                tokio::spawn(async move { manager.create(create(n)).await.unwrap().id })
            })
            .collect();
        for task in tasks {
            ids.push(task.await.unwrap());
        }
    }
    ids
}

fn memory_per_pending(c: &mut Criterion) {
    let baseline = baseline_per_entry();
    let rt = runtime();
    // The database is excluded from the budget, so it lives on tmpfs to keep the run short.
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let (manager, events) = rt.block_on(manager_in(dir.path()));
    // A subscriber's queue has no bound and holds every event it has not taken, while the
    // gateway's subscribers keep taking theirs: one that takes none would be counted here.
    drop(events);
    // Warm the blocking pool and statement cache so they are not counted.
    rt.block_on(create_pending(&manager, 2_000));
    let mut ids = Vec::with_capacity(PENDING);
    let region = Region::new(GLOBAL);
    ids.extend(rt.block_on(create_pending(&manager, PENDING)));
    let per_pending =
        (net_bytes(&region) - (ids.capacity() * size_of::<Uuid>()) as f64) / PENDING as f64;
    eprintln!(
        "approvals memory: {per_pending:.0} B per pending approval at {PENDING} pending; \
         baseline DashMap<Uuid, ()> {baseline:.0} B per entry; ratio {:.2}; budget {BUDGET_BYTES:.0} B \
         ({:.0}% of budget)",
        per_pending / baseline,
        100.0 * per_pending / BUDGET_BYTES,
    );
    assert_eq!(manager.in_memory(), PENDING + 2_000);
    assert!(
        per_pending < BUDGET_BYTES,
        "over budget: {per_pending:.0} B per pending approval"
    );

    // While 100,000 are pending: how long a person's short prefix takes to find its approval.
    let key = ids[PENDING / 2].to_string();
    let mut group = c.benchmark_group("lookup_at_100k_pending");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("get_by_8_char_prefix", |b| {
        b.iter(|| {
            rt.block_on(manager.get(&key[..8], IdDisclosure::Hidden))
                .unwrap()
        });
    });
    group.bench_function("get_by_full_id", |b| {
        b.iter(|| {
            rt.block_on(manager.get(&key, IdDisclosure::Hidden))
                .unwrap()
        });
    });
    group.finish();
}

criterion_group!(benches, create_resolve, memory_per_pending);
criterion_main!(benches);
