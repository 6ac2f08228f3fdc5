//! Request environment variables that make any program run code of the caller's choosing.

use std::collections::{BTreeMap, BTreeSet};

use super::evaluation::{Reason, Rule, SatisfiedBy};
use super::segment::SegmentOutcome;

/// Variables a loader, shell, interpreter or common tool executes or loads code from, or runs
/// as a command. A request that sets one is not auto-allowed: the variable reaches whatever
/// program runs, so a person decides.
const CODE_INJECTING: &[&str] = &[
    // Where tools read their dotfiles and code from: `~/.gitconfig` (`core.fsmonitor`),
    // `~/.jq` (definitions any jq filter can call), shells' rc files.
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "ZDOTDIR",
    "JQ_LIBRARY_PATH",
    "CURL_HOME",
    "WGETRC",
    // make reads options (`--eval=$(shell …)`) and makefiles from these.
    "MAKEFLAGS",
    "MFLAGS",
    "MAKEFILES",
    "TAR_OPTIONS",
    "RSYNC_RSH",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC",
    "RUSTDOC",
    "PYTHONWARNINGS",
    "PYTHONINSPECT",
    "PYTHONBREAKPOINT",
    "PERL5DB",
    "PERLDB_OPTS",
    "BUNDLE_GEMFILE",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "IFS",
    "PERL5OPT",
    "RUBYOPT",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_PRESERVE_SYMLINKS",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
    // Run as commands by git, less, man and anything that opens an editor or a pager.
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
];

/// Prefixes of whole families: the dynamic loader's (`LD_LIBRARY_PATH` swaps in any library),
/// and git's, whose configuration, hooks, helpers and repository location all come from the
/// environment (`GIT_CONFIG_COUNT` with `core.fsmonitor` runs a command on `git status`).
const CODE_INJECTING_PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "BASH_FUNC_",
    "GIT_",
    // Cargo's (`CARGO_TARGET_<triple>_RUNNER`, `CARGO_BUILD_RUSTC_WRAPPER`) and pip's, yarn's
    // and pnpm's configuration.
    "CARGO_",
    "PIP_",
    "YARN_",
    "PNPM_",
];

/// npm's configuration variables' prefix, matched without regard to case as npm does.
const NPM_CONFIG: &str = "npm_config_";

/// Members of those families that only label work: a commit's author and committer.
const HARMLESS: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
];

/// The first code-injecting variable the requester set, if any; variables the host filled in
/// from its own environment are its own settings.
pub(crate) fn code_injecting_variable<'a>(
    env: &'a BTreeMap<String, String>,
    inherited: &BTreeSet<String>,
) -> Option<&'a str> {
    env.keys()
        .filter(|key| !inherited.contains(*key))
        .map(String::as_str)
        .find(|key| {
            CODE_INJECTING.contains(key)
            || (CODE_INJECTING_PREFIXES
                .iter()
                .any(|prefix| key.starts_with(prefix))
                && !HARMLESS.contains(key))
            // npm reads its whole configuration (`call`, `script-shell`, …) from these, in
            // any case.
            || key
                .get(..NPM_CONFIG.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(NPM_CONFIG))
        })
}

/// Withdraws every auto-allow except shell builtins: the variable reaches whatever program runs.
pub(crate) fn refuse_all(outcomes: &mut [SegmentOutcome], variable: &str) {
    for outcome in outcomes {
        let evaluation = &mut outcome.evaluation;
        if matches!(evaluation.satisfied_by, Some(SatisfiedBy::Builtin) | None) {
            continue;
        }
        evaluation.satisfied_by = None;
        evaluation.reason = Reason::new(
            Rule::EnvAssignment,
            format!(
                "the request environment sets `{variable}`, which makes programs load or run other code"
            ),
        );
    }
}
