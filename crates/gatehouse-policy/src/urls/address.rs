//! Which part of the address space an IP address belongs to, with IPv4 addresses hidden inside
//! IPv6 ones (mapped, compatible, NAT64, 6to4, Teredo) judged by the IPv4 address they carry.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The class of an address; everything but [`AddressClass::Public`] is refused unless a rule
/// says otherwise (see [`AddressClass::exemption`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddressClass {
    /// Globally routable.
    Public,
    /// `0.0.0.0`, `::` (Linux connects them to the local host).
    Unspecified,
    /// `0.0.0.0/8` besides `0.0.0.0`.
    ThisNetwork,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// Carrier-grade NAT, `100.64.0.0/10` (RFC 6598).
    SharedCgnat,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// Unique-local `fc00::/7`.
    UniqueLocal,
    /// Deprecated site-local `fec0::/10`.
    SiteLocal,
    /// Cloud instance metadata services (`169.254.169.254`, `fd00:ec2::254`, …).
    CloudMetadata,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// RFC 2544 benchmarking, `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Everything else not routable on the internet: `240/4`, `192.0.0/24`, `192.88.99/24`,
    /// the IPv6 discard, ORCHID and SRv6 prefixes, and any IPv6 address outside `2000::/3`.
    Reserved,
}

/// Which rule may let a class through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exemption {
    /// Always allowed.
    None,
    /// `dangerouslyAllowPrivateNetwork` or an `allowedHostnames` entry.
    PrivateNetwork,
    /// As `PrivateNetwork`, or `allowRfc2544BenchmarkRange`.
    Benchmarking,
    /// As `PrivateNetwork`, or `allowIpv6UniqueLocalRange`.
    UniqueLocal,
    /// Never: metadata, multicast, broadcast, documentation and reserved addresses.
    Never,
}

impl AddressClass {
    /// The rule that can admit this class.
    pub fn exemption(self) -> Exemption {
        match self {
            AddressClass::Public => Exemption::None,
            AddressClass::Unspecified
            | AddressClass::ThisNetwork
            | AddressClass::Loopback
            | AddressClass::Private
            | AddressClass::SharedCgnat
            | AddressClass::LinkLocal
            | AddressClass::SiteLocal => Exemption::PrivateNetwork,
            AddressClass::UniqueLocal => Exemption::UniqueLocal,
            AddressClass::Benchmarking => Exemption::Benchmarking,
            AddressClass::CloudMetadata
            | AddressClass::Multicast
            | AddressClass::Broadcast
            | AddressClass::Documentation
            | AddressClass::Reserved => Exemption::Never,
        }
    }

    /// The label used in refusals.
    pub fn label(self) -> &'static str {
        match self {
            AddressClass::Public => "public",
            AddressClass::Unspecified => "unspecified",
            AddressClass::ThisNetwork => "this-network (0.0.0.0/8)",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private (RFC 1918)",
            AddressClass::SharedCgnat => "carrier-grade NAT (100.64.0.0/10)",
            AddressClass::LinkLocal => "link-local",
            AddressClass::UniqueLocal => "unique-local (fc00::/7)",
            AddressClass::SiteLocal => "site-local (fec0::/10)",
            AddressClass::CloudMetadata => "cloud metadata service",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Documentation => "documentation",
            AddressClass::Benchmarking => "benchmarking (RFC 2544)",
            AddressClass::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How an IPv6 address carries an IPv4 one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Mapped,
    /// `::a.b.c.d` (deprecated).
    Compatible,
    /// NAT64, `64:ff9b::/96` and the local-use `64:ff9b:1::/48`.
    Nat64,
    /// 6to4, `2002:AABB:CCDD::/48`.
    SixToFour,
    /// Teredo, `2001:0::/32` (server in bits 32–63, client inverted in the last 32).
    Teredo,
}

impl Embedding {
    /// The label used in refusals.
    pub fn label(self) -> &'static str {
        match self {
            Embedding::Mapped => "IPv4-mapped",
            Embedding::Compatible => "IPv4-compatible",
            Embedding::Nat64 => "NAT64",
            Embedding::SixToFour => "6to4",
            Embedding::Teredo => "Teredo",
        }
    }
}

/// Addresses of instance metadata services: AWS (IMDS, ECS task and EKS pod identity
/// endpoints, IMDS over IPv6), GCP and Azure (`169.254.169.254`), Alibaba, Oracle.
const METADATA_V4: [Ipv4Addr; 5] = [
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(169, 254, 170, 23),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
];
const METADATA_V6: [Ipv6Addr; 2] = [
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254),
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23),
];

/// IPv4 ranges, most specific first where they overlap.
const V4_RANGES: [([u8; 4], u8, AddressClass); 17] = [
    ([0, 0, 0, 0], 32, AddressClass::Unspecified),
    ([0, 0, 0, 0], 8, AddressClass::ThisNetwork),
    ([10, 0, 0, 0], 8, AddressClass::Private),
    ([100, 64, 0, 0], 10, AddressClass::SharedCgnat),
    ([127, 0, 0, 0], 8, AddressClass::Loopback),
    ([169, 254, 0, 0], 16, AddressClass::LinkLocal),
    ([172, 16, 0, 0], 12, AddressClass::Private),
    ([192, 0, 0, 0], 24, AddressClass::Reserved),
    ([192, 0, 2, 0], 24, AddressClass::Documentation),
    ([192, 88, 99, 0], 24, AddressClass::Reserved),
    ([192, 168, 0, 0], 16, AddressClass::Private),
    ([198, 18, 0, 0], 15, AddressClass::Benchmarking),
    ([198, 51, 100, 0], 24, AddressClass::Documentation),
    ([203, 0, 113, 0], 24, AddressClass::Documentation),
    ([224, 0, 0, 0], 4, AddressClass::Multicast),
    ([255, 255, 255, 255], 32, AddressClass::Broadcast),
    ([240, 0, 0, 0], 4, AddressClass::Reserved),
];

/// IPv6 ranges inside or beside `2000::/3` that are not public.
const V6_RANGES: [([u16; 8], u8, AddressClass); 10] = [
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, AddressClass::Reserved),
    (
        [0x2001, 0x2, 0, 0, 0, 0, 0, 0],
        48,
        AddressClass::Benchmarking,
    ),
    (
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        AddressClass::Documentation,
    ),
    ([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28, AddressClass::Reserved),
    ([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28, AddressClass::Reserved),
    (
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        AddressClass::Documentation,
    ),
    ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, AddressClass::Reserved),
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, AddressClass::UniqueLocal),
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, AddressClass::LinkLocal),
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, AddressClass::SiteLocal),
];

/// The class of an address; an IPv6 address that carries IPv4 addresses has the class of the
/// first of them that is not public.
pub fn classify(address: IpAddr) -> AddressClass {
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            let embedded = embedded_ipv4(v6);
            if embedded.is_empty() {
                return classify_v6(v6);
            }
            // The packet goes where the IPv4 address says (through a translator or relay).
            embedded
                .into_iter()
                .map(|(_, inner)| classify_v4(inner))
                .find(|class| *class != AddressClass::Public)
                .unwrap_or(AddressClass::Public)
        }
    }
}

/// The IPv4 addresses an IPv6 address carries, with how it carries them (a Teredo address
/// carries two: server and client).
pub fn embedded_ipv4(address: Ipv6Addr) -> Vec<(Embedding, Ipv4Addr)> {
    let s = address.segments();
    let v4 = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0xffff, high, low] => vec![(Embedding::Mapped, v4(high, low))],
        // `::` and `::1` are themselves, not IPv4-compatible addresses.
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => Vec::new(),
        [0, 0, 0, 0, 0, 0, high, low] => vec![(Embedding::Compatible, v4(high, low))],
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] | [0x64, 0xff9b, 1, _, _, _, high, low] => {
            vec![(Embedding::Nat64, v4(high, low))]
        }
        [0x2002, high, low, ..] => vec![(Embedding::SixToFour, v4(high, low))],
        [
            0x2001,
            0,
            server_high,
            server_low,
            _,
            _,
            client_high,
            client_low,
        ] => vec![
            (Embedding::Teredo, v4(server_high, server_low)),
            (Embedding::Teredo, v4(!client_high, !client_low)),
        ],
        _ => Vec::new(),
    }
}

fn classify_v4(address: Ipv4Addr) -> AddressClass {
    if METADATA_V4.contains(&address) {
        return AddressClass::CloudMetadata;
    }
    let bits = u32::from(address);
    V4_RANGES
        .iter()
        .find(|(network, prefix, _)| {
            let mask = u32::MAX.checked_shl(32 - u32::from(*prefix)).unwrap_or(0);
            bits & mask == u32::from_be_bytes(*network) & mask
        })
        .map_or(AddressClass::Public, |(_, _, class)| *class)
}

fn classify_v6(address: Ipv6Addr) -> AddressClass {
    if METADATA_V6.contains(&address) {
        return AddressClass::CloudMetadata;
    }
    if address.is_unspecified() {
        return AddressClass::Unspecified;
    }
    if address.is_loopback() {
        return AddressClass::Loopback;
    }
    if address.is_multicast() {
        return AddressClass::Multicast;
    }
    let bits = u128::from(address);
    let in_range = |segments: [u16; 8], prefix: u8| {
        let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
        bits & mask == u128::from(Ipv6Addr::from(segments)) & mask
    };
    if let Some((_, _, class)) = V6_RANGES
        .iter()
        .find(|(net, prefix, _)| in_range(*net, *prefix))
    {
        return *class;
    }
    // Only `2000::/3` is allocated as global unicast; the rest is reserved until it is not.
    if in_range([0x2000, 0, 0, 0, 0, 0, 0, 0], 3) {
        AddressClass::Public
    } else {
        AddressClass::Reserved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> AddressClass {
        classify(text.parse().unwrap())
    }

    #[test]
    fn classifies_ipv4_ranges() {
        for (address, expected) in [
            ("8.8.8.8", AddressClass::Public),
            ("0.0.0.0", AddressClass::Unspecified),
            ("0.1.2.3", AddressClass::ThisNetwork),
            ("127.0.0.1", AddressClass::Loopback),
            ("127.255.255.254", AddressClass::Loopback),
            ("10.1.2.3", AddressClass::Private),
            ("172.16.0.1", AddressClass::Private),
            ("172.31.255.255", AddressClass::Private),
            ("172.32.0.1", AddressClass::Public),
            ("192.168.1.1", AddressClass::Private),
            ("100.64.0.1", AddressClass::SharedCgnat),
            ("100.127.255.255", AddressClass::SharedCgnat),
            ("100.128.0.1", AddressClass::Public),
            ("169.254.1.1", AddressClass::LinkLocal),
            ("169.254.169.254", AddressClass::CloudMetadata),
            ("100.100.100.200", AddressClass::CloudMetadata),
            ("192.0.0.192", AddressClass::CloudMetadata),
            ("192.0.0.8", AddressClass::Reserved),
            ("192.0.2.1", AddressClass::Documentation),
            ("198.51.100.1", AddressClass::Documentation),
            ("203.0.113.9", AddressClass::Documentation),
            ("198.18.0.1", AddressClass::Benchmarking),
            ("198.19.255.255", AddressClass::Benchmarking),
            ("224.0.0.1", AddressClass::Multicast),
            ("239.255.255.250", AddressClass::Multicast),
            ("240.0.0.1", AddressClass::Reserved),
            ("255.255.255.255", AddressClass::Broadcast),
            ("192.88.99.1", AddressClass::Reserved),
        ] {
            assert_eq!(class(address), expected, "{address}");
        }
    }

    #[test]
    fn classifies_ipv6_ranges() {
        for (address, expected) in [
            ("2606:4700::1111", AddressClass::Public),
            ("::", AddressClass::Unspecified),
            ("::1", AddressClass::Loopback),
            ("fe80::1", AddressClass::LinkLocal),
            ("fc00::1", AddressClass::UniqueLocal),
            ("fd12:3456::1", AddressClass::UniqueLocal),
            ("fec0::1", AddressClass::SiteLocal),
            ("ff02::1", AddressClass::Multicast),
            ("2001:db8::1", AddressClass::Documentation),
            ("3fff::1", AddressClass::Documentation),
            ("2001:2::1", AddressClass::Benchmarking),
            ("100::1", AddressClass::Reserved),
            ("2001:10::1", AddressClass::Reserved),
            ("5f00::1", AddressClass::Reserved),
            ("4000::1", AddressClass::Reserved),
            ("fd00:ec2::254", AddressClass::CloudMetadata),
        ] {
            assert_eq!(class(address), expected, "{address}");
        }
    }

    #[test]
    fn judges_embedded_ipv4_by_its_own_class() {
        for (address, expected) in [
            ("::ffff:127.0.0.1", AddressClass::Loopback),
            ("::ffff:169.254.169.254", AddressClass::CloudMetadata),
            ("::10.0.0.1", AddressClass::Private),
            ("64:ff9b::7f00:1", AddressClass::Loopback),
            ("64:ff9b:1::a00:1", AddressClass::Private),
            ("2002:7f00:1::", AddressClass::Loopback),
            ("2002:a9fe:a9fe::1", AddressClass::CloudMetadata),
            // Teredo client 192.168.0.1 is stored inverted: 3f57:fffe.
            (
                "2001:0:4136:e378:8000:63bf:3f57:fffe",
                AddressClass::Private,
            ),
            ("::ffff:8.8.8.8", AddressClass::Public),
            ("64:ff9b::808:808", AddressClass::Public),
            ("2002:808:808::1", AddressClass::Public),
        ] {
            assert_eq!(class(address), expected, "{address}");
        }
    }
}
