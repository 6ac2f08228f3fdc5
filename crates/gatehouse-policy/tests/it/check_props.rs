//! Properties of the file and URL checks over generated input: unsafe characters are never let
//! through, an allowed path always lies under the root and equals `realpath`'s answer, and every
//! spelling of an IPv4 address is judged as that address.

use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use gatehouse_policy::files::{FileOp, FileRules, FileTool, check_file};
use gatehouse_policy::urls::{
    AddressClass, UrlCheck, UrlRules, UrlRulesConfig, check_url, classify,
};
use proptest::prelude::*;
use proptest::sample::select;

use crate::file_support::Tree;

/// Characters the checks must refuse wherever they appear.
const UNSAFE: &[char] = &[
    '\0',
    '\t',
    '\n',
    '\r',
    '\u{1b}',
    '\u{7f}',
    '\u{85}',
    '\u{200b}',
    '\u{200d}',
    '\u{200e}',
    '\u{202a}',
    '\u{202e}',
    '\u{2066}',
    '\u{2069}',
    '\u{2028}',
    '\u{feff}',
    '\u{e0001}',
];

/// Components over a tree with every kind of symlink: inside, outside, absolute, looping,
/// dangling, pointing up.
const COMPONENTS: &[&str] = &[
    "a", "b", "f.txt", "file.txt", "in_link", "out_link", "abs_in", "loop1", "dangling", "up",
    "..", ".", "g.txt", "new", "outside", "ws", "",
];

struct Fixture {
    tree: Tree,
    contained: FileRules,
    open: FileRules,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let t = Tree::new();
    t.file("ws/a/f.txt", "x");
    t.dir("ws/a/b");
    t.file("ws/file.txt", "x");
    t.file("outside/g.txt", "x");
    t.link("ws/in_link", "a");
    t.link("ws/out_link", "../outside");
    t.link("ws/abs_in", "{root}/ws/a");
    t.link("ws/loop1", "loop2");
    t.link("ws/loop2", "loop1");
    t.link("ws/dangling", "nowhere/x");
    t.link("ws/a/up", "..");
    let (contained, open) = (t.contained(), t.open());
    Fixture {
        tree: t,
        contained,
        open,
    }
});

fn ops() -> impl Strategy<Value = FileOp> {
    select(vec![
        FileOp::Read,
        FileOp::Write { len: 1 },
        FileOp::Edit,
        FileOp::Delete,
    ])
}

/// A relative or absolute path over `COMPONENTS`.
fn paths() -> impl Strategy<Value = String> {
    (
        select(vec!["", "{ws}/", "{root}/", "/"]),
        prop::collection::vec(select(COMPONENTS.to_vec()), 1..7),
    )
        .prop_map(|(prefix, parts)| {
            let f = &*FIXTURE;
            format!("{prefix}{}", parts.join("/"))
                .replace("{ws}", &f.tree.ws.display().to_string())
                .replace("{root}", &f.tree.root.display().to_string())
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_path_with_an_unsafe_character_is_never_allowed(
        path in paths(),
        at in any::<prop::sample::Index>(),
        bad in select(UNSAFE.to_vec()),
        op in ops(),
    ) {
        let f = &*FIXTURE;
        let chars: Vec<char> = path.chars().collect();
        let at = at.index(chars.len() + 1);
        let poisoned: String = chars[..at].iter().chain([&bad]).chain(&chars[at..]).collect();
        for rules in [&f.contained, &f.open] {
            for tool in [FileTool::Fs, FileTool::ApplyPatch] {
                prop_assert!(check_file(&poisoned, op, tool, rules).is_err(), "{poisoned:?}");
            }
        }
    }

    #[test]
    fn an_allowed_path_lies_under_the_root_and_is_what_realpath_answers(
        path in paths(),
        op in ops(),
    ) {
        let f = &*FIXTURE;
        if let Ok(resolved) = check_file(&path, op, FileTool::Fs, &f.contained) {
            prop_assert!(resolved.path.starts_with(f.contained.workspace()), "{path} -> {:?}", resolved.path);
            prop_assert!(resolved.in_workspace);
            if resolved.existing.is_some() {
                let real = fs::canonicalize(f.tree.ws.join(&path)).unwrap();
                prop_assert_eq!(&resolved.path, &real, "{}", path);
            } else {
                // Nothing on the way to a file to be created is a symlink.
                let mut ancestor = resolved.path.clone();
                while !ancestor.exists() {
                    prop_assert!(fs::symlink_metadata(&ancestor).is_err(), "{:?}", ancestor);
                    ancestor.pop();
                }
                prop_assert_eq!(fs::canonicalize(&ancestor).unwrap(), ancestor);
            }
        }
    }

    #[test]
    fn without_containment_an_existing_target_is_still_what_realpath_answers(
        path in paths(),
    ) {
        let f = &*FIXTURE;
        if let Ok(resolved) = check_file(&path, FileOp::Read, FileTool::Fs, &f.open) {
            let real = fs::canonicalize(f.tree.ws.join(&path)).unwrap();
            prop_assert_eq!(resolved.path, real);
        }
    }

    #[test]
    fn every_spelling_of_an_ipv4_address_is_judged_as_that_address(n in any::<u32>()) {
        let rules = UrlRules::new(UrlRulesConfig::new("tools.web.fetch")).unwrap();
        let v4 = Ipv4Addr::from(n);
        let verdict = |url: String| match check_url(&url, &rules) {
            Ok(UrlCheck::Approved(approved)) => Ok(approved.pinned),
            Ok(UrlCheck::NeedsResolution(_)) => Err("needs resolution".to_owned()),
            Err(refusal) => Err(refusal.rule().to_owned()),
        };
        let dotted = verdict(format!("http://{v4}/"));
        prop_assert_eq!(&verdict(format!("http://{n}/")), &dotted);
        prop_assert_eq!(&verdict(format!("http://0x{n:x}/")), &dotted);
        prop_assert_eq!(&verdict(format!("http://0{n:o}/")), &dotted);
        let [a, b, c, d] = v4.octets();
        prop_assert_eq!(&verdict(format!("http://0x{a:x}.0{b:o}.{}/", u32::from(c) << 8 | u32::from(d))), &dotted);
        prop_assert_eq!(&verdict(format!("http://[::ffff:{v4}]/")), &dotted);
        prop_assert_eq!(dotted.is_ok(), classify(IpAddr::V4(v4)) == AddressClass::Public);
    }

    #[test]
    fn embedded_ipv4_is_classified_as_the_address_it_carries(n in any::<u32>()) {
        let v4 = Ipv4Addr::from(n);
        let class = classify(IpAddr::V4(v4));
        let [hi, lo] = [(n >> 16) as u16, n as u16];
        for v6 in [
            v4.to_ipv6_mapped(),
            Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo),
            Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, 1),
        ] {
            prop_assert_eq!(classify(IpAddr::V6(v6)), class, "{}", v6);
        }
    }

    #[test]
    fn an_address_std_calls_non_global_is_never_public(n in any::<u32>()) {
        let v4 = Ipv4Addr::from(n);
        let std_special = v4.is_private() || v4.is_loopback() || v4.is_link_local()
            || v4.is_multicast() || v4.is_broadcast() || v4.is_documentation()
            || v4.is_unspecified();
        if std_special {
            prop_assert_ne!(classify(IpAddr::V4(v4)), AddressClass::Public);
        }
    }

    #[test]
    fn a_url_with_an_unsafe_character_is_never_let_through(
        host in "[a-z]{1,10}\\.(com|org|net)",
        tail in "[a-z/?=&]{0,12}",
        at in any::<prop::sample::Index>(),
        bad in select(UNSAFE.to_vec()),
    ) {
        let rules = UrlRules::new(UrlRulesConfig::new("tools.web.fetch")).unwrap();
        let url: Vec<char> = format!("https://{host}/{tail}").chars().collect();
        let at = at.index(url.len() + 1);
        let poisoned: String = url[..at].iter().chain([&bad]).chain(&url[at..]).collect();
        prop_assert!(check_url(&poisoned, &rules).is_err(), "{poisoned:?}");
    }
}
