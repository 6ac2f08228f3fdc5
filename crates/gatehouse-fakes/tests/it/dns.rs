//! The loopback DNS server through hickory-resolver, the resolver URL checks are meant to use.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use gatehouse_fakes::dns::{DnsAnswer, DnsHandle, DnsRecord, Transport};
use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::{Resolver, TokioResolver};
use serde_json::json;

use crate::support::loopback;

const PUBLIC: Ipv4Addr = Ipv4Addr::new(93, 184, 216, 34);

/// A resolver that asks only the fake, over UDP then TCP, quickly giving up on silence.
fn resolver(dns: &DnsHandle, cache: bool) -> TokioResolver {
    resolver_at(dns.addr, cache)
}

/// A resolver that asks only the DNS server at `addr`.
pub(crate) fn resolver_at(addr: SocketAddr, cache: bool) -> TokioResolver {
    let mut server = NameServerConfig::udp_and_tcp(addr.ip());
    for connection in &mut server.connections {
        connection.port = addr.port();
    }
    let config = ResolverConfig::from_name_servers(vec![server]);
    let mut options = ResolverOpts::default();
    options.timeout = Duration::from_millis(300);
    options.attempts = 1;
    options.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
    if !cache {
        options.cache_size = 0;
    }
    Resolver::builder_with_config(config, TokioRuntimeProvider::default())
        .with_options(options)
        .build()
        .unwrap()
}

async fn addresses(resolver: &TokioResolver, name: &str) -> Vec<IpAddr> {
    let mut found: Vec<IpAddr> = resolver.lookup_ip(name).await.unwrap().iter().collect();
    found.sort();
    found
}

#[tokio::test]
async fn resolves_several_addresses_of_both_families() {
    let dns = gatehouse_fakes::dns::spawn(loopback()).await.unwrap();
    dns.set(
        "multi.test",
        DnsAnswer::records([
            DnsRecord::A(PUBLIC),
            DnsRecord::A(Ipv4Addr::new(10, 0, 0, 1)),
            DnsRecord::Aaaa(Ipv6Addr::LOCALHOST),
        ]),
    )
    .unwrap();
    let resolver = resolver(&dns, false);
    assert_eq!(
        addresses(&resolver, "MULTI.test.").await,
        [
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            IpAddr::V4(PUBLIC),
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        ]
    );
    let mut asked: Vec<String> = dns
        .queries_for("multi.test")
        .into_iter()
        .map(|q| q.record_type)
        .collect();
    asked.sort();
    assert_eq!(asked, ["A", "AAAA"]);
}

#[tokio::test]
async fn follows_a_cname_chain_to_a_private_address() {
    let dns = gatehouse_fakes::dns::spawn(loopback()).await.unwrap();
    dns.set(
        "innocent.test",
        DnsAnswer::records([DnsRecord::Cname("cdn.test".into())]),
    )
    .unwrap();
    dns.set(
        "cdn.test",
        DnsAnswer::records([DnsRecord::Cname("metadata.internal".into())]),
    )
    .unwrap();
    dns.set(
        "metadata.internal",
        DnsAnswer::records([DnsRecord::A(Ipv4Addr::new(169, 254, 169, 254))]),
    )
    .unwrap();
    let resolver = resolver(&dns, false);
    let lookup = resolver
        .lookup("innocent.test.", RecordType::A)
        .await
        .unwrap();
    let chain: Vec<String> = lookup
        .answers()
        .iter()
        .map(|r| match &r.data {
            RData::CNAME(target) => format!("CNAME {}", target.0),
            RData::A(ip) => format!("A {}", ip.0),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        chain,
        [
            "CNAME cdn.test.",
            "CNAME metadata.internal.",
            "A 169.254.169.254"
        ]
    );
}

#[tokio::test]
async fn answers_nxdomain_servfail_and_silence() {
    let dns = gatehouse_fakes::dns::spawn(loopback()).await.unwrap();
    dns.set("broken.test", DnsAnswer::ServFail).unwrap();
    dns.set("slow.test", DnsAnswer::Silent).unwrap();
    dns.set("gone.test", DnsAnswer::NxDomain).unwrap();
    let resolver = resolver(&dns, false);
    for name in ["gone.test.", "never-set.test."] {
        let error = resolver.lookup_ip(name).await.unwrap_err();
        assert!(error.is_nx_domain(), "{name}: {error:?}");
    }
    let error = resolver.lookup_ip("broken.test.").await.unwrap_err();
    assert!(!error.is_nx_domain(), "{error:?}");
    assert_eq!(dns.queries_for("broken.test")[0].outcome, "SERVFAIL");

    let started = Instant::now();
    let error = resolver.lookup_ip("slow.test.").await.unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(300), "{error:?}");
    assert!(
        dns.queries_for("slow.test")
            .iter()
            .all(|q| q.outcome == "silent")
    );
}

#[tokio::test]
async fn changes_the_answer_between_lookups_for_rebinding_tests() {
    let dns = gatehouse_fakes::dns::spawn(loopback()).await.unwrap();
    dns.set_in_turn(
        "rebind.test",
        vec![
            DnsAnswer::records([DnsRecord::A(PUBLIC)]),
            DnsAnswer::records([DnsRecord::A(Ipv4Addr::LOCALHOST)]),
        ],
    )
    .unwrap();
    // TTL 0: even a caching resolver asks again, as an attacker's rebinding name intends.
    let resolver = resolver(&dns, true);
    assert_eq!(
        addresses(&resolver, "rebind.test.").await,
        [IpAddr::V4(PUBLIC)]
    );
    assert_eq!(
        addresses(&resolver, "rebind.test.").await,
        [IpAddr::V4(Ipv4Addr::LOCALHOST)]
    );
    let answered: Vec<Vec<IpAddr>> = dns
        .queries_for("rebind.test")
        .into_iter()
        .filter(|q| q.record_type == "A")
        .map(|q| q.addresses)
        .collect();
    assert_eq!(
        answered,
        [
            vec![IpAddr::V4(PUBLIC)],
            vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
        ]
    );
}

#[tokio::test]
async fn truncates_a_large_udp_answer_and_serves_it_over_tcp() {
    let dns = gatehouse_fakes::dns::spawn(loopback()).await.unwrap();
    let many = (1..=120).map(|n| DnsRecord::A(Ipv4Addr::new(10, 0, 1, n)));
    dns.set("many.test", DnsAnswer::records(many)).unwrap();
    let resolver = resolver(&dns, false);
    let found = resolver.lookup("many.test.", RecordType::A).await.unwrap();
    assert_eq!(found.answers().len(), 120);
    let queries = dns.queries_for("many.test");
    assert_eq!(
        (queries[0].transport, queries[0].truncated),
        (Transport::Udp, true)
    );
    let last = queries.last().unwrap();
    assert_eq!((last.transport, last.truncated), (Transport::Tcp, false));
    assert_eq!(last.addresses.len(), 120);
}

#[tokio::test]
async fn loads_a_json_zone_and_refuses_a_bad_one() {
    let dns = gatehouse_fakes::dns::spawn(loopback()).await.unwrap();
    dns.load_json(&json!({
        "zone.test": {"a": ["192.0.2.1"], "aaaa": ["2001:db8::1"], "ttl": 30},
        "alias.test": {"cname": "zone.test"},
    }))
    .unwrap();
    assert!(
        dns.load_json(&json!({"bad.test": {"cname": "x.test", "a": ["192.0.2.1"]}}))
            .is_err()
    );
    let resolver = resolver(&dns, false);
    assert_eq!(
        addresses(&resolver, "alias.test.").await,
        [
            IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        ]
    );
    dns.clear();
    assert!(
        resolver
            .lookup_ip("zone.test.")
            .await
            .unwrap_err()
            .is_nx_domain()
    );
}
