//! What `evaluate` answers: the decision, the facts it rests on and, per segment, the rule that
//! decided it.

use std::fmt;
use std::path::PathBuf;

use super::policy::AllowlistEntry;

/// The verdict for one request.
///
/// Ordered from least to most restrictive, so combining verdicts is a `max`: the strictest wins
/// without if-chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// Runs without asking anyone.
    Allow,
    /// Runs only after a person approves it.
    Ask,
    /// Never runs.
    Deny,
}

impl Decision {
    /// The wire spelling (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which mechanism let a segment run without a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SatisfiedBy {
    /// An allowlist entry matched the resolved executable path.
    Allowlist,
    /// A stdin-only safe bin, called within its profile, from a trusted directory.
    SafeBins,
    /// A trusted skill binary under `autoAllowSkills`.
    Skills,
    /// A shell builtin with no effect outside the shell (`cd`, `true`, ...).
    Builtin,
}

impl SatisfiedBy {
    /// The wire spelling (`allowlist`, `safeBins`, `skills`, `builtin`).
    pub fn as_str(self) -> &'static str {
        match self {
            SatisfiedBy::Allowlist => "allowlist",
            SatisfiedBy::SafeBins => "safeBins",
            SatisfiedBy::Skills => "skills",
            SatisfiedBy::Builtin => "builtin",
        }
    }

    /// Reads [`SatisfiedBy::as_str`]'s spelling back (a stored approval summary's).
    pub fn parse(text: &str) -> Option<Self> {
        [
            SatisfiedBy::Allowlist,
            SatisfiedBy::SafeBins,
            SatisfiedBy::Skills,
            SatisfiedBy::Builtin,
        ]
        .into_iter()
        .find(|by| by.as_str() == text)
    }
}

/// The rule behind an outcome. Every refusal names one, so a person reading a denial knows
/// which rule to look up in `docs/policy.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `security: deny`: nothing runs.
    SecurityDeny,
    /// `security: full`: analysis does not gate the run.
    SecurityFull,
    /// `ask: always`: every command goes to a person.
    AskAlways,
    /// Every segment was satisfied.
    AllowlistSatisfied,
    /// An `=command:<hash>` allowlist entry approves exactly this command text.
    ExactCommandApproval,
    /// Some segment was not satisfied (see the segment's own rule).
    AllowlistMiss,
    /// The command is empty or only whitespace.
    EmptyCommand,
    /// The command is longer than the analyzer accepts.
    TooLong,
    /// The bash grammar reported an error or a missing token.
    SyntaxError,
    /// A syntax node that is not on the allow-list of understood constructs.
    UnsupportedSyntax,
    /// `>`, `>>`, `<`, `2>`, `&>`, `<>`, fd duplication.
    Redirection,
    /// `$(…)` or backticks, also inside double quotes.
    CommandSubstitution,
    /// `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// Here-documents and here-strings.
    Heredoc,
    /// `( … )`.
    Subshell,
    /// `{ …; }`.
    BraceGroup,
    /// `name() { … }`.
    FunctionDefinition,
    /// `if`, `for`, `while`, `until`, `case`, `select`, `[[ … ]]`.
    ControlFlow,
    /// `$(( … ))`, `(( … ))`, `$[ … ]`.
    Arithmetic,
    /// A backslash-newline anywhere in the command.
    LineContinuation,
    /// `$X`, `${X}`, `$IFS`… in command position or in a safe-bin segment.
    ParameterExpansion,
    /// An operator other than `|`, `&&`, `||`, `;`, `&` (such as `|&`).
    UnsupportedOperator,
    /// `eval`, `source`, `.`, `exec`, `alias`, `trap`, `builtin`, `command` and similar.
    ShellCarrier,
    /// Leading `VAR=value` assignments, which can change what a program does.
    EnvAssignment,
    /// A wrapper that is not transparent (`sudo`, `env -S`, `script`, unknown options…).
    WrapperRefused,
    /// Shell or wrapper nesting deeper than the analyzer follows.
    TooDeep,
    /// A shell running inline code is approved only as an exact command.
    ShellPayload,
    /// A multiplexer (`busybox`, `toybox`) without a shell applet.
    MultiplexerApplet,
    /// The program did not resolve to an executable.
    Unresolved,
    /// No allowlist entry matched the resolved path.
    NoAllowlistMatch,
    /// A safe bin called outside its profile, or from an untrusted directory.
    SafeBinRefused,
    /// An interpreter or carrier running inline code (`python -c`, `awk '…'`, `find -exec`).
    InlineEval,
    /// An option, subcommand or config file that makes an allowlisted program run a program or
    /// code of the caller's choosing (`git -c alias.x='!cmd'`, `ssh -o ProxyCommand=…`).
    ProgramOption,
}

impl Rule {
    /// A stable kebab-case id for the rule, used in reasons and in `docs/policy.md`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::SecurityDeny => "security-deny",
            Rule::SecurityFull => "security-full",
            Rule::AskAlways => "ask-always",
            Rule::AllowlistSatisfied => "allowlist-satisfied",
            Rule::ExactCommandApproval => "exact-command-approval",
            Rule::AllowlistMiss => "allowlist-miss",
            Rule::EmptyCommand => "empty-command",
            Rule::TooLong => "too-long",
            Rule::SyntaxError => "syntax-error",
            Rule::UnsupportedSyntax => "unsupported-syntax",
            Rule::Redirection => "redirection",
            Rule::CommandSubstitution => "command-substitution",
            Rule::ProcessSubstitution => "process-substitution",
            Rule::Heredoc => "heredoc",
            Rule::Subshell => "subshell",
            Rule::BraceGroup => "brace-group",
            Rule::FunctionDefinition => "function-definition",
            Rule::ControlFlow => "control-flow",
            Rule::Arithmetic => "arithmetic",
            Rule::LineContinuation => "line-continuation",
            Rule::ParameterExpansion => "parameter-expansion",
            Rule::UnsupportedOperator => "unsupported-operator",
            Rule::ShellCarrier => "shell-carrier",
            Rule::EnvAssignment => "env-assignment",
            Rule::WrapperRefused => "wrapper-refused",
            Rule::TooDeep => "too-deep",
            Rule::ShellPayload => "shell-payload",
            Rule::MultiplexerApplet => "multiplexer-applet",
            Rule::Unresolved => "unresolved",
            Rule::NoAllowlistMatch => "no-allowlist-match",
            Rule::SafeBinRefused => "safe-bin-refused",
            Rule::InlineEval => "inline-eval",
            Rule::ProgramOption => "program-option",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule plus the detail a person needs ("redirection: `>` writes to a file").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reason {
    /// The rule that produced the outcome.
    pub rule: Rule,
    /// What in this command triggered it.
    pub detail: String,
}

impl Reason {
    /// A reason with its detail.
    pub fn new(rule: Rule, detail: impl Into<String>) -> Self {
        Reason {
            rule,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            write!(f, "{}", self.rule)
        } else {
            write!(f, "{}: {}", self.rule, self.detail)
        }
    }
}

/// A wrapper, shell or package runner the policy looked through to judge the program it starts.
///
/// Recognised by its name alone, as OpenClaw does, so it is not judged itself: an executor must
/// make sure it is the system's own tool before running the segment (`system.run` requires a
/// trusted directory; see `docs/policy.md`, section 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookedThrough {
    /// The word as written (`env`, `./env`, `bash`).
    pub word: String,
    /// Where it resolved, as the program word would; `None` when it did not resolve.
    pub resolved_path: Option<PathBuf>,
}

/// One segment of a chain (`a | b && c` has three), after unwrapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentEvaluation {
    /// The segment's words after quote removal, wrappers included.
    pub argv: Vec<String>,
    /// The words the program that really runs is started with, the wrappers looked through
    /// left out (`nice -n 5 rg x`: `rg x`; `bash run.sh a`: all of it, since the shell runs
    /// the script). Equal to `argv` when nothing was looked through.
    pub program_argv: Vec<String>,
    /// The absolute, symlink-resolved path of the program that really runs, if it resolved.
    pub resolved_path: Option<PathBuf>,
    /// What satisfied the segment; `None` means a person must decide (or it is denied).
    pub satisfied_by: Option<SatisfiedBy>,
    /// The allowlist entry that satisfied it (with `satisfied_by` `allowlist`), so whoever runs
    /// the command can record the entry's use (`lastUsedAt`).
    pub allowlist_entry: Option<AllowlistEntry>,
    /// Why the segment was or was not satisfied.
    pub reason: Reason,
    /// What runs before the program, outermost first (for `sh -c` payloads, the outer
    /// segment's wrappers and shell come first).
    pub looked_through: Vec<LookedThrough>,
}

/// Everything `evaluate` found, so callers never re-derive a fact the decision rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecEvaluation {
    /// The verdict.
    pub decision: Decision,
    /// The command parsed and every construct in it is understood.
    pub analysis_ok: bool,
    /// Analysis succeeded and every segment is satisfied.
    pub allowlist_satisfied: bool,
    /// A person must approve before the command runs.
    pub requires_approval: bool,
    /// Why the decision came out this way.
    pub reason: Reason,
    /// Per-segment outcomes, in command order; empty when analysis failed before segmenting.
    pub segments: Vec<SegmentEvaluation>,
    /// The allowlist patterns an "allow always" answer would persist; empty when nothing
    /// reusable may be stored.
    pub allow_always_patterns: Vec<String>,
    /// Non-fatal findings for operators, such as ignored basename-only allowlist entries.
    pub warnings: Vec<String>,
    /// For an argv whose program is a bare name: the file on `PATH` it was found at, as
    /// `execvp` opens it (the entry joined with the name, symlinks kept). An executor spawns
    /// and binds this file without a second `PATH` search, which costs a path lookup per entry.
    pub program_on_path: Option<PathBuf>,
}
