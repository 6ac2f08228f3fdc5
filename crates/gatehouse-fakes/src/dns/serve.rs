//! The UDP and TCP loops of the DNS server: one datagram or one length-prefixed message in,
//! one answer out, every query logged.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

use super::wire::{DnsQuery, Transport, answer};
use super::zone::Zone;
use crate::server::Shutdown;

/// What both loops share: the zone and the query log.
#[derive(Debug, Default)]
pub(crate) struct DnsState {
    pub(crate) zone: Mutex<Zone>,
    pub(crate) queries: Mutex<Vec<DnsQuery>>,
}

impl DnsState {
    /// Answers one message and logs its query.
    fn handle(&self, request: &[u8], transport: Transport) -> Option<Vec<u8>> {
        let (bytes, query) = {
            let mut zone = self.zone.lock().unwrap_or_else(PoisonError::into_inner);
            answer(&mut zone, request, transport)
        };
        if let Some(query) = query {
            tracing::info!(name = %query.name, record_type = %query.record_type,
                outcome = %query.outcome, addresses = ?query.addresses, "DNS query answered.");
            self.queries
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(query);
        }
        bytes
    }
}

/// Serves datagrams until the fake stops.
pub(crate) async fn udp(socket: UdpSocket, state: Arc<DnsState>, mut shutdown: Shutdown) {
    let mut buf = vec![0_u8; 4096];
    loop {
        let (len, peer) = tokio::select! {
            () = shutdown.wait() => return,
            received = socket.recv_from(&mut buf) => match received {
                Ok(received) => received,
                // ICMP port unreachable from an earlier answer and the like: keep serving.
                Err(error) => {
                    tracing::debug!(%error, "DNS UDP receive failed.");
                    continue;
                }
            },
        };
        if let Some(reply) = state.handle(&buf[..len], Transport::Udp)
            && let Err(error) = socket.send_to(&reply, peer).await
        {
            tracing::debug!(%error, "DNS UDP send failed.");
        }
    }
}

/// Accepts TCP connections until the fake stops.
pub(crate) async fn tcp(listener: TcpListener, state: Arc<DnsState>, mut shutdown: Shutdown) {
    loop {
        let stream = tokio::select! {
            () = shutdown.wait() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "DNS TCP accept failed.");
                    continue;
                }
            },
        };
        let state = Arc::clone(&state);
        let mut stop = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = stop.wait() => {}
                () = connection(stream, &state) => {}
            }
        });
    }
}

/// Serves length-prefixed messages on one connection; a silent answer sends nothing and the
/// connection stays open, so the client times out.
async fn connection(mut stream: TcpStream, state: &DnsState) {
    loop {
        let mut len = [0_u8; 2];
        if stream.read_exact(&mut len).await.is_err() {
            return;
        }
        let mut request = vec![0_u8; usize::from(u16::from_be_bytes(len))];
        if stream.read_exact(&mut request).await.is_err() {
            return;
        }
        let Some(reply) = state.handle(&request, Transport::Tcp) else {
            continue;
        };
        let Ok(reply_len) = u16::try_from(reply.len()) else {
            return;
        };
        let mut framed = reply_len.to_be_bytes().to_vec();
        framed.extend_from_slice(&reply);
        if stream.write_all(&framed).await.is_err() {
            return;
        }
    }
}
