//! DNS messages on the wire (hickory-proto): a query in, the zone's answer out, truncated
//! for UDP as a real server does so the client retries over TCP.

use std::net::IpAddr;

use hickory_proto::op::{Edns, Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::{A, AAAA, CNAME};
use hickory_proto::rr::{Name, RData, Record};
use serde::Serialize;

use super::zone::{DnsRecord, Resolution, Zone, name_key};
use crate::clock::now_ms;

/// The EDNS payload size the server offers (the DNS Flag Day 2020 value).
const SERVER_PAYLOAD: u16 = 1232;

/// How a query reached the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// UDP datagrams.
    Udp,
    /// TCP with two-byte length prefixes.
    Tcp,
}

/// One query the server received, and what it answered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DnsQuery {
    /// The name asked for, lower case, without the final dot.
    pub name: String,
    /// The record type asked for (`A`, `AAAA`, `CNAME`, …).
    pub record_type: String,
    /// UDP or TCP.
    pub transport: Transport,
    /// Milliseconds since the Unix epoch when it arrived.
    pub at_ms: u64,
    /// `NOERROR`, `NXDOMAIN`, `SERVFAIL`, `FORMERR`, `NOTIMP`, or `silent` when nothing was sent.
    pub outcome: String,
    /// The addresses in the answer section, in order.
    pub addresses: Vec<IpAddr>,
    /// Whether the UDP answer was too large and sent truncated (TC), for a TCP retry.
    pub truncated: bool,
}

/// Answers one request. `None` means send nothing: the zone asked for silence, or the bytes
/// were not even a DNS header. The query is `None` when there was no question to record.
pub(crate) fn answer(
    zone: &mut Zone,
    request: &[u8],
    transport: Transport,
) -> (Option<Vec<u8>>, Option<DnsQuery>) {
    let Ok(request) = Message::from_vec(request) else {
        return (form_error(request), None);
    };
    let id = request.metadata.id;
    let [query] = request.queries.as_slice() else {
        let reply = Message::error_msg(id, request.metadata.op_code, ResponseCode::FormErr);
        return (reply.to_vec().ok(), None);
    };
    let mut log = DnsQuery {
        name: name_key(query.name()),
        record_type: query.query_type().to_string(),
        transport,
        at_ms: now_ms(),
        outcome: String::new(),
        addresses: Vec::new(),
        truncated: false,
    };
    let mut reply = Message::response(id, request.metadata.op_code);
    reply.metadata.recursion_desired = request.metadata.recursion_desired;
    reply.metadata.recursion_available = true;
    reply.add_query(query.clone());
    if request.edns.is_some() {
        // A query with EDNS gets EDNS back (RFC 6891), stating what this server accepts.
        let mut edns = Edns::new();
        edns.set_max_payload(SERVER_PAYLOAD);
        reply.set_edns(edns);
    }
    if request.metadata.message_type != MessageType::Query
        || request.metadata.op_code != OpCode::Query
    {
        reply.metadata.response_code = ResponseCode::NotImp;
    } else {
        match zone.resolve(query.name(), query.query_type()) {
            Resolution::Silent => {
                log.outcome = "silent".into();
                return (None, Some(log));
            }
            Resolution::ServFail => reply.metadata.response_code = ResponseCode::ServFail,
            Resolution::Answer { nxdomain, records } => {
                if nxdomain {
                    reply.metadata.response_code = ResponseCode::NXDomain;
                }
                reply.metadata.authoritative = true;
                for (owner, record, ttl) in records {
                    if let Some(ip) = address(&record) {
                        log.addresses.push(ip);
                    }
                    reply.add_answer(to_wire(owner, record, ttl));
                }
            }
        }
    }
    log.outcome = mnemonic(reply.metadata.response_code).into();
    let limit = match transport {
        Transport::Udp => usize::from(request.max_payload().min(SERVER_PAYLOAD)),
        Transport::Tcp => usize::from(u16::MAX),
    };
    let bytes = match reply.to_vec() {
        Ok(bytes) if bytes.len() <= limit => Some(bytes),
        Ok(_) => {
            log.truncated = true;
            reply.truncate().to_vec().ok()
        }
        Err(error) => {
            tracing::warn!(%error, "Could not encode a DNS answer.");
            Message::error_msg(id, OpCode::Query, ResponseCode::ServFail)
                .to_vec()
                .ok()
        }
    };
    (bytes, Some(log))
}

/// The RCODE as DNS tools print it.
fn mnemonic(code: ResponseCode) -> &'static str {
    match code {
        ResponseCode::NoError => "NOERROR",
        ResponseCode::FormErr => "FORMERR",
        ResponseCode::ServFail => "SERVFAIL",
        ResponseCode::NXDomain => "NXDOMAIN",
        ResponseCode::NotImp => "NOTIMP",
        _ => "OTHER",
    }
}

/// FORMERR for bytes that have a header but no parseable message; nothing for less.
fn form_error(request: &[u8]) -> Option<Vec<u8>> {
    let id = u16::from_be_bytes([*request.first()?, *request.get(1)?]);
    Message::error_msg(id, OpCode::Query, ResponseCode::FormErr)
        .to_vec()
        .ok()
}

fn address(record: &DnsRecord) -> Option<IpAddr> {
    match record {
        DnsRecord::A(ip) => Some(IpAddr::V4(*ip)),
        DnsRecord::Aaaa(ip) => Some(IpAddr::V6(*ip)),
        DnsRecord::Cname(_) => None,
    }
}

fn to_wire(owner: Name, record: DnsRecord, ttl: u32) -> Record {
    let data = match record {
        DnsRecord::A(ip) => RData::A(A(ip)),
        DnsRecord::Aaaa(ip) => RData::AAAA(AAAA(ip)),
        // Targets were checked when the zone was set.
        DnsRecord::Cname(target) => {
            RData::CNAME(CNAME(fqdn(Name::from_utf8(&target).unwrap_or_default())))
        }
    };
    Record::from_rdata(fqdn(owner), ttl, data)
}

fn fqdn(mut name: Name) -> Name {
    name.set_fqdn(true);
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::op::Query;
    use hickory_proto::rr::RecordType;

    fn ask(zone: &mut Zone, message: &Message) -> Message {
        let (bytes, _) = answer(zone, &message.to_vec().unwrap(), Transport::Udp);
        Message::from_vec(&bytes.unwrap()).unwrap()
    }

    #[test]
    fn answers_garbage_with_formerr_and_other_opcodes_with_notimp() {
        let mut zone = Zone::default();
        let (bytes, query) = answer(&mut zone, &[0x12, 0x34, 0xff], Transport::Udp);
        let reply = Message::from_vec(&bytes.unwrap()).unwrap();
        assert_eq!(reply.metadata.id, 0x1234);
        assert_eq!(reply.metadata.response_code, ResponseCode::FormErr);
        assert!(query.is_none());
        assert_eq!(answer(&mut zone, &[0x12], Transport::Udp).0, None);

        let mut update = Message::new(7, MessageType::Query, OpCode::Update);
        update.add_query(Query::query(
            Name::from_utf8("x.test").unwrap(),
            RecordType::A,
        ));
        assert_eq!(
            ask(&mut zone, &update).metadata.response_code,
            ResponseCode::NotImp
        );
    }

    #[test]
    fn echoes_edns_and_the_question() {
        let mut zone = Zone::default();
        let mut query = Message::new(9, MessageType::Query, OpCode::Query);
        query.add_query(Query::query(
            Name::from_utf8("x.test.").unwrap(),
            RecordType::A,
        ));
        query.metadata.recursion_desired = true;
        query.set_edns(Edns::new());
        let reply = ask(&mut zone, &query);
        assert_eq!(reply.metadata.id, 9);
        assert!(reply.metadata.recursion_desired && reply.metadata.recursion_available);
        assert_eq!(reply.queries, query.queries);
        assert_eq!(reply.edns.map(|e| e.max_payload()), Some(SERVER_PAYLOAD));
        assert_eq!(reply.metadata.response_code, ResponseCode::NXDomain);
    }
}
