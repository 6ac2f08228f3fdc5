//! Feeds arbitrary bytes to the exec analyzer, as a shell string and as an argv, under a
//! policy that allowlists everything a path glob can, and checks the one invariant that must
//! hold for every input: what could not be analyzed is never allowed.

#![no_main]

use gatehouse_policy::exec::{
    AllowlistEntry, Decision, ExecCommand, ExecPolicy, ExecRequest, evaluate,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let policy = ExecPolicy {
        allowlist: vec![AllowlistEntry::new("/**")],
        ..ExecPolicy::default()
    };
    // The host's PATH and HOME (as the gateway fills them in), so the analysis itself decides.
    let mut request = ExecRequest::shell(text, "/tmp")
        .with_inherited_env("PATH", "/usr/bin:/bin")
        .with_inherited_env("HOME", "/tmp");
    let verdict = evaluate(&request, &policy);
    assert!(verdict.analysis_ok || verdict.decision != Decision::Allow);

    request.command = ExecCommand::Argv(text.split('\0').map(str::to_owned).collect());
    let _ = evaluate(&request, &policy);
});
