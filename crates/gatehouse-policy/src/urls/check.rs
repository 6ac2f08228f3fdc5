//! The two steps of a URL check: the URL itself, then (for a host name) the addresses the
//! caller resolved it to.

use std::net::IpAddr;

use url::{Host, Url};

use crate::text::{describe_char, first_unsafe_char};

use super::address::{AddressClass, Exemption, classify};
use super::host::{BlockedName, blocked_name};
use super::rules::UrlRules;

/// Longest URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 8192;

/// Why a URL may not be fetched. [`UrlRefusal::rule`] is the rule id of the docs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    /// A control, format (bidi, zero-width) or unassigned character.
    #[error("the URL contains {character} at byte {offset}")]
    UnsafeCharacter {
        /// The character, as `U+XXXX`.
        character: String,
        /// Its byte offset.
        offset: usize,
    },
    /// A backslash, which URL parsers read differently (WHATWG as `/`, others literally).
    #[error("the URL contains a backslash, which URL parsers read differently")]
    Ambiguous,
    /// Not a URL, too long, no host, port 0, or a malformed host.
    #[error("not a usable URL: {why}")]
    Invalid {
        /// What is wrong.
        why: String,
    },
    /// A scheme other than `http` or `https`.
    #[error("scheme {scheme:?} is not allowed (only http and https)")]
    Scheme {
        /// The scheme.
        scheme: String,
    },
    /// `user:password@` in the URL.
    #[error("the URL carries credentials (user info)")]
    Userinfo,
    /// The host matches a `deniedDomains` entry.
    #[error("host {host:?} matches {key} entry {entry:?}")]
    DomainDenied {
        /// The normalized host.
        host: String,
        /// The entry as written.
        entry: String,
        /// The list's config key.
        key: String,
    },
    /// An allow list is set and the host matches none of its entries.
    #[error("host {host:?} matches no entry of {key}")]
    DomainNotAllowed {
        /// The normalized host.
        host: String,
        /// The list's config key.
        key: String,
    },
    /// `localhost`, `*.local`, `*.internal` and the like.
    #[error("host {host:?} names the local host or an internal network")]
    LocalHostname {
        /// The normalized host.
        host: String,
    },
    /// A cloud metadata service name.
    #[error("host {host:?} is a cloud metadata service")]
    MetadataHostname {
        /// The normalized host.
        host: String,
    },
    /// An address (literal or resolved) in a refused class.
    #[error("host {host:?} is {address}, a {class} address")]
    BlockedAddress {
        /// The normalized host.
        host: String,
        /// The address.
        address: IpAddr,
        /// Its class.
        class: AddressClass,
    },
    /// The resolver answered no address.
    #[error("host {host:?} resolved to no address")]
    NoAddresses {
        /// The normalized host.
        host: String,
    },
}

impl UrlRefusal {
    /// The rule id operators look up in the docs.
    pub fn rule(&self) -> &'static str {
        match self {
            UrlRefusal::UnsafeCharacter { .. } => "unsafe-character",
            UrlRefusal::Ambiguous => "ambiguous-url",
            UrlRefusal::Invalid { .. } => "invalid-url",
            UrlRefusal::Scheme { .. } => "scheme",
            UrlRefusal::Userinfo => "userinfo",
            UrlRefusal::DomainDenied { .. } => "domain-denied",
            UrlRefusal::DomainNotAllowed { .. } => "domain-not-allowed",
            UrlRefusal::LocalHostname { .. } => "local-hostname",
            UrlRefusal::MetadataHostname { .. } => "metadata",
            UrlRefusal::BlockedAddress {
                class: AddressClass::CloudMetadata,
                ..
            } => "metadata",
            UrlRefusal::BlockedAddress { .. } => "blocked-address",
            UrlRefusal::NoAddresses { .. } => "no-addresses",
        }
    }
}

/// A URL that may be fetched, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedUrl {
    /// The URL as normalized (`http://0x7f.1` reads `http://127.0.0.1/`): fetch this text, not
    /// the original, so no other parser reads a different host out of it.
    pub url: String,
    /// The normalized host: lower case, punycode, no trailing dot; IPv6 in brackets. It goes in
    /// the `Host` header and TLS SNI.
    pub host: String,
    /// The port, the scheme's default when none is written.
    pub port: u16,
    /// The only addresses the caller may connect to (IPv4 first): a fresh lookup could answer
    /// differently (DNS rebinding).
    pub pinned: Vec<IpAddr>,
}

/// A URL whose host name must be resolved before the verdict; the caller resolves
/// [`PendingUrl::host`] and passes every address to [`check_resolved`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingUrl {
    url: String,
    host: String,
    port: u16,
    exempt: bool,
}

impl PendingUrl {
    /// The host name to resolve (all of its A and AAAA records).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port the caller will connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The normalized URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// The outcome of the first step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlCheck {
    /// An IP-literal URL, decided without resolution.
    Approved(ApprovedUrl),
    /// A host name, to be resolved by the caller.
    NeedsResolution(PendingUrl),
}

/// Checks a URL without resolving anything: characters, scheme, user info, the host's form,
/// the domain lists, local and metadata names, and an IP literal's class.
pub fn check_url(raw: &str, rules: &UrlRules) -> Result<UrlCheck, UrlRefusal> {
    if raw.len() > MAX_URL_BYTES {
        return Err(invalid("longer than 8192 bytes"));
    }
    if let Some((offset, c)) = first_unsafe_char(raw) {
        return Err(UrlRefusal::UnsafeCharacter {
            character: describe_char(c),
            offset,
        });
    }
    if raw.contains('\\') {
        return Err(UrlRefusal::Ambiguous);
    }
    let url = Url::parse(raw.trim()).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlRefusal::Scheme {
            scheme: url.scheme().to_owned(),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefusal::Userinfo);
    }
    let port = match url.port_or_known_default() {
        Some(0) | None => return Err(invalid("port 0")),
        Some(port) => port,
    };
    let (host, literal) = match url.host() {
        None => return Err(invalid("no host")),
        Some(Host::Domain(domain)) => (normalize_domain(domain)?, None),
        Some(Host::Ipv4(v4)) => (v4.to_string(), Some(IpAddr::V4(v4))),
        Some(Host::Ipv6(v6)) => (format!("[{v6}]"), Some(IpAddr::V6(v6))),
    };
    check_domain_lists(&host, rules)?;
    let exempt = rules.allow_private_network || rules.exempt_hosts.contains(&host);
    match blocked_name(&host) {
        Some(BlockedName::Metadata) => return Err(UrlRefusal::MetadataHostname { host }),
        Some(BlockedName::Local) if !exempt => return Err(UrlRefusal::LocalHostname { host }),
        _ => {}
    }
    let pending = PendingUrl {
        url: url.to_string(),
        host,
        port,
        exempt,
    };
    match literal {
        Some(address) => Ok(UrlCheck::Approved(check_resolved(
            &pending,
            &[address],
            rules,
        )?)),
        None => Ok(UrlCheck::NeedsResolution(pending)),
    }
}

/// Checks every address a host name resolved to; one refused address refuses the URL, since
/// the caller cannot know which one a connection would use.
pub fn check_resolved(
    pending: &PendingUrl,
    addresses: &[IpAddr],
    rules: &UrlRules,
) -> Result<ApprovedUrl, UrlRefusal> {
    if addresses.is_empty() {
        return Err(UrlRefusal::NoAddresses {
            host: pending.host.clone(),
        });
    }
    let mut pinned: Vec<IpAddr> = Vec::with_capacity(addresses.len());
    for address in addresses {
        let address = address.to_canonical();
        let class = classify(address);
        if !permitted(class, pending.exempt, rules) {
            return Err(UrlRefusal::BlockedAddress {
                host: pending.host.clone(),
                address,
                class,
            });
        }
        if !pinned.contains(&address) {
            pinned.push(address);
        }
    }
    // IPv4 first, as OpenClaw pins them, keeping the resolver's order within each family.
    pinned.sort_by_key(IpAddr::is_ipv6);
    Ok(ApprovedUrl {
        url: pending.url.clone(),
        host: pending.host.clone(),
        port: pending.port,
        pinned,
    })
}

fn permitted(class: AddressClass, exempt: bool, rules: &UrlRules) -> bool {
    match class.exemption() {
        Exemption::None => true,
        Exemption::PrivateNetwork => exempt,
        Exemption::Benchmarking => exempt || rules.allow_benchmarking,
        Exemption::UniqueLocal => exempt || rules.allow_unique_local,
        Exemption::Never => false,
    }
}

fn check_domain_lists(host: &str, rules: &UrlRules) -> Result<(), UrlRefusal> {
    if let Some(entry) = rules.denied.matching(host) {
        return Err(UrlRefusal::DomainDenied {
            host: host.to_owned(),
            entry: entry.to_owned(),
            key: rules.denied.key.clone(),
        });
    }
    for list in &rules.allowed {
        if list.matching(host).is_none() {
            return Err(UrlRefusal::DomainNotAllowed {
                host: host.to_owned(),
                key: list.key.clone(),
            });
        }
    }
    Ok(())
}

/// A domain from the URL parser (already lower case and punycode) without its trailing dot,
/// refused if a label is empty or a length exceeds DNS limits.
fn normalize_domain(domain: &str) -> Result<String, UrlRefusal> {
    let host = domain.strip_suffix('.').unwrap_or(domain);
    if host.is_empty() || host.len() > 253 {
        return Err(invalid("the host name is empty or longer than 253 bytes"));
    }
    if host
        .split('.')
        .any(|label| label.is_empty() || label.len() > 63)
    {
        return Err(invalid("the host name has an empty or over-long label"));
    }
    Ok(host.to_owned())
}

fn invalid(why: &str) -> UrlRefusal {
    UrlRefusal::Invalid {
        why: why.to_owned(),
    }
}
