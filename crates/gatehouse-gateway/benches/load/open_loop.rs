//! Open loop: requests arrive on a Poisson schedule at a fixed aggregate rate whatever the server
//! does, and each is timed from the moment it was *scheduled*, not sent.
//!
//! Timing from the scheduled moment is the correction for coordinated omission: a requester
//! still waiting on its previous answer sends late, and that delay is the server's. The schedule
//! is one Poisson process at the aggregate rate whose arrivals go to a requester picked at
//! random, which is the same as every requester running its own Poisson process at
//! `rate / requesters`. A plain thread keeps the schedule (sleeping to the microsecond rather
//! than to the tokio timer's millisecond), so the clock the latency starts from is not the
//! client runtime's.

use std::time::{Duration, Instant};

use rand::Rng as _;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::http1::{Connection, Encoded};

/// One request's three moments, and the approval it created, if any.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) scheduled: Instant,
    pub(crate) sent: Instant,
    pub(crate) done: Instant,
    pub(crate) approval: Option<String>,
}

/// What one phase measured.
pub(crate) struct Phase {
    pub(crate) samples: Vec<Sample>,
    /// When the schedule began.
    pub(crate) started: Instant,
}

/// Offers `rate` requests per second for `duration`, each going to a random requester, which
/// sends its `requests[i]` on its own connection and checks the answer with `check`. Returns the
/// connections for the next phase.
pub(crate) async fn run(
    connections: Vec<Connection>,
    requests: &[Encoded],
    check: fn(&Value),
    rate: f64,
    duration: Duration,
) -> (Vec<Connection>, Phase) {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..connections.len())
        .map(|_| mpsc::unbounded_channel::<Instant>())
        .unzip();
    let tasks: Vec<_> = connections
        .into_iter()
        .zip(receivers)
        .zip(requests.iter().cloned())
        .map(|((mut connection, mut arrivals), request)| {
            tokio::spawn(async move {
                let mut samples = Vec::new();
                while let Some(scheduled) = arrivals.recv().await {
                    let sent = Instant::now();
                    let answer = connection.call(&request).await;
                    let done = Instant::now();
                    check(&answer);
                    let approval = answer["payload"]["id"].as_str().map(str::to_owned);
                    samples.push(Sample {
                        scheduled,
                        sent,
                        done,
                        approval,
                    });
                }
                (connection, samples)
            })
        })
        .collect();
    let started = Instant::now() + Duration::from_millis(20);
    let schedule = std::thread::Builder::new()
        .name("load-schedule".into())
        .spawn(move || keep_schedule(&senders, started, rate, duration))
        .unwrap();
    let (connections, samples) = crate::gather(tasks).await;
    schedule.join().unwrap();
    (connections, Phase { samples, started })
}

/// Sends each arrival's scheduled moment to a random requester, on time, until `duration` has
/// passed; dropping the senders then ends the requesters.
fn keep_schedule(
    requesters: &[mpsc::UnboundedSender<Instant>],
    started: Instant,
    rate: f64,
    duration: Duration,
) {
    let mut rng = rand::rng();
    let end = started + duration;
    let mut at = started;
    loop {
        // Exponential gaps: 1 - U lies in (0, 1], so the logarithm is finite.
        let gap = -(1.0 - rng.random::<f64>()).ln() / rate;
        at += Duration::from_secs_f64(gap);
        if at >= end {
            break;
        }
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        }
        let who = rng.random_range(0..requesters.len());
        requesters[who].send(at).unwrap();
    }
}
