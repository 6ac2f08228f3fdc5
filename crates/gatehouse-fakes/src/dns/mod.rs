//! A loopback DNS server for URL and SSRF checks: UDP and TCP on one port, answers a test
//! scripts per name (A, AAAA, CNAME chains, several addresses, NXDOMAIN, SERVFAIL, silence,
//! answers that change between queries for DNS rebinding), and a log of every query.
//!
//! Point a resolver at [`DnsHandle::addr`] (hickory-resolver: a `NameServerConfig` for that
//! IP with UDP and TCP connections on that port). Names nobody set are NXDOMAIN: the server
//! never forwards a query anywhere.

mod serve;
mod wire;
mod zone;

use std::net::SocketAddr;
use std::sync::{Arc, PoisonError};

use serde_json::Value;
use tokio::net::{TcpListener, UdpSocket};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::FakeError;
use crate::server::shutdown_signal;
use serve::DnsState;
pub use wire::{DnsQuery, Transport};
pub use zone::{DnsAnswer, DnsRecord};

/// How often binding TCP on the UDP socket's port is retried when the port was picked by the
/// OS and turned out to be taken for TCP.
const BIND_ATTEMPTS: usize = 8;

/// Starts a DNS server on `addr` (UDP and TCP on the same port; port 0 picks a free one).
pub async fn spawn(addr: SocketAddr) -> Result<DnsHandle, FakeError> {
    let (udp, tcp) = bind(addr).await?;
    let addr = udp.local_addr().map_err(FakeError::LocalAddr)?;
    let state = Arc::new(DnsState::default());
    let (shutdown, signal) = shutdown_signal();
    let tasks = vec![
        tokio::spawn(serve::udp(udp, Arc::clone(&state), signal.clone())),
        tokio::spawn(serve::tcp(tcp, Arc::clone(&state), signal)),
    ];
    Ok(DnsHandle {
        addr,
        state,
        shutdown,
        tasks,
    })
}

async fn bind(addr: SocketAddr) -> Result<(UdpSocket, TcpListener), FakeError> {
    let bind_error = |source| FakeError::Bind { addr, source };
    let mut last = None;
    for _ in 0..BIND_ATTEMPTS {
        let udp = UdpSocket::bind(addr).await.map_err(bind_error)?;
        let bound = udp.local_addr().map_err(FakeError::LocalAddr)?;
        match TcpListener::bind(bound).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(error) if addr.port() == 0 => last = Some(error),
            Err(error) => return Err(bind_error(error)),
        }
    }
    Err(bind_error(last.unwrap_or_else(|| {
        std::io::Error::other("no port free for both UDP and TCP")
    })))
}

/// A running DNS server. Dropping it stops the server.
#[derive(Debug)]
pub struct DnsHandle {
    /// The bound address, the same port for UDP and TCP.
    pub addr: SocketAddr,
    state: Arc<DnsState>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl DnsHandle {
    /// Answers every query for `name` with `answer` from now on.
    pub fn set(&self, name: &str, answer: DnsAnswer) -> Result<(), FakeError> {
        self.set_in_turn(name, vec![answer])
    }

    /// Answers the queries for `name` in turn: the nth query of each record type gets the
    /// nth answer, and the last answer repeats. How a test makes a name resolve to a public
    /// address first and to a private one on the next lookup (DNS rebinding).
    pub fn set_in_turn(&self, name: &str, answers: Vec<DnsAnswer>) -> Result<(), FakeError> {
        self.zone().set(name, answers)
    }

    /// Sets every name of a JSON zone (the format of `--dns-zone`, see `docs/fakes.md`).
    pub fn load_json(&self, zone: &Value) -> Result<(), FakeError> {
        let names = zone::parse_json(zone)?;
        let mut current = self.zone();
        for (name, answers) in names {
            current.set(&name, answers)?;
        }
        Ok(())
    }

    /// Forgets every name (all become NXDOMAIN); the query log stays.
    pub fn clear(&self) {
        self.zone().clear();
    }

    /// Every query received so far, oldest first.
    pub fn queries(&self) -> Vec<DnsQuery> {
        self.state
            .queries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The queries for one name (matched like the zone matches: case and final dot ignored).
    pub fn queries_for(&self, name: &str) -> Vec<DnsQuery> {
        let Ok(key) = zone::key(name) else {
            return Vec::new();
        };
        self.queries()
            .into_iter()
            .filter(|q| q.name == key)
            .collect()
    }

    /// Stops serving and waits for the server tasks to end.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
    }

    fn zone(&self) -> std::sync::MutexGuard<'_, zone::Zone> {
        self.state
            .zone
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for DnsHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}
