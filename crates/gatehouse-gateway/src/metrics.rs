//! Counters for `GET /metrics`, rendered in the Prometheus text exposition format (0.0.4).
//!
//! Hand-written rather than a metrics crate: there are a handful of series, and labels are kept
//! low-cardinality by construction (method names come from the registry, codes from [`Error::code`]).
//!
//! [`Error::code`]: crate::Error::code

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where a request arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Transport {
    Ws,
    Http,
}

impl Transport {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ws => "ws",
            Self::Http => "http",
        }
    }
}

type RequestKey = (Transport, String, &'static str);

/// The approvals store's write batches so far, as a histogram of their times: every decision
/// waits for the batch that commits it, so a slow disk shows here first. Given by whoever
/// opened the store, so the gateway names no store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreBatches {
    /// Batches taking at most each bound, cumulative, the last with `None` for `+Inf`.
    pub cumulative: Vec<(Option<Duration>, u64)>,
    /// All batches' time added up.
    pub total: Duration,
    /// Writes committed in those batches.
    pub writes: u64,
}

/// Reads a store's [`StoreBatches`] for `GET /metrics`.
pub type StoreMetrics = Arc<dyn Fn() -> StoreBatches + Send + Sync>;

/// The gateway's counters; cheap to update from any task.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    events_published: AtomicU64,
    slow_consumers_dropped: AtomicU64,
    requests: Mutex<BTreeMap<RequestKey, u64>>,
}

impl Metrics {
    /// Counts one answered request; `method` must be a registered name or `unknown`.
    pub(crate) fn record_request(&self, transport: Transport, method: &str, code: &'static str) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests
                .entry((transport, method.to_owned(), code))
                .or_insert(0) += 1;
        }
    }

    pub(crate) fn record_event_published(&self) {
        self.events_published.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_slow_consumer(&self) {
        self.slow_consumers_dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// The exposition text; `connections` is read live from the connection tracker, and
    /// `batch_times` from the approvals store when the gateway was given them.
    pub(crate) fn render(&self, connections: usize, batch_times: Option<&StoreBatches>) -> String {
        let mut out = String::new();
        let version = format!("{{version=\"{}\"}}", env!("CARGO_PKG_VERSION"));
        let series = [
            (
                "gatehouse_build_info",
                "gauge",
                "Version of the running gateway.",
                version,
                1,
            ),
            (
                "gatehouse_ws_connections",
                "gauge",
                "Open WebSocket connections.",
                String::new(),
                connections as u64,
            ),
            (
                "gatehouse_events_published_total",
                "counter",
                "Events published to the hub.",
                String::new(),
                self.events_published.load(Ordering::Relaxed),
            ),
            (
                "gatehouse_slow_consumers_dropped_total",
                "counter",
                "Connections dropped for overflowing their event queue.",
                String::new(),
                self.slow_consumers_dropped.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, labels, value) in series {
            header(&mut out, name, kind, help);
            let _ = writeln!(out, "{name}{labels} {value}");
        }
        let name = "gatehouse_rpc_requests_total";
        header(
            &mut out,
            name,
            "counter",
            "Requests answered, by transport, method and outcome code.",
        );
        if let Ok(requests) = self.requests.lock() {
            for ((transport, method, code), count) in requests.iter() {
                let _ = writeln!(
                    out,
                    "{name}{{transport=\"{}\",method=\"{}\",code=\"{code}\"}} {count}",
                    transport.as_str(),
                    escape_label(method),
                );
            }
        }
        if let Some(times) = batch_times {
            render_batch_times(&mut out, times);
        }
        out
    }
}

/// The approvals database's batch times as a Prometheus histogram, and the writes they held.
fn render_batch_times(out: &mut String, times: &StoreBatches) {
    let name = "gatehouse_approvals_db_batch_seconds";
    header(
        out,
        name,
        "histogram",
        "Approvals database write batches by time from BEGIN to COMMIT, fsync included; every decision waits for one.",
    );
    for (bound, count) in &times.cumulative {
        let le = bound.map_or_else(|| "+Inf".to_owned(), seconds);
        let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {count}");
    }
    let count = times.cumulative.last().map_or(0, |(_, count)| *count);
    let _ = writeln!(out, "{name}_sum {}", seconds(times.total));
    let _ = writeln!(out, "{name}_count {count}");
    let name = "gatehouse_approvals_db_writes_total";
    header(
        out,
        name,
        "counter",
        "Approvals database writes, each in one of those batches.",
    );
    let _ = writeln!(out, "{name} {}", times.writes);
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Seconds in decimal, to the microsecond and without trailing zeros: `f64` would print
/// 1.503 s as `1.5030000000000001`.
fn seconds(duration: Duration) -> String {
    let micros = duration.as_micros();
    let text = format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Label values escape backslash, quote and newline per the exposition format.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_labels_in_exposition_format() {
        let metrics = Metrics::default();
        metrics.record_request(Transport::Ws, "gateway.status", "ok");
        metrics.record_request(Transport::Ws, "gateway.status", "ok");
        metrics.record_request(Transport::Http, "unknown", "unknown_method");
        metrics.record_event_published();
        let text = metrics.render(3, None);
        assert!(text.contains("gatehouse_ws_connections 3\n"), "{text}");
        assert!(
            text.contains("gatehouse_events_published_total 1\n"),
            "{text}"
        );
        assert!(text.contains(
            "gatehouse_rpc_requests_total{transport=\"ws\",method=\"gateway.status\",code=\"ok\"} 2\n"
        ));
        assert!(text.contains(
            "gatehouse_rpc_requests_total{transport=\"http\",method=\"unknown\",code=\"unknown_method\"} 1\n"
        ));
    }

    #[test]
    fn renders_batch_times_as_a_cumulative_histogram() {
        // Five batches of at most 250 µs, two more of at most 2 ms, one slower than 1 s.
        let bounds = [
            250, 500, 1_000, 2_000, 5_000, 10_000, 25_000, 100_000, 1_000_000,
        ];
        let counts = [5, 5, 5, 7, 7, 7, 7, 7, 7];
        let mut cumulative: Vec<_> = bounds
            .into_iter()
            .map(|micros| Some(Duration::from_micros(micros)))
            .zip(counts)
            .collect();
        cumulative.push((None, 8));
        let times = StoreBatches {
            cumulative,
            total: Duration::from_millis(1_503),
            writes: 11,
        };
        let text = Metrics::default().render(0, Some(&times));
        for line in [
            "# TYPE gatehouse_approvals_db_batch_seconds histogram\n",
            "gatehouse_approvals_db_batch_seconds_bucket{le=\"0.00025\"} 5\n",
            "gatehouse_approvals_db_batch_seconds_bucket{le=\"0.001\"} 5\n",
            "gatehouse_approvals_db_batch_seconds_bucket{le=\"0.002\"} 7\n",
            "gatehouse_approvals_db_batch_seconds_bucket{le=\"1\"} 7\n",
            "gatehouse_approvals_db_batch_seconds_bucket{le=\"+Inf\"} 8\n",
            "gatehouse_approvals_db_batch_seconds_sum 1.503\n",
            "gatehouse_approvals_db_batch_seconds_count 8\n",
            "gatehouse_approvals_db_writes_total 11\n",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
        assert!(!Metrics::default().render(0, None).contains("approvals_db"));
    }

    #[test]
    fn escapes_label_values() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
