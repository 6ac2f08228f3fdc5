//! The analyzer is fed arbitrary text and must always return a verdict, never panic, and never
//! allow what it could not analyze.

use gatehouse_policy::exec::{Decision, ExecCommand, ExecRequest, evaluate};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support::{Host, STANDARD_ALLOWLIST, standard_host};

fn run_shell(host: &Host, strategy: impl Strategy<Value = String>) {
    let policy = host.policy(STANDARD_ALLOWLIST);
    let mut runner = TestRunner::new(Config::with_cases(1024));
    runner
        .run(&strategy, |command| {
            let verdict = evaluate(&host.request(&command), &policy);
            prop_assert!(verdict.analysis_ok || verdict.decision != Decision::Allow);
            Ok(())
        })
        .unwrap();
}

#[test]
fn analyzer_never_panics_on_arbitrary_strings() {
    run_shell(&standard_host(), any::<String>());
}

#[test]
fn analyzer_never_panics_on_shell_like_strings() {
    run_shell(&standard_host(), "[a-z $'\"`(){};|&<>\\\\\n=*?~./-]{0,64}");
}

#[test]
fn argv_requests_never_panic() {
    let host = standard_host();
    let policy = host.policy(STANDARD_ALLOWLIST);
    let mut runner = TestRunner::new(Config::with_cases(512));
    runner
        .run(&proptest::collection::vec(any::<String>(), 0..6), |argv| {
            let request = ExecRequest {
                command: ExecCommand::Argv(argv),
                ..host.request("")
            };
            let _ = evaluate(&request, &policy);
            Ok(())
        })
        .unwrap();
}
