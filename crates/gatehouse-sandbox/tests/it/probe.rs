//! `gatehouse doctor`'s check, on this host.

use gatehouse_sandbox::{BwrapBinary, probe};

#[test]
fn finds_bubblewrap_and_starts_a_sandbox_here() {
    let path = std::env::var_os("PATH");
    let report = probe(&BwrapBinary::OnPath, path.as_deref());
    assert!(report.is_ok(), "{report}");
    let bwrap = report.bubblewrap.as_ref().unwrap();
    assert!(bwrap.version.split('.').count() >= 2, "{}", bwrap.version);
    let shown = report.to_string();
    assert!(
        shown.starts_with(&format!("bubblewrap {} at ", bwrap.version)),
        "{shown}"
    );
    assert!(shown.ends_with("; a sandbox starts here"), "{shown}");
}

#[test]
fn a_configured_path_that_is_not_bubblewrap_is_reported() {
    let report = probe(&BwrapBinary::At("/bin/true".into()), None);
    assert!(!report.is_ok());
    assert_eq!(report.namespaces, None);
    assert!(
        report
            .to_string()
            .contains("does not answer like bubblewrap"),
        "{report}"
    );
}
