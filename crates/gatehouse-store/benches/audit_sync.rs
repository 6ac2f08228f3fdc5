//! The audit log's batched sync (fsync the log, then replace its head) on the real disk, in an
//! empty directory and beside 2,000 rotated files. Gatehouse never deletes rotated files, so
//! the directory only grows; the ratio between the two shows whether a sync's cost grows with
//! it. Figures go to `docs/performance.md` ("Audit log sync").

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use gatehouse_store::audit::{AuditEvent, AuditKind, AuditLog, AuditOptions, SyncPolicy};
use serde_json::json;

/// Rotated files beside the log in the crowded case: years of a quiet gateway's days, or a
/// day of a busy one's.
const ROTATED_FILES: u32 = 2_000;

fn open_log(dir: &Path) -> AuditLog {
    let options = AuditOptions {
        sync: SyncPolicy::Batched {
            max_unsynced: NonZeroU32::MAX,
        },
        rotate_at_bytes: None,
    };
    AuditLog::open(dir.join("audit.jsonl"), options).unwrap().0
}

/// One record and the sync after it, as the gateway's audit thread does every few ms.
fn append_and_sync(log: &AuditLog, at_ms: &mut u64) {
    *at_ms += 1;
    let event = AuditEvent::new(AuditKind::Decision, json!({"decision": "allow-once"}))
        .with_approval_id("0123456789abcdef");
    log.append(*at_ms, event).unwrap();
    log.sync().unwrap();
}

fn audit_sync(c: &mut Criterion) {
    let mut group = c.benchmark_group("audit_sync");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for rotated in [0, ROTATED_FILES] {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let log = open_log(dir.path());
        // Named as rotated files are; created after opening, since opening reads the last one.
        for n in 0..rotated {
            let first = u64::from(n) * 1_000 + 1;
            std::fs::write(
                dir.path()
                    .join(format!("audit.jsonl.{first}-{}", first + 999)),
                "",
            )
            .unwrap();
        }
        let mut at_ms = 0;
        group.bench_function(format!("beside_{rotated}_rotated_files"), |b| {
            b.iter(|| append_and_sync(&log, &mut at_ms));
        });
    }
    group.finish();
}

criterion_group!(benches, audit_sync);
criterion_main!(benches);
