//! What a runner hands to `sh -c` (issue 33: safe bins run by absolute path with literal
//! arguments): `render_for_shell` rewrites only the safe-bin segments, and the rendered text is
//! judged exactly as the original.

use gatehouse_policy::exec::{Decision, ExecPolicy, SatisfiedBy, render_for_shell};
use proptest::prelude::*;

use crate::support::{Host, STANDARD_ALLOWLIST, standard_host};

fn host_and_policy() -> (Host, ExecPolicy) {
    let host = standard_host();
    let mut policy = host.policy(STANDARD_ALLOWLIST);
    policy.safe_bins = ["jq", "cut", "head", "tail", "tr", "wc", "grep", "sort"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    (host, policy)
}

#[test]
fn renders_safe_bins_by_absolute_path_with_literal_arguments() {
    let (host, policy) = host_and_policy();
    let bin = |name: &str| format!("'{}'", host.bin(name));
    let cases = [
        (
            "rg -n foo | head -n 5",
            format!("rg -n foo | {} '-n' '5'", bin("head")),
        ),
        (
            "cat x | jq -r --arg k v '.[$k]' && echo done # c",
            format!(
                "cat x | {} '-r' '--arg' 'k' 'v' '.[$k]' && echo done # c",
                bin("jq")
            ),
        ),
        (
            "cat x | cut -d \"'\" -f 2\nls",
            format!("cat x | {} '-d' ''\\''' '-f' '2'\nls", bin("cut")),
        ),
        (
            "cat x|sort -t, -k2 -rn|head -1",
            format!(
                "cat x|{} '-t,' '-k2' '-rn'|{} '-1'",
                bin("sort"),
                bin("head")
            ),
        ),
    ];
    for (command, expected) in cases {
        let verdict = host.evaluate(command, &policy);
        assert_eq!(
            verdict.decision,
            Decision::Allow,
            "{command}: {}",
            verdict.reason
        );
        assert_eq!(render_for_shell(command, &verdict), expected, "{command}");
    }
}

/// Only a command of the text's own, run directly and by its own name, is rewritten: not one
/// inside an `sh -c` payload, behind a wrapper, or an allowlisted program.
#[test]
fn keeps_everything_else_as_written() {
    let (host, policy) = host_and_policy();
    for command in [
        "ls -la && git status",
        "cat x | timeout 5 head -n 1",
        "sh -c 'cat x | head -n 1'",
        "cat x | nice head -n 1",
        "cd work && ls",
        "head -n 1 x",
    ] {
        let verdict = host.evaluate(command, &policy);
        assert_eq!(render_for_shell(command, &verdict), command, "{command}");
    }
}

/// A safe bin reached through a link with another name (a multi-call binary picks its applet
/// by the name it was called with) is left to the shell's `PATH` search.
#[test]
fn keeps_a_safe_bin_whose_file_has_another_name() {
    let (host, policy) = host_and_policy();
    let head = host.root.join("bin/head");
    std::fs::rename(&head, host.root.join("bin/multicall")).unwrap();
    std::os::unix::fs::symlink("multicall", &head).unwrap();
    let command = "cat x | head -n 1";
    let verdict = host.evaluate(command, &policy);
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason);
    assert_eq!(render_for_shell(command, &verdict), command);
}

/// Safe-bin segments, other commands and every separator, as an agent would write them.
fn command_text() -> impl Strategy<Value = String> {
    let arg = prop_oneof![
        Just("-n 1".to_owned()),
        Just("-c".to_owned()),
        Just("'$k'".to_owned()),
        Just("\"a b\"".to_owned()),
        Just("'it'\\''s'".to_owned()),
        Just("-d \"'\"".to_owned()),
        Just("-d,".to_owned()),
        Just("a\\ b".to_owned()),
        Just("-e x".to_owned()),
    ];
    let program = prop_oneof![
        Just("head"),
        Just("tail"),
        Just("wc"),
        Just("sort"),
        Just("cut"),
        Just("tr"),
        Just("jq"),
        Just("grep"),
        Just("ls"),
        Just("rg"),
        Just("cd work"),
    ];
    let segment = (program, prop::collection::vec(arg, 0..3))
        .prop_map(|(program, args)| format!("{program} {}", args.join(" ")));
    let joiner = prop_oneof![
        Just(" | "),
        Just("|"),
        Just(" && "),
        Just(" || "),
        Just("; "),
        Just("\n"),
        Just(" # note\n"),
    ];
    (
        segment.clone(),
        prop::collection::vec((joiner, segment), 0..4),
    )
        .prop_map(|(first, rest)| {
            let mut text = first;
            for (joiner, segment) in rest {
                text.push_str(joiner);
                text.push_str(&segment);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The rendered text is judged as the original: the same decision, and segment by segment
    /// the same program, the same arguments and what satisfied it; a rendered safe bin is then
    /// named by its absolute path.
    #[test]
    fn the_rendered_text_is_judged_as_the_original(command in command_text()) {
        let (host, policy) = host_and_policy();
        let original = host.evaluate(&command, &policy);
        let rendered = render_for_shell(&command, &original);
        let again = host.evaluate(&rendered, &policy);
        prop_assert_eq!(original.decision, again.decision, "{:?} -> {:?}", command, rendered);
        prop_assert_eq!(original.segments.len(), again.segments.len());
        for (before, after) in original.segments.iter().zip(&again.segments) {
            prop_assert_eq!(&before.resolved_path, &after.resolved_path, "{:?}", rendered);
            prop_assert_eq!(&before.argv[1..], &after.argv[1..], "{:?}", rendered);
            prop_assert_eq!(before.satisfied_by, after.satisfied_by, "{:?}", rendered);
            if after.satisfied_by == Some(SatisfiedBy::SafeBins) && original.decision == Decision::Allow {
                prop_assert!(after.argv[0].starts_with('/'), "{:?}", rendered);
            }
        }
    }
}
