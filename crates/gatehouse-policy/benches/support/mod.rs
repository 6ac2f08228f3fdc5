//! Timing shared by the benches: criterion's figures are means over a mix, the budgets are
//! ratios of medians, measured here in the same run as their baseline.

/// Nanoseconds per call: the median of nine batches of `batch` calls, after a warm-up batch.
pub(crate) fn median_batch_ns(batch: u32, mut call: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..10)
        .map(|_| {
            let start = std::time::Instant::now();
            for _ in 0..batch {
                call();
            }
            start.elapsed().as_nanos() as f64 / f64::from(batch)
        })
        .skip(1)
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}
