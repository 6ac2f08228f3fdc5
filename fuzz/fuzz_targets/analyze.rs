//! Feeds arbitrary bytes to the exec analyzer, as a shell string and as an argv, under a
//! policy that allowlists everything a path glob can, and checks the one invariant that must
//! hold for every input: what could not be analyzed is never allowed. Under the default safe
//! bins alone, a command allowed is allowed again, with as many segments, once its safe bins are
//! re-rendered for `sh -c` (`render_for_shell`).

#![no_main]

use gatehouse_policy::exec::{
    AllowlistEntry, Decision, ExecCommand, ExecPolicy, ExecRequest, evaluate, render_for_shell,
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

    let safe_bins_only = ExecPolicy::default();
    let verdict = evaluate(&request, &safe_bins_only);
    if verdict.decision == Decision::Allow {
        let mut rendered = request.clone();
        rendered.command = ExecCommand::Shell(render_for_shell(text, &verdict));
        let again = evaluate(&rendered, &safe_bins_only);
        assert_eq!(again.decision, Decision::Allow, "{:?}", rendered.command);
        assert_eq!(again.segments.len(), verdict.segments.len());
    }

    request.command = ExecCommand::Argv(text.split('\0').map(str::to_owned).collect());
    let _ = evaluate(&request, &policy);
});
