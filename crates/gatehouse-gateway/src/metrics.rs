//! Counters for `GET /metrics`, rendered in the Prometheus text exposition format (0.0.4).
//!
//! Hand-written rather than a metrics crate: there are a handful of series, and labels are kept
//! low-cardinality by construction (method names come from the registry, codes from [`Error::code`]).
//!
//! [`Error::code`]: crate::Error::code

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

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

    /// The exposition text; `connections` is read live from the connection tracker.
    pub(crate) fn render(&self, connections: usize) -> String {
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
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
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
        let text = metrics.render(3);
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
    fn escapes_label_values() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
