//! Regressions from the security review of `security: allowlist`: each vector was allowed
//! while the command ran something unapproved. Every `denies_…` list holds the vectors, and the
//! `allows_…` list beside it the everyday neighbours that must keep running.

use gatehouse_policy::exec::Rule::*;
use gatehouse_policy::exec::{Decision, ExecPolicy};

use crate::support::Expect::{Allow, Refused};
use crate::support::{Host, check};

/// Asserts that each command runs without a person on this host under this policy.
fn assert_allowed(host: &Host, policy: &ExecPolicy, commands: &[&str]) {
    for command in commands {
        let verdict = host.evaluate(command, policy);
        assert_eq!(
            verdict.decision,
            Decision::Allow,
            "{command}: {}",
            verdict.reason
        );
    }
}

/// Behind the keyword `time` bash still runs its own builtins: `printf -v` and `test -v`
/// evaluate a subscript, running the `$(…)` in it, while `/usr/bin/printf` was judged.
#[test]
fn denies_builtins_and_assignments_behind_the_time_keyword() {
    check(&[
        ("time printf -v 'a[$(id)]' x", Refused(ShellCarrier)),
        ("time -p printf -v 'a[$(id)]' x", Refused(ShellCarrier)),
        (
            "bash -c 'time printf -v \"a[\\$(touch P)]\" x'",
            Refused(ShellCarrier),
        ),
        ("time printf -vX %s y", Refused(ShellCarrier)),
        ("nice printf -v X y", Refused(ShellCarrier)),
        ("time builtin eval id", Refused(ShellCarrier)),
        ("time command ls", Refused(ShellCarrier)),
        ("time LD_PRELOAD=./evil.so ls", Refused(EnvAssignment)),
        ("time A+=x ls", Refused(EnvAssignment)),
    ]);
    let host = Host::with_bins(&["test", "time"]);
    let policy = host.policy(&["test"]);
    for command in ["time test -v 'a[$(id)]'", "time -p test -R X"] {
        let verdict = host.evaluate(command, &policy);
        assert_eq!(verdict.reason.rule, ShellCarrier, "{command}");
        assert_ne!(verdict.decision, Decision::Allow, "{command}");
    }
}

/// bash's `time` takes one `-p`; `time -p -p X` runs a program named `-p`, not `X`.
#[test]
fn denies_time_options_that_bash_runs_as_the_program() {
    check(&[
        ("time -p -p ls", Refused(WrapperRefused)),
        ("time --portability ls", Refused(WrapperRefused)),
        ("time -- ls", Refused(WrapperRefused)),
        ("time -p -- ls", Refused(WrapperRefused)),
    ]);
}

#[test]
fn allows_time_and_printf_without_the_builtin_only_options() {
    check(&[
        ("time ls -la", Allow),
        ("time -p git status", Allow),
        ("time printf '%s\\n' x", Allow),
        ("printf -- '-v %s' x", Allow),
        ("nice -n 5 printf '%s' x", Allow),
    ]);
    let host = Host::with_bins(&["test", "time"]);
    let policy = host.policy(&["test"]);
    assert_allowed(&host, &policy, &["time test -f Cargo.toml"]);
}
