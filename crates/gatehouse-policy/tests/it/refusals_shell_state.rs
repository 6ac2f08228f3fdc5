//! Shell state the analysis does not model (issue 29, class 1): assignments that outlive their
//! command, shell options that run variable contents, and locales in which the shell splits
//! the text elsewhere. `shell_oracle` is the differential test behind these rules.

use gatehouse_policy::exec::Rule::*;
use gatehouse_policy::exec::{Decision, Rule, evaluate};

use crate::support::Expect::{Allow, Refused};
use crate::support::{Host, check};

#[test]
fn denies_assignments_in_front_of_builtins() {
    check(&[
        ("PATH=/tmp/evil : ; ls", Refused(EnvAssignment)),
        ("PATH=/tmp/evil true && ls", Refused(EnvAssignment)),
        ("IFS=/ pwd; ls", Refused(EnvAssignment)),
        ("LD_PRELOAD=/tmp/x.so false || ls", Refused(EnvAssignment)),
        ("BASH_ENV=/tmp/x cd /tmp", Refused(EnvAssignment)),
        ("PS4='$(id)' :", Refused(EnvAssignment)),
        ("LANG=zh_TW.BIG5 :; ls", Refused(EnvAssignment)),
        ("HOME=/tmp/h echo hi", Refused(EnvAssignment)),
        ("A=1 printf x", Refused(EnvAssignment)),
        ("A=1 exit", Refused(EnvAssignment)),
        ("sh -c 'PATH=/tmp/evil :; ls'", Refused(EnvAssignment)),
        ("time PATH=/tmp/evil :", Refused(EnvAssignment)),
        // Without an assignment the builtins still run.
        (": ; ls", Allow),
        ("cd /tmp && pwd && true", Allow),
    ]);
}

#[test]
fn denies_shell_options_that_run_variable_contents() {
    check(&[
        ("bash -xc 'git status'", Refused(ShellPayload)),
        ("sh -xc ls", Refused(ShellPayload)),
        ("bash -exc ls", Refused(ShellPayload)),
        ("sh -euxc ls", Refused(ShellPayload)),
        ("bash -o xtrace -c ls", Refused(ShellPayload)),
        ("bash -x scripts/run.sh", Refused(ShellPayload)),
        ("bash -ac ls", Refused(ShellPayload)),
        ("bash -Tc ls", Refused(ShellPayload)),
        ("set -x; ls", Refused(ShellCarrier)),
        ("env SHELLOPTS=xtrace bash -c ls", Refused(EnvAssignment)),
        ("PS4='$(id)' bash -c ls", Refused(EnvAssignment)),
    ]);
}

/// The request's `LC_ALL`, `LC_CTYPE` and `LANG` must name a UTF-8 or single-byte character
/// set; any other withdraws auto-allow (`env-assignment`), naming the variable.
#[test]
fn denies_request_locales_the_analysis_cannot_read() {
    let host = Host::with_bins(&["ls"]);
    let policy = host.policy(&["ls"]);
    let verdict =
        |key: &str, value: &str| evaluate(&host.request("ls").with_env(key, value), &policy);
    for (key, value) in [
        ("LANG", "zh_TW.BIG5"),
        ("LANG", "zh_TW"),
        ("LC_ALL", "zh_CN.GBK"),
        ("LC_ALL", "zh_CN.GB18030"),
        ("LC_CTYPE", "ja_JP.SJIS"),
        ("LC_CTYPE", "ko_KR.EUC-KR"),
    ] {
        let v = verdict(key, value);
        assert_ne!(v.decision, Decision::Allow, "{key}={value}");
        assert_eq!(
            v.reason.rule,
            Rule::EnvAssignment,
            "{key}={value}: {}",
            v.reason
        );
        assert!(
            v.reason.detail.contains(&format!("`{key}`")),
            "{}",
            v.reason
        );
    }
    for (key, value) in [
        ("LANG", "C.UTF-8"),
        ("LANG", "en_US.UTF-8"),
        ("LC_ALL", "C"),
        ("LC_CTYPE", "de_DE.ISO-8859-1"),
        ("LC_MESSAGES", "zh_TW.BIG5"),
    ] {
        let v = verdict(key, value);
        assert_eq!(v.decision, Decision::Allow, "{key}={value}: {}", v.reason);
    }
}
