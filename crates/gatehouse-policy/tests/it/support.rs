//! A real temporary filesystem with executables, and a `check` helper over `exec::evaluate`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use gatehouse_policy::exec::{
    AllowlistEntry, Decision, ExecEvaluation, ExecPolicy, ExecRequest, Rule, evaluate,
};
use gatehouse_policy::{Ask, Security};

/// Writes an executable stub at `path` (creating parents).
pub(crate) fn write_executable(path: &Path) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A sandbox root with `bin/` on PATH holding the named programs, and a `work/` cwd.
pub(crate) struct Host {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
}

impl Host {
    pub(crate) fn with_bins(bins: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for bin in bins {
            write_executable(&root.join("bin").join(bin));
        }
        fs::create_dir_all(root.join("work")).unwrap();
        fs::create_dir_all(root.join("home")).unwrap();
        Host { _dir: dir, root }
    }

    pub(crate) fn bin(&self, name: &str) -> String {
        self.root.join("bin").join(name).display().to_string()
    }

    pub(crate) fn request(&self, command: &str) -> ExecRequest {
        ExecRequest::shell(
            command.replace("{root}", &self.root.display().to_string()),
            self.root.join("work"),
        )
        .with_inherited_env("PATH", self.root.join("bin").display().to_string())
        .with_inherited_env("HOME", self.root.join("home").display().to_string())
    }

    /// Allowlist security, ask off, these programs allowlisted by path, the bin dir trusted
    /// for safe bins.
    pub(crate) fn policy(&self, allowlisted: &[&str]) -> ExecPolicy {
        ExecPolicy {
            security: Security::Allowlist,
            ask: Ask::Off,
            safe_bin_trusted_dirs: vec![self.root.join("bin")],
            allowlist: allowlisted
                .iter()
                .map(|name| AllowlistEntry::new(self.bin(name)))
                .collect(),
            ..ExecPolicy::default()
        }
    }

    pub(crate) fn evaluate(&self, command: &str, policy: &ExecPolicy) -> ExecEvaluation {
        evaluate(&self.request(command), policy)
    }
}

/// What a `check` line expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Runs without a person.
    Allow,
    /// Analysis fails with this rule.
    Unanalyzable(Rule),
    /// Analysis succeeds but some segment is refused with this rule.
    Refused(Rule),
}

/// The standard host for the hand-written lists: common tools on PATH, a few allowlisted.
pub(crate) fn standard_host() -> Host {
    Host::with_bins(&[
        "ls", "cat", "echo", "git", "rg", "head", "tail", "jq", "grep", "sort", "wc", "tr", "cut",
        "uniq", "sh", "bash", "zsh", "env", "nice", "nohup", "timeout", "stdbuf", "sudo",
        "python3", "node", "awk", "sed", "find", "xargs", "curl", "rm", "busybox", "npx", "npm",
        "printf", "perl", "ruby", "php", "make", "time", "tee", "id", "whoami",
    ])
}

/// Allowlisted on the standard host: tools an operator would typically list.
pub(crate) const STANDARD_ALLOWLIST: &[&str] = &[
    "ls", "cat", "echo", "git", "rg", "python3", "node", "awk", "sed", "find", "xargs", "printf",
    "perl", "ruby", "php", "make",
];

/// Runs each `(command, expect)` line and reports every mismatch at once.
pub(crate) fn check(lines: &[(&str, Expect)]) {
    let host = standard_host();
    let mut policy = host.policy(STANDARD_ALLOWLIST);
    policy.safe_bins = [
        "jq", "cut", "uniq", "head", "tail", "tr", "wc", "grep", "sort",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut failures = Vec::new();
    for (command, expect) in lines {
        let verdict = host.evaluate(command, &policy);
        let actual = if !verdict.analysis_ok {
            Expect::Unanalyzable(verdict.reason.rule)
        } else if verdict.decision == Decision::Allow {
            Expect::Allow
        } else {
            Expect::Refused(verdict.reason.rule)
        };
        if actual != *expect {
            failures.push(format!(
                "{command:?}: expected {expect:?}, got {actual:?} ({})",
                verdict.reason
            ));
        }
        if *expect != Expect::Allow && verdict.decision == Decision::Allow {
            failures.push(format!("{command:?}: ALLOWED but must not be"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Asserts that each command runs without a person on this host under this policy.
pub(crate) fn assert_allowed(host: &Host, policy: &ExecPolicy, commands: &[&str]) {
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
