//! URLs (`web_fetch`, browser navigation, any tool parameter that is a URL): may this agent
//! fetch it, and which addresses may the caller connect to?
//!
//! The check has two steps because resolution is I/O, which this crate never does.
//! [`check_url`] judges the text: characters, scheme (`http`/`https`), user info, the host's
//! form (the `url` crate's WHATWG parser turns `0x7f.1`, `2130706433`, `0177.0.0.1` and `127.1`
//! into `127.0.0.1`, IDN into punycode), `deniedDomains`/`allowedDomains`, local and metadata
//! names. An IP literal is classified at once; a host name comes back as a [`PendingUrl`]. The
//! caller resolves it and [`check_resolved`] classifies **every** address (see
//! [`AddressClass`]), answering with the addresses to pin. Each redirect is a new URL: check it
//! again from the first step.
//!
//! ```
//! use gatehouse_policy::urls::{UrlCheck, UrlRules, UrlRulesConfig, check_resolved, check_url};
//!
//! let rules = UrlRules::new(UrlRulesConfig::new("tools.web.fetch")).unwrap();
//! assert_eq!(check_url("http://0x7f.1/", &rules).unwrap_err().rule(), "blocked-address");
//!
//! let Ok(UrlCheck::NeedsResolution(pending)) = check_url("https://example.com/a", &rules) else {
//!     panic!("a host name needs resolution");
//! };
//! let rebinding = check_resolved(&pending, &["93.184.215.14".parse().unwrap(), "10.0.0.5".parse().unwrap()], &rules);
//! assert_eq!(rebinding.unwrap_err().rule(), "blocked-address");
//! let approved = check_resolved(&pending, &["93.184.215.14".parse().unwrap()], &rules).unwrap();
//! assert_eq!(approved.pinned, vec!["93.184.215.14".parse::<std::net::IpAddr>().unwrap()]);
//! ```

mod address;
mod check;
mod host;
mod rules;

pub use address::{AddressClass, Embedding, Exemption, classify, embedded_ipv4};
pub use check::{
    ApprovedUrl, MAX_URL_BYTES, PendingUrl, UrlCheck, UrlRefusal, check_resolved, check_url,
};
pub use host::METADATA_HOSTNAMES;
pub use rules::{SsrfPolicyConfig, UrlRules, UrlRulesConfig, UrlRulesError};
