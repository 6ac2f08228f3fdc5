//! How often the machine itself takes a core away, measured before the gateway starts: one
//! thread per core spins on the monotonic clock for `LOAD_PROBE_SECS` (3) and counts the gaps
//! longer than a millisecond. On an idle machine nothing should take a core for that long; on a
//! virtual machine whose host deschedules a virtual CPU, every such gap is a stall that any
//! approval in flight on that core waits out, and the run's p99 shows it. Printing it with each
//! run tells a slow disk or a slow gateway apart from a busy host.

use std::time::{Duration, Instant};

/// A gap this long between two clock reads of a spinning thread means it lost its core.
const STALL: Duration = Duration::from_millis(1);

/// The stalls seen on every core during one probe.
pub(crate) struct Stalls {
    cores: usize,
    probed: Duration,
    gaps: Vec<Duration>,
}

impl Stalls {
    /// Spins one thread per core for `probed`.
    pub(crate) fn probe(probed: Duration) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let spinners: Vec<_> = (0..cores)
            .map(|_| std::thread::spawn(move || spin(probed)))
            .collect();
        let gaps = spinners
            .into_iter()
            .flat_map(|spinner| spinner.join().unwrap())
            .collect();
        Self {
            cores,
            probed,
            gaps,
        }
    }

    /// One line for the report.
    pub(crate) fn line(&self) -> String {
        let longest = self.gaps.iter().max().copied().unwrap_or_default();
        let lost: Duration = self.gaps.iter().sum();
        format!(
            "{} stalls over {} ms in {:.0} s on {} cores (longest {:.1} ms, {:.2} % of the time lost)",
            self.gaps.len(),
            STALL.as_millis(),
            self.probed.as_secs_f64(),
            self.cores,
            longest.as_secs_f64() * 1e3,
            lost.as_secs_f64() * 100.0 / (self.probed.as_secs_f64() * self.cores as f64),
        )
    }
}

/// Reads the clock in a loop for `probed`; the gaps longer than [`STALL`].
fn spin(probed: Duration) -> Vec<Duration> {
    let start = Instant::now();
    let mut last = start;
    let mut gaps = Vec::new();
    while last - start < probed {
        let now = Instant::now();
        if now - last > STALL {
            gaps.push(now - last);
        }
        last = now;
    }
    gaps
}
