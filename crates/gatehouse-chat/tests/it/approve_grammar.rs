use gatehouse_chat::grammar::approve::{
    ApproveCommand, ApproveParse, ApproveRefusal, IdMatch, match_id, parse_approve,
};
use gatehouse_policy::ApprovalDecision::{self, AllowAlways, AllowOnce, Deny};
use pretty_assertions::assert_eq;

const BOT: Option<&str> = Some("GateBot");

fn check(text: &str, expect: ApproveParse) {
    assert_eq!(parse_approve(text, BOT), expect, "input: {text:?}");
}

fn ok(target: &str, decision: ApprovalDecision) -> ApproveParse {
    ApproveParse::Command(ApproveCommand {
        target: target.to_owned(),
        decision,
    })
}

fn refused(refusal: ApproveRefusal) -> ApproveParse {
    ApproveParse::Refused(refusal)
}

fn words(a: &str, b: &str) -> [String; 2] {
    [a.to_owned(), b.to_owned()]
}

#[test]
fn accepts_id_then_decision() {
    check("/approve abc12345 allow-once", ok("abc12345", AllowOnce));
    check(
        "/approve abc12345 allow-always",
        ok("abc12345", AllowAlways),
    );
    check("/approve abc12345 deny", ok("abc12345", Deny));
    check(
        "/approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab deny",
        ok("0f3c9a1e-7b2d-4c1a-9e55-1234567890ab", Deny),
    );
}

#[test]
fn accepts_decision_then_id() {
    check("/approve allow-once abc12345", ok("abc12345", AllowOnce));
    check("/approve always abc12345", ok("abc12345", AllowAlways));
    check("/approve reject abc12345", ok("abc12345", Deny));
}

#[test]
fn accepts_every_decision_alias_case_insensitively() {
    for (word, decision) in [
        ("allow", AllowOnce),
        ("once", AllowOnce),
        ("allow-once", AllowOnce),
        ("allowonce", AllowOnce),
        ("ALLOW", AllowOnce),
        ("Allow-Once", AllowOnce),
        ("AllowOnce", AllowOnce),
        ("always", AllowAlways),
        ("allow-always", AllowAlways),
        ("allowalways", AllowAlways),
        ("ALWAYS", AllowAlways),
        ("deny", Deny),
        ("reject", Deny),
        ("block", Deny),
        ("Deny", Deny),
        ("BLOCK", Deny),
    ] {
        check(
            &format!("/approve abc12345 {word}"),
            ok("abc12345", decision),
        );
        check(
            &format!("/approve {word} abc12345"),
            ok("abc12345", decision),
        );
    }
}

#[test]
fn accepts_colon_and_own_mention() {
    check("/approve: abc12345 deny", ok("abc12345", Deny));
    check("/approve : abc12345 deny", ok("abc12345", Deny));
    check("/approve@GateBot abc12345 deny", ok("abc12345", Deny));
    check("/approve@gatebot abc12345 deny", ok("abc12345", Deny));
    check("/approve@GateBot: abc12345 deny", ok("abc12345", Deny));
    check("/APPROVE abc12345 deny", ok("abc12345", Deny));
    check("  /approve   abc12345\tdeny  ", ok("abc12345", Deny));
    check("/approve abc12345\ndeny", ok("abc12345", Deny));
}

#[test]
fn accepts_bare_approve_where_slashes_are_eaten() {
    check("approve abc12345 allow-once", ok("abc12345", AllowOnce));
    check("Approve deny abc12345", ok("abc12345", Deny));
    check("approve: abc12345 deny", ok("abc12345", Deny));
}

#[test]
fn ignores_bare_text_that_does_not_parse() {
    check("approve this PR please", ApproveParse::NotCommand);
    check("approve", ApproveParse::NotCommand);
    check("approve deny", ApproveParse::NotCommand);
}

#[test]
fn ignores_other_commands_and_text() {
    check("", ApproveParse::NotCommand);
    check("hello", ApproveParse::NotCommand);
    check("/approved abc12345 deny", ApproveParse::NotCommand);
    check("/approvals abc12345 deny", ApproveParse::NotCommand);
    check("/elevated on", ApproveParse::NotCommand);
    check("please /approve abc12345 deny", ApproveParse::NotCommand);
}

#[test]
fn refuses_another_bots_mention() {
    let other = |mention: &str| {
        refused(ApproveRefusal::OtherBot {
            mention: mention.to_owned(),
        })
    };
    check("/approve@OtherBot abc12345 deny", other("OtherBot"));
    check("/approve@ abc12345 deny", other(""));
    check("/approve@GateBot2 abc12345 deny", other("GateBot2"));
    assert_eq!(
        parse_approve("/approve@GateBot abc12345 deny", None),
        refused(ApproveRefusal::OtherBot {
            mention: "GateBot".into()
        }),
        "a bot that does not know its own name accepts no mention"
    );
}

#[test]
fn refuses_missing_arguments() {
    check("/approve", refused(ApproveRefusal::MissingArguments));
    check("/approve:", refused(ApproveRefusal::MissingArguments));
    check(
        "/approve@GateBot",
        refused(ApproveRefusal::MissingArguments),
    );
    check(
        "/approve deny",
        refused(ApproveRefusal::MissingId { decision: Deny }),
    );
    check(
        "/approve abc12345",
        refused(ApproveRefusal::MissingDecision {
            target: "abc12345".into(),
        }),
    );
}

#[test]
fn refuses_extra_tokens() {
    check(
        "/approve abc12345 allow once",
        refused(ApproveRefusal::ExtraTokens {
            extra: vec!["once".into()],
        }),
    );
    check(
        "/approve abc12345 deny because it is risky",
        refused(ApproveRefusal::ExtraTokens {
            extra: vec!["because".into(), "it".into(), "is".into(), "risky".into()],
        }),
    );
    check(
        "/approve deny abc12345 def67890",
        refused(ApproveRefusal::ExtraTokens {
            extra: vec!["def67890".into()],
        }),
    );
}

#[test]
fn refuses_unknown_and_ambiguous_decisions() {
    check(
        "/approve abc12345 maybe",
        refused(ApproveRefusal::UnknownDecision {
            words: words("abc12345", "maybe"),
        }),
    );
    check(
        "/approve abc12345 approve",
        refused(ApproveRefusal::UnknownDecision {
            words: words("abc12345", "approve"),
        }),
    );
    check(
        "/approve abc12345 allow_once",
        refused(ApproveRefusal::UnknownDecision {
            words: words("abc12345", "allow_once"),
        }),
    );
    check(
        "/approve deny allow",
        refused(ApproveRefusal::AmbiguousOrder {
            words: words("deny", "allow"),
        }),
    );
    check(
        "/approve always always",
        refused(ApproveRefusal::AmbiguousOrder {
            words: words("always", "always"),
        }),
    );
}

#[test]
fn refuses_implausible_ids() {
    let invalid = |target: &str| {
        refused(ApproveRefusal::InvalidId {
            target: target.to_owned(),
        })
    };
    check("/approve abc;rm deny", invalid("abc;rm"));
    check("/approve ../etc deny", invalid("../etc"));
    check("/approve abc\u{202e}123 deny", invalid("abc\u{202e}123"));
    check("/approve `id` deny", invalid("`id`"));
    let long = "a".repeat(129);
    check(&format!("/approve {long} deny"), invalid(&long));
}

/// Issue 36: a one-character prefix typed in any chat resolved (and, matching several approvals,
/// listed their ids there). Every form that resolves a typed id now refuses a prefix shorter
/// than the documented minimum before anything is looked up; the bare form stays chatter.
#[test]
fn refuses_prefixes_shorter_than_the_minimum_in_every_form() {
    let short = |target: &str| {
        refused(ApproveRefusal::PrefixTooShort {
            target: target.to_owned(),
        })
    };
    check("/approve 0 deny", short("0"));
    check("/approve deny 0f3", short("0f3"));
    check("/approve@GateBot: allow f", short("f"));
    check("/approve f allow-once", short("f"));
    check("/approve 0f3c deny", ok("0f3c", Deny));
    check("approve 0f3 deny", ApproveParse::NotCommand);
}

mod prefix_properties {
    use gatehouse_chat::grammar::approve::{ApproveParse, MIN_PREFIX_LEN, parse_approve};
    use proptest::prelude::*;

    proptest! {
        /// No command the grammar accepts names fewer than the minimum, whatever the words.
        #[test]
        fn accepted_targets_are_never_shorter_than_the_minimum(
            id in "[0-9a-f-]{0,12}",
            decision in "(allow|once|deny|always|block)",
            swap in any::<bool>(),
        ) {
            let text = if swap { format!("/approve {decision} {id}") } else { format!("/approve {id} {decision}") };
            if let ApproveParse::Command(command) = parse_approve(&text, None) {
                prop_assert!(command.target.chars().count() >= MIN_PREFIX_LEN, "{text}");
            }
        }
    }
}

const IDS: [&str; 3] = [
    "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab",
    "0f3c9a1e-ffff-4c1a-9e55-1234567890ab",
    "9b1d2c3e-0000-4000-8000-000000000001",
];

#[test]
fn matches_full_ids_and_unique_prefixes() {
    assert_eq!(match_id(IDS[2], IDS), IdMatch::Unique(IDS[2].into()));
    assert_eq!(match_id("9b1d2c3e", IDS), IdMatch::Unique(IDS[2].into()));
    assert_eq!(match_id("9B1D", IDS), IdMatch::Unique(IDS[2].into()));
    assert_eq!(match_id("0f3c9a1e-f", IDS), IdMatch::Unique(IDS[1].into()));
}

#[test]
fn refuses_short_ambiguous_and_unknown_prefixes() {
    assert_eq!(match_id("9b1", IDS), IdMatch::None);
    assert_eq!(match_id("abcdef12", IDS), IdMatch::None);
    assert_eq!(
        match_id("0f3c9a1e", IDS),
        IdMatch::Ambiguous(vec![IDS[0].into(), IDS[1].into()])
    );
    assert_eq!(match_id("0f3c9a1e", []), IdMatch::None);
}
