//! `doctor`'s account of what an allowlist trusts: for each allowlisted program the policy
//! has a profile for, the files and settings that decide what it runs (git trusts the
//! repository's hooks and config) and what still asks a person; for each carrier, that its
//! entry never lets what it carries run unjudged (docs/policy.md §3, §4).

use std::path::Path;

use gatehouse_policy::exec::{AllowlistEntry, carriers, program_trust};

/// One line per fact about an entry's program; none for entries naming no single program
/// (globs, exact-command entries).
pub(crate) fn allowlist_trust(allowlist: &[AllowlistEntry]) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in allowlist {
        let Some(name) = program_name(&entry.pattern) else {
            continue;
        };
        let pattern = &entry.pattern;
        for trust in program_trust().filter(|trust| trust.programs.contains(&name.as_str())) {
            lines.push(format!(
                "allowlisted {pattern} trusts {}; a person is still asked for {}",
                trust.trusts, trust.asks
            ));
        }
        for carrier in carriers().filter(|carrier| carrier.program == name) {
            let when = if carrier.subcommands.is_empty() {
                String::new()
            } else {
                format!(" with {}", carrier.subcommands.join("|"))
            };
            lines.push(format!(
                "allowlisted {pattern} is a carrier ({}{when}): what it carries is never allowed \
                 by this entry, a person is asked",
                carrier.runs
            ));
        }
    }
    lines
}

/// The program an entry names, lower case, when its last component is a plain name.
fn program_name(pattern: &str) -> Option<String> {
    if pattern.starts_with('=') {
        return None;
    }
    let name = Path::new(pattern).file_name()?.to_str()?;
    let glob = name.contains(['*', '?', '[', ']', '{', '}', '\\']);
    (!glob).then(|| name.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_git_trusts_and_that_sudo_carries() {
        let lines = allowlist_trust(&[
            AllowlistEntry::new("/usr/bin/git"),
            AllowlistEntry::new("/usr/bin/sudo"),
            AllowlistEntry::new("/usr/bin/docker"),
            AllowlistEntry::new("/opt/tools/*"),
            AllowlistEntry::new("/usr/bin/ls"),
        ]);
        assert!(
            lines
                .iter()
                .any(|line| line.starts_with("allowlisted /usr/bin/git trusts ")
                    && line.contains("hooks")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|line| line.starts_with("allowlisted /usr/bin/sudo is a carrier (")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(
                |line| line.starts_with("allowlisted /usr/bin/docker is a carrier (")
                    && line.contains(" with ")
            ),
            "{lines:?}"
        );
        assert!(!lines.iter().any(|line| line.contains("/opt/tools")));
        assert!(!lines.iter().any(|line| line.contains("/usr/bin/ls")));
    }
}
