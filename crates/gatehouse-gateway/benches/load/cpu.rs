//! CPU time spent during a phase, split into the load generator's threads and everything else
//! (the gateway's workers, its blocking pool, the database writer, the audit writer), read from
//! `/proc` so the split needs no instrumentation in the gateway; and the time the hypervisor
//! kept the machine's virtual CPUs from running (`steal` in `/proc/stat`), which tells a run the
//! host slowed apart from a slow build.

use std::time::{Duration, Instant};

/// Linux reports thread times in `USER_HZ` ticks, which is 100 on every architecture it exports.
const TICK: Duration = Duration::from_millis(10);

/// CPU time used so far by the whole process and by the load generator's own threads, and the
/// machine's stolen time so far.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Usage {
    total: Duration,
    client: Duration,
    stolen: Duration,
    /// The machine's online CPUs, which the stolen time is summed over (not this process's
    /// affinity).
    cores: usize,
    at: Instant,
}

impl Usage {
    pub(crate) fn now() -> Self {
        let total = ticks(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default());
        let client = std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
            .filter(|stat| is_client_thread(stat))
            .map(|stat| ticks(&stat))
            .sum();
        let machine = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        Self {
            total,
            client,
            stolen: stolen(&machine),
            cores: online_cores(&machine),
            at: Instant::now(),
        }
    }

    /// CPU per request between `self` and `later`: (gateway, client).
    pub(crate) fn per_request(&self, later: &Usage, requests: usize) -> (Duration, Duration) {
        let count = u32::try_from(requests.max(1)).unwrap_or(u32::MAX);
        let client = later.client.saturating_sub(self.client);
        let total = later.total.saturating_sub(self.total);
        (total.saturating_sub(client) / count, client / count)
    }

    /// The share of all cores' time between `self` and `later` that the hypervisor gave to
    /// someone else, in per cent.
    pub(crate) fn stolen_percent(&self, later: &Usage) -> f64 {
        let wall = later.at.duration_since(self.at).as_secs_f64() * later.cores.max(1) as f64;
        let stolen = later.stolen.saturating_sub(self.stolen).as_secs_f64();
        if wall > 0.0 {
            100.0 * stolen / wall
        } else {
            0.0
        }
    }
}

/// The `steal` column of the machine's `cpu` line in `/proc/stat` (the eighth number after it).
fn stolen(stat: &str) -> Duration {
    let steal = stat
        .lines()
        .next()
        .filter(|line| line.starts_with("cpu "))
        .and_then(|line| line.split_whitespace().nth(8)?.parse::<u32>().ok())
        .unwrap_or(0);
    TICK * steal
}

/// The `cpuN` lines of `/proc/stat`, one per online CPU.
fn online_cores(stat: &str) -> usize {
    stat.lines()
        .filter(|line| {
            line.strip_prefix("cpu")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

/// The client runtime's workers, the schedule keeper and the main thread (which only waits).
fn is_client_thread(stat: &str) -> bool {
    let comm = stat
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map_or("", |(comm, _)| comm);
    comm.starts_with("client") || comm.starts_with("load-")
}

/// utime + stime (fields 14 and 15 of `stat`) as a duration.
fn ticks(stat: &str) -> Duration {
    let after_comm = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // `after_comm` starts at field 3 (state), so fields 14 and 15 are at indexes 11 and 12.
    let sum: u32 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u32>().ok())
        .sum();
    TICK * sum
}
