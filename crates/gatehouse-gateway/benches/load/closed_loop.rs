//! Closed loop: every requester sends its next request the moment the previous one is
//! answered. This finds the most approvals per second the gateway can settle; its latency is
//! queueing (Little's law: requesters ÷ throughput), not what one request costs.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::http1::{Connection, Encoded};

/// `rounds` requests per requester, back to back; every latency, and the wall time of all.
pub(crate) async fn run(
    connections: Vec<Connection>,
    requests: &[Encoded],
    check: fn(&Value),
    rounds: usize,
) -> (Vec<Connection>, Vec<Duration>, Duration) {
    let started = Instant::now();
    let tasks: Vec<_> = connections
        .into_iter()
        .zip(requests.iter().cloned())
        .map(|(mut connection, request)| {
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(rounds);
                for _ in 0..rounds {
                    let sent = Instant::now();
                    check(&connection.call(&request).await);
                    latencies.push(sent.elapsed());
                }
                (connection, latencies)
            })
        })
        .collect();
    let (connections, latencies) = crate::gather(tasks).await;
    (connections, latencies, started.elapsed())
}
