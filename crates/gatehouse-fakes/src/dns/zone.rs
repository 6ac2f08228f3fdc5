//! What the fake DNS server knows: per name, the answer (or the answers in turn) a test set,
//! and how a query is resolved against them — CNAME chains followed within the zone, only the
//! asked record type returned.

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use hickory_proto::rr::{Name, RecordType};
use serde::Deserialize;
use serde_json::Value;

use crate::error::FakeError;

/// A CNAME chain longer than this is answered SERVFAIL, as resolvers give up on loops.
const MAX_CHAIN: usize = 8;

/// One record a name resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsRecord {
    /// An IPv4 address.
    A(Ipv4Addr),
    /// An IPv6 address.
    Aaaa(Ipv6Addr),
    /// An alias: the name's records are the target's.
    Cname(String),
}

/// What the server answers for a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsAnswer {
    /// NOERROR with these records (those of the asked type, after any CNAME); a name with
    /// records of other types only gets an empty answer (NODATA).
    Records {
        /// The name's records; a CNAME stands alone, as DNS requires.
        records: Vec<DnsRecord>,
        /// Time to live, seconds; 0 keeps resolvers from caching (what rebinding relies on).
        ttl: u32,
    },
    /// NXDOMAIN: the name does not exist. Names nobody set get this too.
    NxDomain,
    /// SERVFAIL: the server failed.
    ServFail,
    /// No answer at all: the client times out.
    Silent,
}

impl DnsAnswer {
    /// Records with TTL 0.
    pub fn records(records: impl IntoIterator<Item = DnsRecord>) -> Self {
        Self::Records {
            records: records.into_iter().collect(),
            ttl: 0,
        }
    }
}

/// How one query was answered.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Resolution {
    /// NOERROR (`nxdomain: false`) or NXDOMAIN at the end of a CNAME chain, with the records
    /// of the answer section as (owner, record, ttl).
    Answer {
        nxdomain: bool,
        records: Vec<(Name, DnsRecord, u32)>,
    },
    /// SERVFAIL.
    ServFail,
    /// Nothing is sent.
    Silent,
}

/// The answers set for one name, given in turn per record type: the nth A query gets the
/// nth answer, the last one repeats.
#[derive(Debug)]
struct Scripted {
    answers: Vec<DnsAnswer>,
    asked: HashMap<RecordType, usize>,
}

impl Scripted {
    fn next(&mut self, record_type: RecordType) -> &DnsAnswer {
        let asked = self.asked.entry(record_type).or_insert(0);
        let index = (*asked).min(self.answers.len() - 1);
        *asked += 1;
        &self.answers[index]
    }
}

/// Every name the server answers for, keyed by its lower-case ASCII form without the final dot.
#[derive(Debug, Default)]
pub(crate) struct Zone {
    names: HashMap<String, Scripted>,
}

/// A name as the zone keys it: IDNA to punycode, lower case, no final dot.
pub(crate) fn key(name: &str) -> Result<String, FakeError> {
    let parsed = Name::from_utf8(name).map_err(|error| FakeError::BadZone {
        reason: format!("{name:?} is not a domain name: {error}"),
    })?;
    Ok(name_key(&parsed))
}

/// The zone key of a name from the wire.
pub(crate) fn name_key(name: &Name) -> String {
    let mut ascii = name.to_lowercase().to_ascii();
    if ascii.ends_with('.') && ascii.len() > 1 {
        ascii.pop();
    }
    ascii
}

fn check(answer: &DnsAnswer) -> Result<(), FakeError> {
    if let DnsAnswer::Records { records, .. } = answer {
        let cnames: Vec<&String> = records
            .iter()
            .filter_map(|r| match r {
                DnsRecord::Cname(target) => Some(target),
                _ => None,
            })
            .collect();
        if !cnames.is_empty() && records.len() > 1 {
            return Err(FakeError::BadZone {
                reason: "a CNAME must be the name's only record".into(),
            });
        }
        for target in cnames {
            key(target)?;
        }
    }
    Ok(())
}

impl Zone {
    /// Sets the answers for a name, given in turn (at least one).
    pub(crate) fn set(&mut self, name: &str, answers: Vec<DnsAnswer>) -> Result<(), FakeError> {
        if answers.is_empty() {
            return Err(FakeError::BadZone {
                reason: format!("no answer given for {name:?}"),
            });
        }
        answers.iter().try_for_each(check)?;
        self.names.insert(
            key(name)?,
            Scripted {
                answers,
                asked: HashMap::new(),
            },
        );
        Ok(())
    }

    /// Forgets every name.
    pub(crate) fn clear(&mut self) {
        self.names.clear();
    }

    /// Answers one query, advancing the names' turns.
    pub(crate) fn resolve(&mut self, name: &Name, record_type: RecordType) -> Resolution {
        let mut owner = name.clone();
        let mut records = Vec::new();
        for _ in 0..MAX_CHAIN {
            let Some(scripted) = self.names.get_mut(&name_key(&owner)) else {
                // A CNAME whose target lies outside the zone: answer with the chain so far,
                // as a server without the target's data would.
                return Resolution::Answer {
                    nxdomain: records.is_empty(),
                    records,
                };
            };
            let (found, ttl) = match scripted.next(record_type) {
                DnsAnswer::Records { records, ttl } => (records.clone(), *ttl),
                DnsAnswer::NxDomain => {
                    return Resolution::Answer {
                        nxdomain: true,
                        records,
                    };
                }
                DnsAnswer::ServFail => return Resolution::ServFail,
                DnsAnswer::Silent => return Resolution::Silent,
            };
            if let [DnsRecord::Cname(target)] = found.as_slice() {
                records.push((owner.clone(), DnsRecord::Cname(target.clone()), ttl));
                match Name::from_utf8(target) {
                    Ok(next) if record_type != RecordType::CNAME => owner = next,
                    _ => {
                        return Resolution::Answer {
                            nxdomain: false,
                            records,
                        };
                    }
                }
                continue;
            }
            records.extend(
                found
                    .into_iter()
                    .filter(|r| {
                        matches!(
                            (r, record_type),
                            (DnsRecord::A(_), RecordType::A)
                                | (DnsRecord::Aaaa(_), RecordType::AAAA)
                        )
                    })
                    .map(|r| (owner.clone(), r, ttl)),
            );
            return Resolution::Answer {
                nxdomain: false,
                records,
            };
        }
        Resolution::ServFail
    }
}

/// A zone as JSON (`--dns-zone FILE`): name → answer, or name → list of answers in turn.
/// An answer is `"nxdomain"`, `"servfail"`, `"silent"` or
/// `{"a": [...], "aaaa": [...], "cname": "…", "ttl": N}`.
pub(crate) fn parse_json(zone: &Value) -> Result<Vec<(String, Vec<DnsAnswer>)>, FakeError> {
    let names: HashMap<String, NameSpec> =
        serde_json::from_value(zone.clone()).map_err(|error| FakeError::BadZone {
            reason: error.to_string(),
        })?;
    let mut parsed = Vec::new();
    for (name, spec) in names {
        let specs = match spec {
            NameSpec::One(answer) => vec![answer],
            NameSpec::InTurn(answers) => answers,
        };
        parsed.push((
            name,
            specs.into_iter().map(AnswerSpec::into_answer).collect(),
        ));
    }
    Ok(parsed)
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum NameSpec {
    One(AnswerSpec),
    InTurn(Vec<AnswerSpec>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AnswerSpec {
    Word(Word),
    Records(RecordsSpec),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Word {
    NxDomain,
    ServFail,
    Silent,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordsSpec {
    #[serde(default)]
    a: Vec<Ipv4Addr>,
    #[serde(default)]
    aaaa: Vec<Ipv6Addr>,
    cname: Option<String>,
    #[serde(default)]
    ttl: u32,
}

impl AnswerSpec {
    fn into_answer(self) -> DnsAnswer {
        match self {
            Self::Word(Word::NxDomain) => DnsAnswer::NxDomain,
            Self::Word(Word::ServFail) => DnsAnswer::ServFail,
            Self::Word(Word::Silent) => DnsAnswer::Silent,
            Self::Records(spec) => DnsAnswer::Records {
                records: spec
                    .cname
                    .map(DnsRecord::Cname)
                    .into_iter()
                    .chain(spec.a.into_iter().map(DnsRecord::A))
                    .chain(spec.aaaa.into_iter().map(DnsRecord::Aaaa))
                    .collect(),
                ttl: spec.ttl,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn name(text: &str) -> Name {
        Name::from_utf8(text).unwrap()
    }

    fn ips(resolution: Resolution) -> Vec<DnsRecord> {
        match resolution {
            Resolution::Answer { records, .. } => records.into_iter().map(|r| r.1).collect(),
            other => panic!("no answer: {other:?}"),
        }
    }

    const LOCAL: Ipv4Addr = Ipv4Addr::LOCALHOST;
    const PUBLIC: Ipv4Addr = Ipv4Addr::new(93, 184, 216, 34);

    #[test]
    fn answers_only_the_asked_type_and_nxdomain_for_unknown_names() {
        let mut zone = Zone::default();
        let both = DnsAnswer::records([DnsRecord::A(PUBLIC), DnsRecord::Aaaa(Ipv6Addr::LOCALHOST)]);
        zone.set("Dual.Test.", vec![both]).unwrap();
        assert_eq!(
            ips(zone.resolve(&name("dual.test."), RecordType::A)),
            [DnsRecord::A(PUBLIC)]
        );
        assert_eq!(
            ips(zone.resolve(&name("DUAL.test"), RecordType::AAAA)),
            [DnsRecord::Aaaa(Ipv6Addr::LOCALHOST)]
        );
        assert!(ips(zone.resolve(&name("dual.test"), RecordType::MX)).is_empty());
        assert_eq!(
            zone.resolve(&name("other.test"), RecordType::A),
            Resolution::Answer {
                nxdomain: true,
                records: Vec::new()
            }
        );
    }

    #[test]
    fn follows_cname_chains_and_refuses_loops() {
        let mut zone = Zone::default();
        zone.set(
            "a.test",
            vec![DnsAnswer::records([DnsRecord::Cname("b.test".into())])],
        )
        .unwrap();
        zone.set(
            "b.test",
            vec![DnsAnswer::records([DnsRecord::Cname("c.test".into())])],
        )
        .unwrap();
        zone.set("c.test", vec![DnsAnswer::records([DnsRecord::A(LOCAL)])])
            .unwrap();
        assert_eq!(
            ips(zone.resolve(&name("a.test"), RecordType::A)),
            [
                DnsRecord::Cname("b.test".into()),
                DnsRecord::Cname("c.test".into()),
                DnsRecord::A(LOCAL)
            ]
        );
        zone.set(
            "c.test",
            vec![DnsAnswer::records([DnsRecord::Cname("a.test".into())])],
        )
        .unwrap();
        assert_eq!(
            zone.resolve(&name("a.test"), RecordType::A),
            Resolution::ServFail
        );
        assert!(
            zone.set(
                "x.test",
                vec![DnsAnswer::records([
                    DnsRecord::Cname("y".into()),
                    DnsRecord::A(LOCAL)
                ])]
            )
            .is_err()
        );
    }

    #[test]
    fn gives_answers_in_turn_per_record_type_then_repeats_the_last() {
        let mut zone = Zone::default();
        let first = DnsAnswer::records([DnsRecord::A(PUBLIC)]);
        let then = DnsAnswer::records([DnsRecord::A(LOCAL)]);
        zone.set("rebind.test", vec![first, then]).unwrap();
        let a = |zone: &mut Zone| ips(zone.resolve(&name("rebind.test"), RecordType::A));
        assert_eq!(a(&mut zone), [DnsRecord::A(PUBLIC)]);
        // The AAAA query a dual-stack lookup makes does not use up the A turn.
        assert!(ips(zone.resolve(&name("rebind.test"), RecordType::AAAA)).is_empty());
        assert_eq!(a(&mut zone), [DnsRecord::A(LOCAL)]);
        assert_eq!(a(&mut zone), [DnsRecord::A(LOCAL)]);
    }

    #[test]
    fn reads_a_json_zone() {
        let parsed = parse_json(&json!({
            "multi.test": {"a": ["10.0.0.1", "10.0.0.2"], "ttl": 60},
            "alias.test": {"cname": "multi.test"},
            "gone.test": "nxdomain",
            "rebind.test": [{"a": ["93.184.216.34"]}, {"a": ["127.0.0.1"]}],
        }))
        .unwrap();
        let mut zone = Zone::default();
        for (name, answers) in parsed {
            zone.set(&name, answers).unwrap();
        }
        assert_eq!(
            ips(zone.resolve(&name("alias.test"), RecordType::A)).len(),
            3
        );
        assert!(parse_json(&json!({"x.test": "sometimes"})).is_err());
        assert!(parse_json(&json!({"x.test": {"a": ["not-an-ip"]}})).is_err());
        assert!(key("bücher.test").unwrap() == "xn--bcher-kva.test");
    }
}
