//! How long the writer's batches take, kept as a histogram for `GET /metrics`.
//!
//! Every decision waits for the batch that commits it, and that batch's fsync is the one part
//! of an approval's path the gateway does not control: a disk whose flushes stall for
//! milliseconds shows here before it shows anywhere else. Recording costs three relaxed atomic
//! adds per batch, so it is always on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the histogram's buckets: a batch on a quiet local disk takes 0.1–0.5 ms, and
/// the approval latency budget is 5 ms, so the buckets are finest there.
pub const BATCH_TIME_BOUNDS: [Duration; 9] = [
    Duration::from_micros(250),
    Duration::from_micros(500),
    Duration::from_millis(1),
    Duration::from_millis(2),
    Duration::from_millis(5),
    Duration::from_millis(10),
    Duration::from_millis(25),
    Duration::from_millis(100),
    Duration::from_secs(1),
];

const BUCKETS: usize = BATCH_TIME_BOUNDS.len() + 1;

/// The writer's side: counts batches into buckets as they finish.
#[derive(Debug, Default)]
pub(super) struct BatchTimes {
    /// Batches per bucket; the last counts those slower than every bound.
    buckets: [AtomicU64; BUCKETS],
    total_micros: AtomicU64,
    writes: AtomicU64,
}

impl BatchTimes {
    /// Counts one batch of `writes` operations that took `took`, from `BEGIN` to `COMMIT`.
    pub(super) fn record(&self, took: Duration, writes: usize) {
        let bucket = BATCH_TIME_BOUNDS
            .iter()
            .position(|bound| took <= *bound)
            .unwrap_or(BATCH_TIME_BOUNDS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.total_micros.fetch_add(micros, Ordering::Relaxed);
        self.writes
            .fetch_add(u64::try_from(writes).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// What has been counted so far.
    pub(super) fn snapshot(&self) -> BatchTimesSnapshot {
        BatchTimesSnapshot {
            batches: self
                .buckets
                .each_ref()
                .map(|count| count.load(Ordering::Relaxed)),
            total: Duration::from_micros(self.total_micros.load(Ordering::Relaxed)),
            writes: self.writes.load(Ordering::Relaxed),
        }
    }
}

/// The writer's batches since the store opened: how many, how long, how many writes they held.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchTimesSnapshot {
    /// Batches per bucket of [`BATCH_TIME_BOUNDS`] (not cumulative); the last entry counts
    /// batches slower than every bound.
    pub batches: [u64; BUCKETS],
    /// All batches' time added up.
    pub total: Duration,
    /// Operations committed (or rolled back alone) in those batches.
    pub writes: u64,
}

impl BatchTimesSnapshot {
    /// Every batch counted.
    pub fn batch_count(&self) -> u64 {
        self.batches.iter().sum()
    }

    /// Cumulative counts paired with their bound, the last with `None` for `+Inf`: the shape
    /// Prometheus histograms take.
    pub fn cumulative(&self) -> impl Iterator<Item = (Option<Duration>, u64)> + '_ {
        let bounds = BATCH_TIME_BOUNDS.iter().copied().map(Some).chain([None]);
        bounds.zip(&self.batches).scan(0, |total, (bound, count)| {
            *total += count;
            Some((bound, *total))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_batch_in_the_first_bucket_that_holds_it() {
        let times = BatchTimes::default();
        times.record(Duration::from_micros(100), 1);
        times.record(Duration::from_micros(250), 2);
        times.record(Duration::from_micros(251), 3);
        times.record(Duration::from_millis(3), 1);
        times.record(Duration::from_secs(2), 1);
        let snapshot = times.snapshot();
        assert_eq!(snapshot.batches, [2, 1, 0, 0, 1, 0, 0, 0, 0, 1]);
        assert_eq!(snapshot.batch_count(), 5);
        assert_eq!(snapshot.writes, 8);
        assert_eq!(
            snapshot.total,
            Duration::from_micros(100 + 250 + 251 + 3_000 + 2_000_000)
        );
    }

    #[test]
    fn cumulative_counts_end_with_every_batch_at_infinity() {
        let times = BatchTimes::default();
        times.record(Duration::from_micros(400), 1);
        times.record(Duration::from_millis(7), 1);
        let cumulative: Vec<_> = times.snapshot().cumulative().collect();
        assert_eq!(cumulative.len(), BATCH_TIME_BOUNDS.len() + 1);
        assert_eq!(cumulative[0], (Some(Duration::from_micros(250)), 0));
        assert_eq!(cumulative[1], (Some(Duration::from_micros(500)), 1));
        assert_eq!(cumulative[4], (Some(Duration::from_millis(5)), 1));
        assert_eq!(cumulative[5], (Some(Duration::from_millis(10)), 2));
        assert_eq!(cumulative.last(), Some(&(None, 2)));
    }
}
