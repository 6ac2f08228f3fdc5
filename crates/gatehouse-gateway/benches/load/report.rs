//! Percentiles and the printed lines.

use std::time::Duration;

/// Latency percentiles of one set of requests.
pub(crate) struct Latencies {
    sorted: Vec<Duration>,
}

impl Latencies {
    pub(crate) fn new(mut all: Vec<Duration>) -> Self {
        all.sort_unstable();
        Self { sorted: all }
    }

    pub(crate) fn count(&self) -> usize {
        self.sorted.len()
    }

    /// The `q` quantile in milliseconds (nearest rank).
    pub(crate) fn ms(&self, q: f64) -> f64 {
        let Some(last) = self.sorted.len().checked_sub(1) else {
            return 0.0;
        };
        let index = ((last as f64) * q).round() as usize;
        self.sorted[index.min(last)].as_secs_f64() * 1_000.0
    }

    /// `p50 … p90 … p99 … p99.9 … max` in milliseconds.
    pub(crate) fn line(&self) -> String {
        format!(
            "p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
            self.ms(0.50),
            self.ms(0.90),
            self.ms(0.99),
            self.ms(0.999),
            self.ms(1.0)
        )
    }
}
