//! Hand-written allows: everyday agent commands that must keep running without a person.

use crate::support::Expect::Allow;
use crate::support::check;

#[test]
fn allows_allowlisted_programs_and_chains() {
    check(&[
        ("ls -la", Allow),
        ("git status && git diff --stat", Allow),
        ("git log --oneline | head -n 20", Allow),
        (
            "rg -n 'fn main' | sort | uniq -c | sort -rn | head -5",
            Allow,
        ),
        ("cat Cargo.toml | wc -l", Allow),
        ("echo \"a && b; c | d\"", Allow),
        ("echo 'it''s' \"$HOME\"", Allow),
        ("ls; git status", Allow),
        ("ls # trailing comment", Allow),
        ("cd /tmp && ls", Allow),
        ("git commit -m 'fix: handle $PATH in docs'", Allow),
        ("find . -name '*.rs'", Allow),
        ("python3 scripts/gen.py --out x", Allow),
        ("sed -n 's/a/b/p' file.txt", Allow),
        ("awk -f prog.awk data.csv", Allow),
        ("make test", Allow),
    ]);
}

#[test]
fn allows_transparent_wrappers_around_allowlisted_programs() {
    check(&[
        ("env ls", Allow),
        ("env -u FOO ls", Allow),
        ("nice -n 10 git gc", Allow),
        ("nohup ls", Allow),
        ("timeout 5s rg needle", Allow),
        ("timeout -s KILL 10 ls", Allow),
        ("stdbuf -oL rg needle", Allow),
        ("time -p ls", Allow),
        ("nice timeout 5 env ls", Allow),
        ("sh -c 'ls && git status'", Allow),
        ("bash -c 'rg needle | head -n 3'", Allow),
    ]);
}

#[test]
fn allows_safe_bins_within_their_profiles() {
    check(&[
        ("cat x | head -n 5", Allow),
        ("cat x | head -5", Allow),
        ("cat x | tail -n 1", Allow),
        ("cat x | jq -r '.items[0].name'", Allow),
        ("cat x | jq .env", Allow),
        ("cat x | cut -d, -f1", Allow),
        ("cat x | tr a-z A-Z", Allow),
        ("cat x | sort -t, -k2 -n", Allow),
        ("cat x | sort --ke=1,1", Allow),
        ("cat x | uniq -c", Allow),
        ("cat x | wc -l", Allow),
        ("cat x | grep -i -e needle", Allow),
        ("cat x | grep --regexp=needle -c", Allow),
        ("cat x | head -n 1 -", Allow),
    ]);
}

#[test]
fn allows_plain_parameter_expansions_in_arguments() {
    check(&[("ls ${HOME}", Allow), ("echo \"${HOME}/x\" $1 ${1}", Allow)]);
}

/// Issue 29 (false refusals): single quotes keep `$` and a backslash-newline as text, so a jq
/// program using `$k` with `--arg`, `cut -d '$'` and a message with `\⏎` run.
#[test]
fn allows_dollar_and_backslash_newline_in_single_quotes() {
    check(&[
        ("cat x | jq -r --arg k v '.[$k]'", Allow),
        ("cat x | jq -n --arg k v '$k'", Allow),
        ("cat x | cut -d '$' -f 2", Allow),
        ("cat x | tr '$' _", Allow),
        ("echo 'a\\\nb'", Allow),
        ("git commit -m 'line one \\\nline two'", Allow),
        ("sh -c \"echo 'a\\\\\nb'\"", Allow),
    ]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever a single-quoted word holds (but a quote and the characters refused everywhere),
    /// it is one argument, read as written.
    #[test]
    fn reads_single_quoted_text_as_written(text in "[a-z $\\\\\n\"`;|&()<>#*?~{}=-]{0,24}") {
        let host = crate::support::standard_host();
        let policy = host.policy(crate::support::STANDARD_ALLOWLIST);
        let verdict = host.evaluate(&format!("echo '{text}'"), &policy);
        proptest::prop_assert_eq!(verdict.decision, gatehouse_policy::exec::Decision::Allow,
            "{}", verdict.reason);
        proptest::prop_assert_eq!(&verdict.segments[0].argv[1], &text);
    }
}
