//! The approvals database's batch times, read from the gateway's `GET /metrics` before and
//! after a phase. Every decision waits for one batch and its fsync, so each run shows what
//! the disk did beside what the approvals did: a run with a slow tail and many slow batches
//! met a disk that stalled.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const HISTOGRAM: &str = "gatehouse_approvals_db_batch_seconds";

/// The histogram's counters at one moment.
#[derive(Debug, Clone, Default)]
pub(crate) struct BatchTimes {
    /// Cumulative count per upper bound in seconds, `+Inf` last.
    buckets: Vec<(f64, u64)>,
    sum_secs: f64,
    writes: u64,
}

impl BatchTimes {
    /// Scrapes `GET /metrics` on a connection of its own.
    pub(crate) async fn read(addr: SocketAddr) -> Self {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let request = format!("GET /metrics HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).await.unwrap();
        Self::parse(&text)
    }

    fn parse(text: &str) -> Self {
        let mut times = Self::default();
        for line in text.lines() {
            let Some((name, value)) = line.rsplit_once(' ') else {
                continue;
            };
            if let Some(bound) = name
                .strip_prefix(HISTOGRAM)
                .and_then(|rest| rest.strip_prefix("_bucket{le=\""))
                .and_then(|rest| rest.strip_suffix("\"}"))
            {
                let bound = if bound == "+Inf" {
                    f64::INFINITY
                } else {
                    bound.parse().unwrap()
                };
                times.buckets.push((bound, value.parse().unwrap()));
            } else if name == format!("{HISTOGRAM}_sum") {
                times.sum_secs = value.parse().unwrap();
            } else if name == "gatehouse_approvals_db_writes_total" {
                times.writes = value.parse().unwrap();
            }
        }
        assert!(!times.buckets.is_empty(), "no {HISTOGRAM} in:\n{text}");
        times
    }

    /// What happened between `before` and `self`.
    pub(crate) fn since(&self, before: &Self) -> Self {
        Self {
            buckets: self
                .buckets
                .iter()
                .zip(&before.buckets)
                .map(|(&(bound, now), &(_, then))| (bound, now - then))
                .collect(),
            sum_secs: self.sum_secs - before.sum_secs,
            writes: self.writes - before.writes,
        }
    }

    fn count(&self) -> u64 {
        self.buckets.last().map_or(0, |&(_, count)| count)
    }

    /// Batches slower than `secs`, which must be one of the bounds.
    fn slower_than(&self, secs: f64) -> u64 {
        let within = self
            .buckets
            .iter()
            .find(|(bound, _)| (bound - secs).abs() < 1e-9)
            .map(|&(_, count)| count)
            .unwrap();
        self.count() - within
    }

    /// One line for the report: how many batches per approval, their mean, and the slow ones.
    pub(crate) fn line(&self, approvals: usize) -> String {
        let count = self.count();
        format!(
            "{count} batches ({:.2} per approval, {:.1} writes each), mean {:.2} ms; \
             slower than 1 ms: {}, 2 ms: {}, 5 ms: {}",
            count as f64 / approvals.max(1) as f64,
            self.writes as f64 / count.max(1) as f64,
            self.sum_secs * 1e3 / count.max(1) as f64,
            self.slower_than(0.001),
            self.slower_than(0.002),
            self.slower_than(0.005),
        )
    }
}
