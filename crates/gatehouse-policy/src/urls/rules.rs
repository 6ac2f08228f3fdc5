//! The URL rules of one tool (`web_fetch`, `browser`) for one agent.

use std::collections::BTreeSet;

use super::host::DomainList;

/// The URL settings of one tool, as the config states them. The config crate fills this for
/// `tools.web.fetch` (web_fetch and any other tool's URL parameter) and for `browser`, the
/// agent's own section replacing the global one key by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRulesConfig {
    /// The section's key (`tools.web.fetch`, `agents.list[1].tools.web.fetch`, `browser`), named
    /// in refusals.
    pub key: String,
    /// `allowedDomains`: when set, a host must match one entry.
    pub allowed_domains: Option<Vec<String>>,
    /// `deniedDomains`: a host matching one is refused (deny wins).
    pub denied_domains: Vec<String>,
    /// `ssrfPolicy`: OpenClaw's private-network switches.
    pub ssrf_policy: SsrfPolicyConfig,
}

impl UrlRulesConfig {
    /// An empty section at `key`: public hosts only, no domain lists.
    pub fn new(key: impl Into<String>) -> Self {
        UrlRulesConfig {
            key: key.into(),
            allowed_domains: None,
            denied_domains: Vec::new(),
            ssrf_policy: SsrfPolicyConfig::default(),
        }
    }
}

/// OpenClaw's `ssrfPolicy` object (`tools.web.fetch.ssrfPolicy`, `browser.ssrfPolicy`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SsrfPolicyConfig {
    /// `dangerouslyAllowPrivateNetwork` (or its legacy alias `allowPrivateNetwork`): loopback,
    /// private, link-local, CGNAT, unique-local and local names are allowed. Metadata services,
    /// multicast, broadcast, documentation and reserved addresses stay refused.
    pub dangerously_allow_private_network: bool,
    /// `allowedHostnames`: exact hosts exempt from the private-network checks (`localhost`).
    pub allowed_hostnames: Vec<String>,
    /// `hostnameAllowlist`: like `allowedDomains`; when set, a host must match it too.
    pub hostname_allowlist: Option<Vec<String>>,
    /// `allowRfc2544BenchmarkRange`: `198.18.0.0/15` (fake-IP proxies) is allowed.
    pub allow_rfc2544_benchmark_range: bool,
    /// `allowIpv6UniqueLocalRange`: `fc00::/7` (fake-IP proxies) is allowed.
    pub allow_ipv6_unique_local_range: bool,
}

/// Why URL rules could not be built from config.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {why}")]
pub struct UrlRulesError {
    /// The config key of the list.
    pub key: String,
    /// The entry and what is wrong with it.
    pub why: String,
}

/// [`UrlRulesConfig`] compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRules {
    pub(crate) key: String,
    pub(crate) allowed: Vec<DomainList>,
    pub(crate) denied: DomainList,
    pub(crate) allow_private_network: bool,
    pub(crate) exempt_hosts: BTreeSet<String>,
    pub(crate) allow_benchmarking: bool,
    pub(crate) allow_unique_local: bool,
}

impl UrlRules {
    /// Compiles the domain lists; an entry that is not a host pattern fails here.
    pub fn new(config: UrlRulesConfig) -> Result<Self, UrlRulesError> {
        let list = |suffix: &str, entries: &[String]| {
            let key = format!("{}.{suffix}", config.key);
            DomainList::new(&key, entries).map_err(|why| UrlRulesError { key, why })
        };
        let ssrf = &config.ssrf_policy;
        let mut allowed = Vec::new();
        if let Some(entries) = &config.allowed_domains {
            allowed.push(list("allowedDomains", entries)?);
        }
        if let Some(entries) = &ssrf.hostname_allowlist {
            allowed.push(list("ssrfPolicy.hostnameAllowlist", entries)?);
        }
        let exempt_hosts = ssrf
            .allowed_hostnames
            .iter()
            .map(|host| {
                url::Host::parse(host.trim().trim_end_matches('.'))
                    .map(|h| h.to_string())
                    .map_err(|e| UrlRulesError {
                        key: format!("{}.ssrfPolicy.allowedHostnames", config.key),
                        why: format!("{host:?}: {e}"),
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(UrlRules {
            denied: list("deniedDomains", &config.denied_domains)?,
            allowed,
            allow_private_network: ssrf.dangerously_allow_private_network,
            exempt_hosts,
            allow_benchmarking: ssrf.allow_rfc2544_benchmark_range,
            allow_unique_local: ssrf.allow_ipv6_unique_local_range,
            key: config.key,
        })
    }
}
