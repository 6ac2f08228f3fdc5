//! The store's write path on the real disk: create+resolve throughput of
//! `SqliteApprovalStore` at 1, 64 and 1,000 concurrent callers (threads), with two baselines
//! measured in the same run so results read as ratios on whatever disk runs them:
//!
//! - `per_op_commit`: the same store with `max_batch = 1`, one transaction and one fsync per
//!   operation, which is the write path before group commit;
//! - `fsync_write`: a loop of 4 KiB writes to a plain file, each followed by `sync_data`,
//!   which is how many durable writes per second the disk gives one writer.
//!
//! `store_prune` times one pruning chunk (`prune_terminal_before` deleting 100 or 500 settled
//! rows from a table of 50,000, as the approval manager does in the background): every approval write queued behind a
//! chunk waits for it, so its time bounds what pruning adds to a decision.
//!
//! Figures go to `docs/performance.md` ("Store write path", "Tenth round").

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Seek as _, SeekFrom, Write as _};
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use gatehouse_approvals::{ApprovalRequest, NewApproval, Resolution};
use gatehouse_policy::{ApprovalDecision, Ask, Security};
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};

/// Ids stay unique across every iteration criterion runs on one database.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn approval() -> NewApproval {
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    NewApproval {
        id: format!("{n:032x}"),
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
        created_at_ms: n,
        expires_at_ms: n + 1_800_000,
    }
}

fn create_then_resolve(db: &SqliteApprovalStore) {
    let created = db.insert(&approval()).unwrap();
    let deny = Resolution::Decided {
        decision: ApprovalDecision::Deny,
        resolved_by: Some("bench".into()),
        reason: None,
    };
    assert!(
        db.resolve(&created.id, &deny, created.created_at_ms + 1)
            .unwrap()
            .applied()
    );
}

/// `callers` threads, released together, each doing `rounds` create+resolve in a row; the
/// time from release until the last one finishes.
fn concurrent(db: &SqliteApprovalStore, callers: usize, rounds: u64) -> Duration {
    let barrier = Barrier::new(callers + 1);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..callers)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(256 * 1024)
                    .spawn_scoped(scope, || {
                        barrier.wait();
                        for _ in 0..rounds {
                            create_then_resolve(db);
                        }
                    })
                    .unwrap()
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for thread in threads {
            thread.join().unwrap();
        }
        start.elapsed()
    })
}

fn store_write_path(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("store_create_resolve");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let setups: [(&str, usize, &[usize]); 2] = [
        // One fsync per operation makes 1,000 callers take seconds per round; 64 shows the trend.
        ("per_op_commit", 1, &[1, 64]),
        (
            "group_commit",
            SqliteOptions::default().max_batch,
            &[1, 64, 1000],
        ),
    ];
    for (name, max_batch, concurrencies) in setups {
        let db = SqliteApprovalStore::open(
            dir.path().join(format!("{name}.sqlite")),
            SqliteOptions {
                max_batch,
                ..SqliteOptions::default()
            },
        )
        .unwrap();
        for &callers in concurrencies {
            group.throughput(Throughput::Elements(callers as u64));
            group.bench_with_input(BenchmarkId::new(name, callers), &callers, |b, &callers| {
                b.iter_custom(|rounds| concurrent(&db, callers, rounds));
            });
        }
    }
    group.finish();

    let mut disk = c.benchmark_group("disk");
    disk.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut file = std::fs::File::create(dir.path().join("fsync.bin")).unwrap();
    let page = [0x5a_u8; 4096];
    disk.throughput(Throughput::Elements(1));
    disk.bench_function("fsync_write", |b| {
        b.iter(|| {
            file.seek(SeekFrom::Start(0)).unwrap();
            file.write_all(&page).unwrap();
            file.sync_data().unwrap();
        });
    });
    disk.finish();
}

/// Rows in the table the pruning benchmark deletes from.
const HISTORY: u64 = 50_000;

fn store_prune(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = SqliteApprovalStore::open(dir.path().join("prune.sqlite"), SqliteOptions::default())
        .unwrap();
    // A table of some size, as pruning meets it: pending rows, which are never pruned.
    std::thread::scope(|scope| {
        for _ in 0..100 {
            scope.spawn(|| {
                for _ in 0..HISTORY / 100 {
                    db.insert(&approval()).unwrap();
                }
            });
        }
    });
    let mut group = c.benchmark_group("store_prune");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1));
    for chunk in [100_u64, 500] {
        group.throughput(Throughput::Elements(chunk));
        group.bench_with_input(BenchmarkId::from_parameter(chunk), &chunk, |b, &chunk| {
            b.iter_custom(|rounds| {
                let mut pruning = Duration::ZERO;
                for _ in 0..rounds {
                    // Untimed: `chunk` settled approvals, resolved before the cutoff below.
                    concurrent(&db, 100, chunk / 100);
                    let cutoff = NEXT_ID.load(Ordering::Relaxed) + 2;
                    let start = Instant::now();
                    let pruned = db.prune_terminal_before(cutoff, chunk as usize).unwrap();
                    pruning += start.elapsed();
                    assert_eq!(pruned.len() as u64, chunk);
                }
                pruning
            });
        });
    }
    group.finish();
}

criterion_group!(benches, store_write_path, store_prune);
criterion_main!(benches);
