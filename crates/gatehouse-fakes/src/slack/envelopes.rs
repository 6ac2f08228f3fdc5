//! Socket Mode bookkeeping: one-time tickets, connections, envelopes and their acks.
//! Unacked envelopes are redelivered on the next connection with `retry_attempt` raised.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::APP_ID;
use crate::ws::Outbound;

#[derive(Debug)]
struct Envelope {
    id: String,
    kind: String,
    payload: Value,
    accepts_response_payload: bool,
    retry_attempt: u32,
    sent_on: Option<u64>,
    ever_sent: bool,
    ack: Option<Value>,
}

impl Envelope {
    fn frame(&self) -> Value {
        json!({"envelope_id": self.id, "type": self.kind, "payload": self.payload,
               "accepts_response_payload": self.accepts_response_payload,
               "retry_attempt": self.retry_attempt,
               "retry_reason": if self.retry_attempt > 0 { "timeout" } else { "" }})
    }
}

/// Why an ack was not accepted.
#[derive(Debug, PartialEq)]
pub(crate) enum BadAck {
    /// Not JSON or no `envelope_id`.
    Malformed,
    /// No such envelope.
    Unknown,
    /// Acked before.
    Duplicate,
}

/// Socket Mode state.
#[derive(Debug, Default)]
pub(crate) struct SocketMode {
    connections: BTreeMap<u64, UnboundedSender<Outbound>>,
    tickets: HashSet<String>,
    next: u64,
    envelopes: Vec<Envelope>,
}

impl SocketMode {
    /// A one-time ticket for the URL `apps.connections.open` returns.
    pub(crate) fn ticket(&mut self) -> String {
        self.next += 1;
        let ticket = format!("ticket-{}", self.next);
        self.tickets.insert(ticket.clone());
        ticket
    }

    /// Uses up a ticket; a reused or invented one is refused.
    pub(crate) fn redeem(&mut self, ticket: &str) -> bool {
        self.tickets.remove(ticket)
    }

    /// Registers a connection: sends `hello`, then every envelope still waiting for an ack.
    pub(crate) fn attach(&mut self, tx: UnboundedSender<Outbound>) -> u64 {
        self.next += 1;
        let conn = self.next;
        self.connections.insert(conn, tx.clone());
        let hello = json!({"type": "hello", "num_connections": self.connections.len(),
            "debug_info": {"host": "gatehouse-fake", "approximate_connection_time": 18_060},
            "connection_info": {"app_id": APP_ID}});
        let _ = tx.send(Outbound::Frame(hello));
        for envelope in self
            .envelopes
            .iter_mut()
            .filter(|e| e.ack.is_none() && e.sent_on.is_none())
        {
            if envelope.ever_sent {
                envelope.retry_attempt += 1;
            }
            envelope.ever_sent = true;
            envelope.sent_on = Some(conn);
            let _ = tx.send(Outbound::Frame(envelope.frame()));
        }
        conn
    }

    /// The connection ended; its unacked envelopes wait for the next one.
    pub(crate) fn detach(&mut self, conn: u64) {
        self.connections.remove(&conn);
        for envelope in &mut self.envelopes {
            if envelope.sent_on == Some(conn) && envelope.ack.is_none() {
                envelope.sent_on = None;
            }
        }
    }

    /// Queues an envelope and sends it on the newest connection; returns its id and whether it
    /// went out now.
    pub(crate) fn enqueue(
        &mut self,
        kind: &str,
        payload: Value,
        accepts_response_payload: bool,
    ) -> (String, bool) {
        self.next += 1;
        let mut envelope = Envelope {
            id: format!("env-{}", self.next),
            kind: kind.to_owned(),
            payload,
            accepts_response_payload,
            retry_attempt: 0,
            sent_on: None,
            ever_sent: false,
            ack: None,
        };
        let live = self
            .connections
            .iter()
            .next_back()
            .map(|(c, tx)| (*c, tx.clone()));
        if let Some((conn, tx)) = live
            && tx.send(Outbound::Frame(envelope.frame())).is_ok()
        {
            envelope.sent_on = Some(conn);
            envelope.ever_sent = true;
        }
        let answer = (envelope.id.clone(), envelope.sent_on.is_some());
        self.envelopes.push(envelope);
        answer
    }

    /// Records a client ack.
    pub(crate) fn ack(&mut self, frame: &Value) -> Result<(), BadAck> {
        let id = frame
            .get("envelope_id")
            .and_then(Value::as_str)
            .ok_or(BadAck::Malformed)?;
        let envelope = self
            .envelopes
            .iter_mut()
            .find(|e| e.id == id)
            .ok_or(BadAck::Unknown)?;
        if envelope.ack.is_some() {
            return Err(BadAck::Duplicate);
        }
        envelope.ack = Some(frame.clone());
        Ok(())
    }

    /// Tells every connection to go away; returns how many there were.
    pub(crate) fn disconnect(&mut self, reason: &str, abrupt: bool) -> usize {
        let connections = std::mem::take(&mut self.connections);
        for (conn, tx) in &connections {
            let notice = json!({"type": "disconnect", "reason": reason,
                "debug_info": {"host": "gatehouse-fake"}});
            let _ = tx.send(if abrupt {
                Outbound::Drop
            } else {
                Outbound::Close {
                    notice: Some(notice),
                    code: 1000,
                    reason: "",
                }
            });
            self.detach(*conn);
        }
        connections.len()
    }

    /// Every envelope with its delivery and ack state, for `GET /_fake/envelopes`.
    pub(crate) fn list(&self) -> Value {
        Value::Array(
            self.envelopes
                .iter()
                .map(|e| {
                    json!({"envelope_id": e.id, "type": e.kind, "payload": e.payload,
                        "accepts_response_payload": e.accepts_response_payload,
                        "retry_attempt": e.retry_attempt, "delivered": e.ever_sent,
                        "acked": e.ack.is_some(), "ack": e.ack})
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc::unbounded_channel;

    fn ids(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Outbound>) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        while let Ok(Outbound::Frame(f)) = rx.try_recv() {
            let id = f["envelope_id"]
                .as_str()
                .or(f["type"].as_str())
                .unwrap_or("")
                .to_owned();
            out.push((id, f["retry_attempt"].as_u64().unwrap_or(0)));
        }
        out
    }

    #[test]
    fn redelivers_unacked_envelopes_with_a_retry_attempt() {
        let mut socket = SocketMode::default();
        let (tx, mut rx) = unbounded_channel();
        let conn = socket.attach(tx);
        let (first, live) = socket.enqueue("interactive", json!({}), false);
        assert!(live);
        let (second, _) = socket.enqueue("interactive", json!({}), false);
        assert_eq!(socket.ack(&json!({"envelope_id": first})), Ok(()));
        assert_eq!(
            socket.ack(&json!({"envelope_id": first})),
            Err(BadAck::Duplicate)
        );
        assert_eq!(
            socket.ack(&json!({"envelope_id": "nope"})),
            Err(BadAck::Unknown)
        );
        let _ = ids(&mut rx);
        socket.detach(conn);
        let (tx, mut rx) = unbounded_channel();
        socket.attach(tx);
        assert_eq!(ids(&mut rx), [("hello".to_owned(), 0), (second, 1)]);
    }

    #[test]
    fn queues_envelopes_until_a_connection_exists() {
        let mut socket = SocketMode::default();
        let (id, live) = socket.enqueue("events_api", json!({}), false);
        assert!(!live);
        let (tx, mut rx) = unbounded_channel();
        socket.attach(tx);
        assert_eq!(ids(&mut rx), [("hello".to_owned(), 0), (id, 0)]);
    }

    #[test]
    fn tickets_work_once() {
        let mut socket = SocketMode::default();
        let ticket = socket.ticket();
        assert!(socket.redeem(&ticket));
        assert!(!socket.redeem(&ticket));
        assert!(!socket.redeem("ticket-999"));
    }
}
