//! Request environment variables that make any program run code of the caller's choosing.

use std::collections::BTreeMap;

use super::evaluation::{Reason, Rule, SatisfiedBy};
use super::segment::SegmentOutcome;

/// Variables a loader, shell or interpreter executes or loads code from. They are never set in a
/// normal environment, so their presence in a request is treated as an injection attempt.
const CODE_INJECTING: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
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
];

/// The first code-injecting variable in the request environment, if any.
pub(crate) fn code_injecting_variable(env: &BTreeMap<String, String>) -> Option<&str> {
    env.keys()
        .map(String::as_str)
        .find(|key| CODE_INJECTING.contains(key) || key.starts_with("BASH_FUNC_"))
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
