//! Host names: which are never fetched, and the domain patterns of `allowedDomains` and
//! `deniedDomains`.

use crate::tools::glob_matches;

/// Names of cloud metadata services, refused whatever the config says.
pub const METADATA_HOSTNAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
];

/// Names that mean "this host or its network" (as OpenClaw's `BLOCKED_HOSTNAMES` and its
/// `.localhost`, `.local`, `.internal` suffixes, plus RFC 8375's `home.arpa`); admitted only by
/// `dangerouslyAllowPrivateNetwork` or an `allowedHostnames` entry.
const LOCAL_NAMES: [&str; 2] = ["localhost", "localhost.localdomain"];
const LOCAL_SUFFIXES: [&str; 4] = [".localhost", ".local", ".internal", ".home.arpa"];

/// Why a host name itself is refused, before any resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockedName {
    /// A metadata service name: never fetched.
    Metadata,
    /// A local or internal name: fetched only under a private-network exemption.
    Local,
}

/// Classifies a normalized host (lower case, no trailing dot).
pub(crate) fn blocked_name(host: &str) -> Option<BlockedName> {
    if METADATA_HOSTNAMES.contains(&host) {
        return Some(BlockedName::Metadata);
    }
    if LOCAL_NAMES.contains(&host) || LOCAL_SUFFIXES.iter().any(|s| host.ends_with(s)) {
        return Some(BlockedName::Local);
    }
    None
}

/// A compiled domain list (`allowedDomains`, `deniedDomains`, `hostnameAllowlist`).
///
/// Entries are host names with wildcards: `example.com` is that host only; `*.example.com` is
/// every name below it (any depth) but not `example.com` itself, as in OpenClaw's
/// `hostnameAllowlist`; `*` in any other label matches within that label (`api-*.example.com`);
/// a lone `*` matches every host. Entries are lower-cased and IDNA-normalized like URLs, so
/// `*.bücher.de` and `*.xn--bcher-kva.de` are one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DomainList {
    /// The config key, named in refusals.
    pub(crate) key: String,
    entries: Vec<(String, Vec<String>)>,
}

impl DomainList {
    /// Compiles `entries`; an entry that is not a host name is an error naming it.
    pub(crate) fn new(key: &str, entries: &[String]) -> Result<Self, String> {
        let entries = entries
            .iter()
            .map(|entry| {
                let labels = normalize_pattern(entry).map_err(|why| format!("{entry:?}: {why}"))?;
                Ok((entry.clone(), labels))
            })
            .collect::<Result<_, String>>()?;
        Ok(DomainList {
            key: key.to_owned(),
            entries,
        })
    }

    /// The entry (as written) matching a normalized host.
    pub(crate) fn matching(&self, host: &str) -> Option<&str> {
        if self.entries.is_empty() {
            return None;
        }
        let labels: Vec<&str> = host.split('.').collect();
        self.entries
            .iter()
            .find(|(_, pattern)| pattern_matches(pattern, &labels))
            .map(|(written, _)| written.as_str())
    }
}

fn pattern_matches(pattern: &[String], host: &[&str]) -> bool {
    match pattern {
        [only] if only == "*" => true,
        [first, suffix @ ..] if first == "*" => {
            host.len() > suffix.len() && labels_match(suffix, &host[host.len() - suffix.len()..])
        }
        _ => pattern.len() == host.len() && labels_match(pattern, host),
    }
}

fn labels_match(pattern: &[String], host: &[&str]) -> bool {
    pattern.iter().zip(host).all(|(p, h)| glob_matches(p, h))
}

/// Lower-cases and IDNA-normalizes a pattern label by label, leaving wildcard labels as they
/// are.
fn normalize_pattern(entry: &str) -> Result<Vec<String>, &'static str> {
    let entry = entry.trim().trim_end_matches('.');
    if entry.is_empty() {
        return Err("the entry is blank");
    }
    if let Ok(host) = url::Host::parse(entry)
        && !matches!(host, url::Host::Domain(_))
    {
        return Ok(host.to_string().split('.').map(str::to_owned).collect());
    }
    entry
        .split('.')
        .map(|label| {
            if label.is_empty() {
                return Err("the entry has an empty label");
            }
            if label.contains('*') {
                return if label.is_ascii() {
                    Ok(label.to_ascii_lowercase())
                } else {
                    Err("a wildcard label must be ASCII")
                };
            }
            match url::Host::parse(label) {
                Ok(url::Host::Domain(ascii)) if !ascii.contains('.') => Ok(ascii),
                _ => Err("a label is not a valid host name label"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> DomainList {
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        DomainList::new("tools.web.fetch.allowedDomains", &entries).unwrap()
    }

    #[test]
    fn matches_exact_wildcard_and_label_globs() {
        let l = list(&[
            "example.com",
            "*.docs.rs",
            "api-*.corp.example",
            "*.bücher.de",
        ]);
        assert_eq!(l.matching("example.com"), Some("example.com"));
        assert_eq!(l.matching("www.example.com"), None);
        assert_eq!(l.matching("a.b.docs.rs"), Some("*.docs.rs"));
        assert_eq!(l.matching("docs.rs"), None);
        assert_eq!(l.matching("evildocs.rs"), None);
        assert_eq!(
            l.matching("api-eu.corp.example"),
            Some("api-*.corp.example")
        );
        assert_eq!(l.matching("api.eu.corp.example"), None);
        assert_eq!(l.matching("shop.xn--bcher-kva.de"), Some("*.bücher.de"));
        assert_eq!(list(&["*"]).matching("anything.at.all"), Some("*"));
    }

    #[test]
    fn normalizes_case_trailing_dots_and_ip_literals() {
        let l = list(&["Example.COM.", "127.0.0.1", "[::1]"]);
        assert_eq!(l.matching("example.com"), Some("Example.COM."));
        assert_eq!(l.matching("127.0.0.1"), Some("127.0.0.1"));
        assert_eq!(l.matching("[::1]"), Some("[::1]"));
    }

    #[test]
    fn denies_entries_that_are_not_host_names() {
        for entry in ["", "a..b", "exa mple.com", "ex/ample.com", "*.bü*.de"] {
            assert!(
                DomainList::new("k", &[entry.to_owned()]).is_err(),
                "{entry:?}"
            );
        }
    }

    #[test]
    fn recognizes_local_and_metadata_names() {
        assert_eq!(
            blocked_name("metadata.google.internal"),
            Some(BlockedName::Metadata)
        );
        assert_eq!(blocked_name("localhost"), Some(BlockedName::Local));
        assert_eq!(blocked_name("printer.local"), Some(BlockedName::Local));
        assert_eq!(blocked_name("db.corp.internal"), Some(BlockedName::Local));
        assert_eq!(blocked_name("router.home.arpa"), Some(BlockedName::Local));
        assert_eq!(blocked_name("example.com"), None);
        assert_eq!(blocked_name("notlocal"), None);
    }
}
