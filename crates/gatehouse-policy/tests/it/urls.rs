//! URL checks: host forms, every address class, domain lists, the private-network switches and
//! the second (resolved addresses) step.

use std::net::IpAddr;

use gatehouse_policy::urls::{UrlCheck, UrlRules, UrlRulesConfig, check_resolved, check_url};
use pretty_assertions::assert_eq;

fn rules() -> UrlRules {
    UrlRules::new(UrlRulesConfig::new("tools.web.fetch")).unwrap()
}

fn rules_with(edit: impl FnOnce(&mut UrlRulesConfig)) -> UrlRules {
    let mut config = UrlRulesConfig::new("tools.web.fetch");
    edit(&mut config);
    UrlRules::new(config).unwrap()
}

/// `ok <url> pinned <addrs>`, `resolve <host>:<port>` or the refusal's rule.
fn check(rules: &UrlRules, url: &str) -> String {
    match check_url(url, rules) {
        Ok(UrlCheck::Approved(approved)) => format!(
            "ok {} pinned {}",
            approved.url,
            approved
                .pinned
                .iter()
                .map(IpAddr::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        Ok(UrlCheck::NeedsResolution(pending)) => {
            format!("resolve {}:{}", pending.host(), pending.port())
        }
        Err(refusal) => refusal.rule().to_owned(),
    }
}

/// `check` over a table of `(url, expected)`.
fn expect(rules: &UrlRules, cases: &[(&str, &str)]) {
    for (url, expected) in cases {
        assert_eq!(check(rules, url), *expected, "{url:?}");
    }
}

/// The second step for `url` with `addresses`.
fn resolved(rules: &UrlRules, url: &str, addresses: &[&str]) -> String {
    let Ok(UrlCheck::NeedsResolution(pending)) = check_url(url, rules) else {
        panic!("{url} does not need resolution");
    };
    let addresses: Vec<IpAddr> = addresses.iter().map(|a| a.parse().unwrap()).collect();
    match check_resolved(&pending, &addresses, rules) {
        Ok(approved) => format!(
            "ok {} pinned {}",
            approved.host,
            approved
                .pinned
                .iter()
                .map(IpAddr::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        Err(refusal) => refusal.rule().to_owned(),
    }
}

#[test]
fn allows_public_urls_and_asks_for_resolution_of_names() {
    expect(
        &rules(),
        &[
            ("https://example.com/a?b=c", "resolve example.com:443"),
            ("HTTP://Example.COM:8080/x", "resolve example.com:8080"),
            ("http://example.com./", "resolve example.com:80"),
            ("http://8.8.8.8/", "ok http://8.8.8.8/ pinned 8.8.8.8"),
            (
                "http://[2606:4700::1111]/",
                "ok http://[2606:4700::1111]/ pinned 2606:4700::1111",
            ),
        ],
    );
}

#[test]
fn allows_idn_hosts_as_punycode() {
    expect(
        &rules(),
        &[
            ("https://bücher.de/", "resolve xn--bcher-kva.de:443"),
            ("https://ｅｘａｍｐｌｅ.com/", "resolve example.com:443"),
            ("https://example\u{3002}com/", "resolve example.com:443"),
        ],
    );
}

#[test]
fn denies_other_schemes_userinfo_and_malformed_urls() {
    let r = rules();
    for (url, rule) in [
        ("file:///etc/passwd", "scheme"),
        ("ftp://example.com/", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("data:text/html,hi", "scheme"),
        ("gopher://127.0.0.1:6379/_x", "scheme"),
        ("http://user:pw@example.com/", "userinfo"),
        ("http://user@example.com/", "userinfo"),
        ("http://example.com\\@evil.com/", "ambiguous-url"),
        ("http://exa\tmple.com/", "unsafe-character"),
        ("http://exa\nmple.com/", "unsafe-character"),
        ("http://example.com/\u{202e}txt", "unsafe-character"),
        ("http://a\u{200b}b.com/", "unsafe-character"),
        ("not a url", "invalid-url"),
        ("http://", "invalid-url"),
        ("http://example.com:0/", "invalid-url"),
        ("http://a..b/", "invalid-url"),
        ("http://\u{3002}example.com/", "invalid-url"),
        ("http://[fe80::1%25eth0]/", "invalid-url"),
        ("http://1.2.3.4.5/", "invalid-url"),
        ("http://09.1.1.1/", "invalid-url"),
    ] {
        assert_eq!(check(&r, url), rule, "{url:?}");
    }
    assert_eq!(
        check(&r, &format!("http://example.com/{}", "a".repeat(9000))),
        "invalid-url"
    );
}

#[test]
fn denies_loopback_in_every_ipv4_spelling() {
    let r = rules();
    for url in [
        "http://127.0.0.1/",
        "http://127.1/",
        "http://0x7f.1/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://017700000001/",
        "http://127.0.0.1./",
        "http://%31%32%37.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::127.0.0.1]/",
        "http://[2002:7f00:1::]/",
    ] {
        assert_eq!(check(&r, url), "blocked-address", "{url}");
    }
}

#[test]
fn denies_every_non_public_address_class() {
    let r = rules();
    for url in [
        "http://0.0.0.0/",
        "http://0/",
        "http://0.1.2.3/",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://169.254.1.1/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://240.0.0.1/",
        "http://192.0.2.1/",
        "http://198.51.100.7/",
        "http://203.0.113.5/",
        "http://198.18.0.1/",
        "http://192.0.0.8/",
        "http://[::]/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[fd12:3456::1]/",
        "http://[fec0::1]/",
        "http://[ff02::1]/",
        "http://[2001:db8::1]/",
        "http://[2001:2::1]/",
        "http://[100::1]/",
        "http://[2001:0:4136:e378:8000:63bf:3f57:fffe]/",
        "http://[64:ff9b:1::a00:1]/",
        "http://[4000::1]/",
    ] {
        assert_eq!(check(&r, url), "blocked-address", "{url}");
    }
}

#[test]
fn denies_cloud_metadata_by_address_and_name_whatever_the_config() {
    let permissive = rules_with(|c| {
        c.ssrf_policy.dangerously_allow_private_network = true;
        c.ssrf_policy.allowed_hostnames = vec!["metadata.google.internal".into()];
    });
    for r in [rules(), permissive] {
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "http://0xa9fea9fe/",
            "http://[::ffff:169.254.169.254]/",
            "http://[fd00:ec2::254]/",
            "http://169.254.170.2/v2/credentials",
            "http://100.100.100.200/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.google.internal./",
            "http://metadata/",
        ] {
            assert_eq!(check(&r, url), "metadata", "{url}");
        }
        assert_eq!(
            resolved(&r, "http://innocent.example/", &["169.254.169.254"]),
            "metadata"
        );
    }
}

#[test]
fn denies_local_names_before_resolution() {
    let r = rules();
    for url in [
        "http://localhost/",
        "http://LOCALHOST./",
        "http://localhost%2e/",
        "http://api.localhost/",
        "http://printer.local/",
        "http://db.corp.internal/",
        "http://router.home.arpa/",
        "http://localhost.localdomain/",
    ] {
        assert_eq!(check(&r, url), "local-hostname", "{url}");
    }
}

#[test]
fn denies_if_any_resolved_address_is_refused_and_pins_ipv4_first() {
    let r = rules();
    assert_eq!(
        resolved(
            &r,
            "https://example.com/",
            &["2606:4700::6810:84e5", "93.184.215.14", "93.184.215.14"]
        ),
        "ok example.com pinned 93.184.215.14,2606:4700::6810:84e5"
    );
    // DNS rebinding: one private answer among public ones refuses the whole URL.
    assert_eq!(
        resolved(&r, "https://example.com/", &["93.184.215.14", "127.0.0.1"]),
        "blocked-address"
    );
    assert_eq!(
        resolved(&r, "https://example.com/", &["::ffff:10.0.0.1"]),
        "blocked-address"
    );
    assert_eq!(resolved(&r, "https://example.com/", &[]), "no-addresses");
    assert_eq!(
        resolved(&r, "https://example.com/", &["::ffff:8.8.8.8"]),
        "ok example.com pinned 8.8.8.8"
    );
}

#[test]
fn denies_by_denied_domains_first_then_requires_an_allowed_domain() {
    let r = rules_with(|c| {
        c.allowed_domains = Some(vec![
            "*.example.com".into(),
            "docs.rs".into(),
            "8.8.8.8".into(),
        ]);
        c.denied_domains = vec!["evil.example.com".into()];
    });
    expect(
        &r,
        &[
            ("https://api.example.com/", "resolve api.example.com:443"),
            ("https://docs.rs/", "resolve docs.rs:443"),
            ("https://evil.example.com/", "domain-denied"),
            ("https://example.com/", "domain-not-allowed"),
            ("https://docs.rs.evil.net/", "domain-not-allowed"),
            ("http://8.8.8.8/", "ok http://8.8.8.8/ pinned 8.8.8.8"),
            ("http://1.1.1.1/", "domain-not-allowed"),
        ],
    );
    let refusal = check_url("https://example.org/", &r).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "host \"example.org\" matches no entry of tools.web.fetch.allowedDomains"
    );
}

#[test]
fn denies_hosts_outside_the_hostname_allowlist_too() {
    let r = rules_with(|c| {
        c.allowed_domains = Some(vec!["*.example.com".into()]);
        c.ssrf_policy.hostname_allowlist = Some(vec!["api.example.com".into()]);
    });
    assert_eq!(
        check(&r, "https://api.example.com/"),
        "resolve api.example.com:443"
    );
    assert_eq!(check(&r, "https://www.example.com/"), "domain-not-allowed");
}

#[test]
fn allows_private_ranges_only_under_their_switches() {
    let private = rules_with(|c| c.ssrf_policy.dangerously_allow_private_network = true);
    expect(
        &private,
        &[
            ("http://localhost:3000/", "resolve localhost:3000"),
            ("http://127.0.0.1/", "ok http://127.0.0.1/ pinned 127.0.0.1"),
            ("http://10.1.2.3/", "ok http://10.1.2.3/ pinned 10.1.2.3"),
            ("http://224.0.0.1/", "blocked-address"),
            ("http://192.0.2.1/", "blocked-address"),
        ],
    );

    let exact = rules_with(|c| c.ssrf_policy.allowed_hostnames = vec!["intranet.local".into()]);
    assert_eq!(
        resolved(&exact, "http://intranet.local/", &["10.0.0.7"]),
        "ok intranet.local pinned 10.0.0.7"
    );
    assert_eq!(check(&exact, "http://other.local/"), "local-hostname");
    assert_eq!(
        resolved(&exact, "http://example.com/", &["10.0.0.7"]),
        "blocked-address"
    );

    let fake_ip = rules_with(|c| {
        c.ssrf_policy.allow_rfc2544_benchmark_range = true;
        c.ssrf_policy.allow_ipv6_unique_local_range = true;
    });
    assert_eq!(
        resolved(&fake_ip, "http://example.com/", &["198.18.0.5", "fd00::5"]),
        "ok example.com pinned 198.18.0.5,fd00::5"
    );
    assert_eq!(
        resolved(&fake_ip, "http://example.com/", &["10.0.0.1"]),
        "blocked-address"
    );
}

#[test]
fn allows_with_the_normalized_url_to_fetch() {
    let Ok(UrlCheck::Approved(approved)) =
        check_url("http://0x08.0x08.0x08.0x08:80/a/../b?c#d", &rules())
    else {
        panic!("an IP literal is decided at once");
    };
    assert_eq!(approved.url, "http://8.8.8.8/b?c#d");
    assert_eq!(approved.host, "8.8.8.8");
    assert_eq!(approved.port, 80);
}

#[test]
fn denies_bad_domain_entries_at_load() {
    let mut config = UrlRulesConfig::new("tools.web.fetch");
    config.denied_domains = vec!["exa mple.com".into()];
    let error = UrlRules::new(config).unwrap_err();
    assert_eq!(error.key, "tools.web.fetch.deniedDomains");
}
