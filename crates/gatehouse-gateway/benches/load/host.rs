//! How often the machine itself takes a core away, measured before the gateway starts: one
//! thread per core spins on the monotonic clock for `LOAD_PROBE_SECS` (3) and counts the gaps
//! longer than a millisecond. On an idle machine nothing should take a core for that long; on a
//! virtual machine whose host deschedules a virtual CPU, every such gap is a stall that any
//! approval in flight on that core waits out, and the run's p99 shows it. Printing it with each
//! run tells a slow disk or a slow gateway apart from a busy host.
//!
//! A second probe times how long one thread takes to wake another that sleeps, and back
//! ([`WakeRoundTrips`]). An approval crosses threads and processes half a dozen times, and each
//! time the thread it wakes may sleep on an idle virtual CPU, which the host must schedule again.
//! On hardware, or with the guest polling before it halts, a round trip is a few microseconds;
//! on a virtual machine that halts idle virtual CPUs on a busy host, over a hundred, and that
//! latency is in every approval, whatever the gateway does.

use std::sync::mpsc;
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

/// Round trips between two threads on two different cores that sleep between messages (a `std`
/// channel each way, parked on a futex like the gateway's runtime threads), with a pause after
/// each so both cores go idle.
pub(crate) struct WakeRoundTrips {
    times: Vec<Duration>,
}

impl WakeRoundTrips {
    /// Ping-pongs for `probed`, pausing `gap` after each round trip; `None` on a single core.
    pub(crate) fn probe(probed: Duration, gap: Duration) -> Option<Self> {
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            return None;
        }
        let (ping, pinged) = mpsc::channel::<()>();
        let (pong, ponged) = mpsc::channel::<()>();
        let echo = std::thread::spawn(move || {
            pin_to(1);
            while pinged.recv().is_ok() {
                if pong.send(()).is_err() {
                    break;
                }
            }
        });
        let asker = std::thread::spawn(move || {
            pin_to(0);
            let start = Instant::now();
            let mut times = Vec::new();
            while start.elapsed() < probed {
                let sent = Instant::now();
                ping.send(()).unwrap();
                ponged.recv().unwrap();
                times.push(sent.elapsed());
                std::thread::sleep(gap);
            }
            times
        });
        let mut times = asker.join().unwrap();
        echo.join().unwrap();
        times.sort_unstable();
        Some(Self { times })
    }

    /// One line for the report.
    pub(crate) fn line(&self) -> String {
        let at = |q: f64| {
            let index = ((self.times.len() as f64 * q) as usize).min(self.times.len() - 1);
            self.times[index].as_secs_f64() * 1e6
        };
        format!(
            "{} round trips between two sleeping threads on two cores: p50 {:.0} µs, p99 {:.0} µs",
            self.times.len(),
            at(0.5),
            at(0.99),
        )
    }
}

/// Keeps the calling thread on `core`.
fn pin_to(core: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    rustix::thread::sched_setaffinity(None, &set).unwrap();
}
