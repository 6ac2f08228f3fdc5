//! `security` × `ask` × analysis → decision, on real commands through `exec::evaluate`.

use gatehouse_policy::exec::{AllowlistEntry, Decision, ExecRequest, Rule, SatisfiedBy, evaluate};
use gatehouse_policy::requirement::exact_command_pattern;
use gatehouse_policy::{Ask, Security};

use crate::support::{Host, write_executable};

/// `(security, ask, command, decision, requires_approval)` with `ls` allowlisted.
fn check(lines: &[(Security, Ask, &str, Decision, bool)]) {
    let host = Host::with_bins(&["ls", "rm", "python3"]);
    let mut failures = Vec::new();
    for (security, ask, command, decision, requires) in lines {
        let mut policy = host.policy(&["ls", "python3"]);
        policy.security = *security;
        policy.ask = *ask;
        let verdict = host.evaluate(command, &policy);
        if verdict.decision != *decision || verdict.requires_approval != *requires {
            failures.push(format!(
                "{security}/{ask} {command:?}: expected {decision}/{requires}, got {}/{} ({})",
                verdict.decision, verdict.requires_approval, verdict.reason
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn composes_security_and_ask() {
    use Ask::*;
    use Decision::{Allow, Ask as Asks, Deny};
    use Security::*;
    check(&[
        (Allowlist, Off, "ls", Allow, false),
        (Allowlist, Off, "rm x", Deny, false),
        (Allowlist, OnMiss, "rm x", Asks, true),
        (Allowlist, OnMiss, "ls > x", Asks, true),
        (Allowlist, Always, "ls", Asks, true),
        (Full, Off, "rm x", Allow, false),
        (Full, Off, "ls > x", Allow, false),
        (Full, OnMiss, "rm x", Allow, false),
        (Full, Always, "ls", Asks, true),
        (Security::Deny, Off, "ls", Deny, false),
        (Security::Deny, Always, "ls", Deny, true),
    ]);
}

#[test]
fn strict_inline_eval_asks_even_with_ask_off_and_full_security() {
    let host = Host::with_bins(&["python3"]);
    for security in [Security::Allowlist, Security::Full] {
        let mut policy = host.policy(&["python3"]);
        policy.security = security;
        policy.strict_inline_eval = true;
        let verdict = host.evaluate("python3 -c 'print(1)'", &policy);
        assert_eq!(verdict.decision, Decision::Ask, "{security}");
        assert!(verdict.requires_approval);
        assert_eq!(verdict.reason.rule, Rule::InlineEval);
        assert!(verdict.allow_always_patterns.is_empty());
    }
}

#[test]
fn allows_an_exact_command_approval_for_that_text_only() {
    let host = Host::with_bins(&["rm"]);
    let mut policy = host.policy(&[]);
    policy.ask = Ask::OnMiss;
    policy
        .allowlist
        .push(AllowlistEntry::new(exact_command_pattern("rm build.log")));
    let approved = host.evaluate("rm build.log", &policy);
    assert_eq!(approved.decision, Decision::Allow);
    assert_eq!(approved.reason.rule, Rule::ExactCommandApproval);
    let other = host.evaluate("rm -rf /", &policy);
    assert_eq!(other.decision, Decision::Ask);
}

#[test]
fn reports_segments_with_resolved_paths_and_what_satisfied_them() {
    let host = Host::with_bins(&["ls", "head", "rm"]);
    let policy = host.policy(&["ls"]);
    let verdict = host.evaluate("cd /tmp && ls | head -n 1 && rm x", &policy);
    let summary: Vec<(Option<SatisfiedBy>, bool)> = verdict
        .segments
        .iter()
        .map(|s| (s.satisfied_by, s.resolved_path.is_some()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (Some(SatisfiedBy::Builtin), false),
            (Some(SatisfiedBy::Allowlist), true),
            (Some(SatisfiedBy::SafeBins), true),
            (None, true),
        ]
    );
    assert_eq!(verdict.reason.rule, Rule::NoAllowlistMatch);
    assert_eq!(
        verdict.allow_always_patterns,
        vec![host.bin("ls"), host.bin("head"), host.bin("rm")]
    );
}

#[test]
fn warns_about_basename_only_allowlist_entries() {
    let host = Host::with_bins(&["rg"]);
    let mut policy = host.policy(&[]);
    policy.allowlist.push(AllowlistEntry::new("rg"));
    let verdict = host.evaluate("rg x", &policy);
    assert_eq!(verdict.decision, Decision::Deny);
    assert_eq!(verdict.warnings.len(), 1);
    assert!(verdict.warnings[0].contains("bare name"));
}

#[test]
fn denies_when_the_request_environment_injects_code() {
    let host = Host::with_bins(&["ls"]);
    let policy = host.policy(&["ls"]);
    for variable in [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "BASH_ENV",
        "NODE_OPTIONS",
        "NODE_PRESERVE_SYMLINKS",
        "BASH_FUNC_ls%%",
        "GIT_CONFIG_COUNT",
        "GIT_SSH_COMMAND",
        "GIT_DIR",
        "PYTHONPATH",
        "PERL5LIB",
        "EDITOR",
        "LESSOPEN",
        "npm_config_call",
        "NPM_CONFIG_SCRIPT_SHELL",
        "HOME",
        "XDG_CONFIG_HOME",
        "MAKEFLAGS",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
    ] {
        let request = host.request("ls").with_env(variable, "/tmp/evil");
        let verdict = gatehouse_policy::exec::evaluate(&request, &policy);
        assert_eq!(verdict.decision, Decision::Deny, "{variable}");
        assert_eq!(verdict.reason.rule, Rule::EnvAssignment, "{variable}");
    }
    let benign = host
        .request("ls")
        .with_env("LANG", "C.UTF-8")
        .with_env("GIT_AUTHOR_NAME", "Agent");
    assert_eq!(
        gatehouse_policy::exec::evaluate(&benign, &policy).decision,
        Decision::Allow
    );
}

#[test]
fn resolves_package_runner_binaries_in_local_node_modules_only() {
    let host = Host::with_bins(&["npx", "pnpm", "tsc"]);
    let local = host.root.join("work/node_modules/.bin/tsc");
    crate::support::write_executable(&local);
    let mut policy = host.policy(&[]);
    policy
        .allowlist
        .push(AllowlistEntry::new(local.display().to_string()));
    policy.allowlist.push(AllowlistEntry::new(host.bin("tsc")));
    let verdict = host.evaluate("npx --yes tsc --noEmit", &policy);
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason);
    assert_eq!(
        verdict.allow_always_patterns,
        vec![local.display().to_string()]
    );
    // Not installed locally: npx would download a package, whatever PATH holds.
    let missing = host.evaluate("npx cowsay hi", &policy);
    assert_eq!(missing.reason.rule, Rule::Unresolved);
    let dlx = host.evaluate("pnpm dlx tsc", &policy);
    assert_eq!(dlx.reason.rule, Rule::WrapperRefused);
}

#[test]
fn trusts_skill_binaries_only_at_their_installed_path() {
    let host = Host::with_bins(&["gog"]);
    let mut policy = host.policy(&[]);
    policy.auto_allow_skills = true;
    policy.skill_bins.push(gatehouse_policy::exec::SkillBin {
        name: "gog".into(),
        resolved_path: host.root.join("bin/gog"),
    });
    let verdict = host.evaluate("gog calendar --today", &policy);
    assert_eq!(verdict.segments[0].satisfied_by, Some(SatisfiedBy::Skills));
    policy.skill_bins[0].resolved_path = host.root.join("elsewhere/gog");
    let moved = host.evaluate("gog calendar --today", &policy);
    assert_eq!(moved.decision, Decision::Deny);
}

#[test]
fn denies_path_entries_that_climb_out_of_a_symlink() {
    // `link/../bin` is `x/bin` for the kernel (link → x/y), not `bin` as text folding says.
    let host = Host::with_bins(&["rg"]);
    crate::support::write_executable(&host.root.join("x/bin/rg"));
    std::fs::create_dir_all(host.root.join("x/y")).unwrap();
    std::os::unix::fs::symlink(host.root.join("x/y"), host.root.join("link")).unwrap();
    let policy = host.policy(&["rg"]);
    let request = host
        .request("rg needle")
        .with_inherited_env("PATH", host.root.join("link/../bin").display().to_string());
    let verdict = gatehouse_policy::exec::evaluate(&request, &policy);
    assert_eq!(verdict.decision, Decision::Deny, "{}", verdict.reason);
    assert_eq!(
        verdict.segments[0].resolved_path,
        Some(host.root.join("x/bin/rg"))
    );
}

#[test]
fn resolves_a_symlinked_path_directory_to_its_real_location() {
    let host = Host::with_bins(&[]);
    crate::support::write_executable(&host.root.join("real/bin/rg"));
    std::os::unix::fs::symlink(host.root.join("real/bin"), host.root.join("linked-bin")).unwrap();
    let mut policy = host.policy(&[]);
    policy.allowlist = vec![gatehouse_policy::exec::AllowlistEntry::new(
        host.root.join("real/bin/rg").display().to_string(),
    )];
    // The host's PATH: one the requester set would need a person whatever it resolves to.
    let request = host
        .request("rg needle")
        .with_inherited_env("PATH", host.root.join("linked-bin").display().to_string());
    let verdict = gatehouse_policy::exec::evaluate(&request, &policy);
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason);
    assert_eq!(
        verdict.segments[0].resolved_path,
        Some(host.root.join("real/bin/rg"))
    );
}

#[test]
fn sees_a_repointed_path_directory_on_the_next_evaluation() {
    let host = Host::with_bins(&[]);
    crate::support::write_executable(&host.root.join("trusted/rg"));
    crate::support::write_executable(&host.root.join("other/rg"));
    let link = host.root.join("tools");
    std::os::unix::fs::symlink(host.root.join("trusted"), &link).unwrap();
    let mut policy = host.policy(&[]);
    policy.allowlist = vec![gatehouse_policy::exec::AllowlistEntry::new(
        host.root.join("trusted/rg").display().to_string(),
    )];
    let request = host
        .request("rg needle")
        .with_inherited_env("PATH", link.display().to_string());
    let before = gatehouse_policy::exec::evaluate(&request, &policy);
    assert_eq!(before.decision, Decision::Allow, "{}", before.reason);

    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(host.root.join("other"), &link).unwrap();
    let after = gatehouse_policy::exec::evaluate(&request, &policy);
    assert_ne!(after.decision, Decision::Allow, "{}", after.reason);
    assert_eq!(
        after.segments[0].resolved_path,
        Some(host.root.join("other/rg"))
    );
}

#[test]
fn in_a_direct_argv_only_the_program_word_reads_a_tilde_as_home() {
    let host = Host::with_bins(&["env"]);
    let home_tool = host.root.join("home/bin/tool");
    write_executable(&home_tool);
    let mut policy = host.policy(&["env"]);
    policy
        .allowlist
        .push(AllowlistEntry::new(home_tool.display().to_string()));
    let argv = |words: &[&str]| {
        ExecRequest::argv(words.iter().copied(), host.root.join("work"))
            .with_inherited_env("PATH", host.root.join("bin").display().to_string())
            .with_inherited_env("HOME", host.root.join("home").display().to_string())
    };
    // Hosts expand `~` in the program word, so the entry for HOME's tool covers it.
    let direct = evaluate(&argv(&["~/bin/tool"]), &policy);
    assert_eq!(direct.decision, Decision::Allow, "{}", direct.reason);
    // As an argument it reaches `env` as written, which runs `./~/bin/tool` from the cwd.
    let wrapped = evaluate(&argv(&["env", "~/bin/tool"]), &policy);
    assert_eq!(
        wrapped.segments[0].resolved_path,
        Some(host.root.join("work/~/bin/tool"))
    );
    assert_ne!(wrapped.decision, Decision::Allow);
}

#[test]
fn names_what_it_looked_through_on_the_way_to_each_program() {
    let host = Host::with_bins(&["env", "nice", "sh", "ls"]);
    write_executable(&host.root.join("work/env"));
    let policy = host.policy(&["ls"]);
    let verdict = host.evaluate("ls && ./env ls && sh -c 'nice ls'", &policy);
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason);
    let through: Vec<Vec<(String, Option<std::path::PathBuf>)>> = verdict
        .segments
        .iter()
        .map(|segment| {
            (segment.looked_through.iter())
                .map(|wrapper| (wrapper.word.clone(), wrapper.resolved_path.clone()))
                .collect()
        })
        .collect();
    let bin = |name: &str| (name.to_owned(), Some(host.root.join("bin").join(name)));
    assert_eq!(
        through,
        vec![
            vec![],
            vec![("./env".to_owned(), Some(host.root.join("work/env")))],
            vec![bin("sh"), bin("nice")],
        ]
    );
}

/// Probe report: reasons said "`xargs` runs xargs running a command", "`find` runs inline
/// interpreter code" and "`package runner --package=x`", naming neither the tool nor what it does.
#[test]
fn reasons_name_the_tool_and_what_it_runs() {
    let host = Host::with_bins(&["xargs", "find", "npx"]);
    let policy = host.policy(&["xargs", "find"]);
    let detail = |command: &str| host.evaluate(command, &policy).reason.detail;
    assert!(
        detail("xargs rm").contains("`xargs` runs a command built from its input"),
        "{}",
        detail("xargs rm")
    );
    assert!(detail("find . -exec rm {} ;").contains("`find` runs a command for every file"));
    assert!(detail("npx --package=x foo").contains("`npx --package=x`"));
}
