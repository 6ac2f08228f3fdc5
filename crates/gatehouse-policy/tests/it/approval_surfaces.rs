//! What approval surfaces get from the policy crate (issue 29, class 4): every program of a
//! chain, the request's variable names, what allow-always stores, and whether a display text
//! shows what runs.

use gatehouse_policy::exec::{SatisfiedBy, approval_summary, evaluate, node_command_text};

use crate::support::{Host, STANDARD_ALLOWLIST, standard_host};

#[test]
fn lists_every_program_of_a_chain_the_env_names_and_the_patterns() {
    let host = standard_host();
    let policy = host.policy(&["git"]);
    let request = host
        .request("git status && nice rg needle | head -n 3; sh -c 'ls'")
        .with_env("CI", "1")
        .with_env("API_TOKEN", "secret-value");
    let evaluation = evaluate(&request, &policy);
    let summary = approval_summary(&request, &evaluation);
    let argvs: Vec<String> = summary.programs.iter().map(|p| p.argv.join(" ")).collect();
    assert_eq!(argvs, ["git status", "rg needle", "head -n 3", "ls"]);
    // The requester's API_TOKEN withdraws every auto-allow; the line says why.
    assert_eq!(summary.programs[0].satisfied_by, None);
    assert!(
        summary.programs[0].reason.contains("API_TOKEN"),
        "{}",
        summary.programs[0].reason
    );
    let plain = host.request("git status");
    let plain = approval_summary(&plain, &evaluate(&plain, &policy));
    assert_eq!(plain.programs[0].satisfied_by, Some(SatisfiedBy::Allowlist));
    assert_eq!(summary.programs[1].looked_through, [host.bin("nice")]);
    assert_eq!(summary.programs[3].looked_through, [host.bin("sh")]);
    assert_eq!(summary.env_names, ["API_TOKEN", "CI"]);
    assert_eq!(
        summary.allow_always_patterns,
        evaluation.allow_always_patterns
    );
    let lines = summary.lines();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[1].starts_with("2. rg needle ["), "{}", lines[1]);
    assert!(lines[4].contains("API_TOKEN, CI") && !lines[4].contains("secret-value"));
    assert!(
        lines[5].starts_with("allow-always stores: "),
        "{}",
        lines[5]
    );
}

#[test]
fn says_when_allow_always_stores_nothing() {
    let host = Host::with_bins(&["python3"]);
    let policy = host.policy(STANDARD_ALLOWLIST);
    let request = host.request("python3 -c 'print(1)'");
    let summary = approval_summary(&request, &evaluate(&request, &policy));
    assert_eq!(
        summary.lines().last().map(String::as_str),
        Some("allow-always stores nothing (approve this exact command)")
    );
}

/// A display text naming only the payload of a shell the analysis treats as opaque hides what
/// runs; the gateway refuses such a `command` (`shows_what_runs`).
#[test]
fn denies_payload_only_display_text_for_an_opaque_shell() {
    let argv = |words: &[&str]| -> Vec<String> { words.iter().map(|w| (*w).to_owned()).collect() };
    let login = node_command_text(&argv(&["bash", "-lc", "make deploy"]), Some("make deploy"));
    assert!(login.valid && !login.shows_what_runs);
    let by_path = node_command_text(&argv(&["/bin/sh", "-c", "make"]), Some("make"));
    assert!(!by_path.shows_what_runs);
    let plain = node_command_text(&argv(&["sh", "-c", "make"]), Some("make"));
    assert!(plain.shows_what_runs);
}
