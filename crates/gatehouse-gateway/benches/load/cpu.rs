//! CPU time spent during a phase, split into the load generator's threads and everything else
//! (the gateway's workers, its blocking pool, the database writer, the audit writer), and the
//! gateway's part again by thread, read from `/proc` so the split needs no instrumentation in
//! the gateway; and the time the hypervisor kept the machine's virtual CPUs from running
//! (`steal` in `/proc/stat`), which tells a run the host slowed apart from a slow build.

use std::time::{Duration, Instant};

/// Linux reports thread times in `USER_HZ` ticks, which is 100 on every architecture it exports.
const TICK: Duration = Duration::from_millis(10);

/// CPU time used so far by the whole process and by the load generator's own threads, and the
/// machine's stolen time so far.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Usage {
    total: Duration,
    client: Duration,
    /// The gateway's own threads, one entry per [`GATEWAY_THREADS`] group.
    gateway_threads: [Split; GATEWAY_THREADS.len()],
    stolen: Duration,
    /// The machine's online CPUs, which the stolen time is summed over (not this process's
    /// affinity).
    cores: usize,
    at: Instant,
}

impl Usage {
    pub(crate) fn now() -> Self {
        let total = ticks(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default()).sum();
        let mut client = Duration::ZERO;
        let mut gateway_threads = [Split::default(); GATEWAY_THREADS.len()];
        let tasks = std::fs::read_dir("/proc/self/task").into_iter().flatten();
        for stat in tasks
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        {
            let name = comm(&stat);
            if is_client_thread(name) {
                client += ticks(&stat).sum();
            } else if let Some(group) = GATEWAY_THREADS
                .iter()
                .position(|(prefix, _)| name.starts_with(prefix))
            {
                gateway_threads[group] = gateway_threads[group].plus(ticks(&stat));
            }
        }
        let machine = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        Self {
            total,
            client,
            gateway_threads,
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

    /// The gateway's CPU per request between `self` and `later`, by thread group: which of its
    /// threads an approval's cost lands on (the approvals writer is the one every approval
    /// queues for).
    pub(crate) fn per_request_by_thread(
        &self,
        later: &Usage,
        requests: usize,
    ) -> impl Iterator<Item = (&'static str, Split)> {
        let count = u32::try_from(requests.max(1)).unwrap_or(u32::MAX);
        GATEWAY_THREADS
            .iter()
            .zip(self.gateway_threads.iter().zip(later.gateway_threads))
            .map(move |((_, label), (before, after))| {
                let user = after.user.saturating_sub(before.user) / count;
                let kernel = after.kernel.saturating_sub(before.kernel) / count;
                (*label, Split { user, kernel })
            })
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

/// The gateway's threads by job, as `comm` names them (the kernel keeps 15 bytes of a
/// thread's name), with the label the report gives them.
const GATEWAY_THREADS: [(&str, &str); 4] = [
    ("gateway", "runtime"),
    ("approvals-write", "approvals writer"),
    ("gatehouse-audit", "audit writer"),
    ("approvals-check", "checkpointer"),
];

/// User and kernel CPU time.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Split {
    pub(crate) user: Duration,
    pub(crate) kernel: Duration,
}

impl Split {
    fn plus(self, other: Split) -> Split {
        Split {
            user: self.user + other.user,
            kernel: self.kernel + other.kernel,
        }
    }

    pub(crate) fn sum(self) -> Duration {
        self.user + self.kernel
    }
}

/// The thread name in a `stat` line: between the first `(` and the last `)`, since the name
/// itself may hold either.
fn comm(stat: &str) -> &str {
    stat.split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map_or("", |(comm, _)| comm)
}

/// The client runtime's workers, the schedule keeper and the main thread (which only waits).
fn is_client_thread(comm: &str) -> bool {
    comm.starts_with("client") || comm.starts_with("load-")
}

/// utime and stime (fields 14 and 15 of `stat`).
fn ticks(stat: &str) -> Split {
    let after_comm = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // `after_comm` starts at field 3 (state), so fields 14 and 15 are at indexes 11 and 12.
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|field| field.parse::<u32>().ok())
            .map_or(Duration::ZERO, |ticks| TICK * ticks)
    };
    Split {
        user: field(11),
        kernel: field(12),
    }
}
