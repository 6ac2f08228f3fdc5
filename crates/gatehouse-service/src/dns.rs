//! Resolving the host names of tool calls' URLs, for the second step of the URL check: every
//! A and AAAA record, asked fresh each time (no cache: the answer is what gets pinned, and a
//! cached one could be stale), with a deadline after which the call is refused.
//!
//! The name servers are `gateway.dns.nameservers` when set (tests point them at the fakes'
//! loopback DNS server), else those of `/etc/resolv.conf`. Names are asked as absolute names
//! (`example.com.`): a search domain would make the checked name differ from the fetched one.
//! A resolver that cannot be set up refuses every lookup with the reason, never allows one.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use gatehouse_config::model::DnsConfig;
use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::{Resolver as Hickory, TokioResolver};

/// Where the system's name servers are listed.
const RESOLV_CONF: &str = "/etc/resolv.conf";

/// The resolver URL checks use.
#[derive(Clone)]
pub struct Resolver {
    inner: Result<TokioResolver, String>,
    timeout: Duration,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("ready", &self.inner.is_ok())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Resolver {
    /// The resolver `gateway.dns` describes (the system's when it names no servers). Must run
    /// inside a tokio runtime.
    pub fn from_config(dns: Option<&DnsConfig>) -> Self {
        let timeout = Duration::from_millis(
            dns.and_then(|d| d.timeout_ms)
                .unwrap_or(DnsConfig::DEFAULT_TIMEOUT_MS),
        );
        let servers = match dns.map(DnsConfig::nameserver_addrs).transpose() {
            Ok(Some(servers)) if !servers.is_empty() => Ok(servers),
            Ok(_) => system_nameservers(),
            Err(why) => Err(format!("gateway.dns.nameservers: {why}")),
        };
        let inner = servers.and_then(|servers| build(&servers, timeout));
        if let Err(why) = &inner {
            tracing::error!(%why, "No DNS resolver: tool calls with URLs naming a host will be refused.");
        }
        Resolver { inner, timeout }
    }

    /// Every address `host` resolves to now (empty when it has none). `Err` says why the
    /// lookup failed: the name server failed or stayed silent past the deadline.
    pub async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        let resolver = self
            .inner
            .as_ref()
            .map_err(|why| format!("no DNS resolver: {why}"))?;
        let name = format!("{}.", host.trim_end_matches('.'));
        match tokio::time::timeout(self.timeout, resolver.lookup_ip(name)).await {
            Err(_) => Err(format!(
                "resolving {host} took longer than {} ms",
                self.timeout.as_millis()
            )),
            Ok(Ok(found)) => Ok(found.iter().collect()),
            Ok(Err(error)) if error.is_no_records_found() => Ok(Vec::new()),
            Ok(Err(error)) => Err(format!("resolving {host} failed: {error}")),
        }
    }
}

fn build(servers: &[SocketAddr], timeout: Duration) -> Result<TokioResolver, String> {
    let servers = servers
        .iter()
        .map(|addr| {
            let mut server = NameServerConfig::udp_and_tcp(addr.ip());
            for connection in &mut server.connections {
                connection.port = addr.port();
            }
            server
        })
        .collect();
    let mut options = ResolverOpts::default();
    options.timeout = timeout;
    options.attempts = 1;
    options.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
    options.cache_size = 0;
    Hickory::builder_with_config(
        ResolverConfig::from_name_servers(servers),
        TokioRuntimeProvider::default(),
    )
    .with_options(options)
    .build()
    .map_err(|error| format!("cannot set up the resolver: {error}"))
}

/// The `nameserver` lines of `/etc/resolv.conf`, port 53.
fn system_nameservers() -> Result<Vec<SocketAddr>, String> {
    let text = std::fs::read_to_string(RESOLV_CONF)
        .map_err(|error| format!("cannot read {RESOLV_CONF}: {error}"))?;
    let servers = nameservers_in(&text);
    if servers.is_empty() {
        return Err(format!("{RESOLV_CONF} lists no nameserver"));
    }
    Ok(servers)
}

/// The name servers a `resolv.conf` lists, in order; a scoped IPv6 address (`fe80::1%eth0`)
/// cannot be asked without its interface and is left out.
fn nameservers_in(text: &str) -> Vec<SocketAddr> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("nameserver")).then(|| words.next())?
        })
        .filter_map(|address| address.parse::<IpAddr>().ok())
        .map(|ip| SocketAddr::new(ip, 53))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_name_servers_of_a_resolv_conf() {
        let text = "# generated\nsearch corp.example\nnameserver 10.0.0.2\n\
                    nameserver fe80::1%eth0\nnameserver ::1\noptions ndots:2\n";
        assert_eq!(
            nameservers_in(text),
            [
                "10.0.0.2:53".parse::<SocketAddr>().unwrap(),
                "[::1]:53".parse().unwrap()
            ]
        );
    }

    #[tokio::test]
    async fn a_resolver_that_cannot_be_set_up_refuses_every_lookup_with_why() {
        let dns = DnsConfig {
            nameservers: Some(vec!["nowhere".into()]),
            timeout_ms: None,
        };
        let resolver = Resolver::from_config(Some(&dns));
        let refused = resolver.resolve("example.com").await.unwrap_err();
        assert!(refused.contains("nowhere"), "{refused}");
    }
}
