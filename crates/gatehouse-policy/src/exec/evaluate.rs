//! The request-level decision: analysis, per-segment outcomes, then `security` × `ask`.

use super::allowlist;
use super::command_text::display_argv;
use super::environment;
use super::evaluation::{Decision, ExecEvaluation, Reason, Rule};
use super::parse::{ParsedSegment, Word, parse_shell};
use super::policy::ExecPolicy;
use super::request::{ExecCommand, ExecRequest};
use super::resolve::Resolver;
use super::safe_bins::SafeBins;
use super::segment::{Checker, SegmentOutcome};
use crate::modes::Security;
use crate::requirement::{ApprovalFacts, durable_approval_satisfied, requires_approval};

/// Evaluates one request against one policy. Pure apart from reading the filesystem to resolve
/// executables; never panics on any input.
pub fn evaluate(request: &ExecRequest, policy: &ExecPolicy) -> ExecEvaluation {
    let mut resolver = Resolver::new(&request.cwd, &request.env);
    let checker = Checker {
        policy,
        allowlist: allowlist::compile(&policy.allowlist, resolver.home()),
        safe_bins: SafeBins::new(
            &policy.safe_bins,
            &policy.safe_bin_profiles,
            &policy.safe_bin_trusted_dirs,
        ),
    };
    let (parsed, shell_mode) = match &request.command {
        ExecCommand::Shell(source) => (parse_shell(source), true),
        ExecCommand::Argv(argv) => (argv_segment(argv), false),
    };
    let mut outcomes = Vec::new();
    let analysis = parsed.and_then(|segments| {
        segments.iter().try_for_each(|segment| {
            checker.check(segment, &mut resolver, shell_mode, 0, &mut outcomes)
        })
    });
    let env_refusal = environment::refusal(
        &request.env,
        &request.inherited,
        &policy.safe_bin_trusted_dirs,
    );
    if let Some(reason) = &env_refusal {
        environment::refuse_all(&mut outcomes, reason);
    }
    let warnings = checker.allowlist.warnings.clone();
    // An exact-command approval was given for the text in the environment a person saw; the
    // same text with a variable of the requester's is another command.
    let exact = has_exact_approval(request, policy);
    let durable = exact && env_refusal.is_none();
    let mut evaluation = match analysis {
        Ok(()) => decide(policy, outcomes, durable, warnings),
        Err(reason) => analysis_failed(policy, reason, durable, warnings),
    };
    if let Some(reason) = env_refusal.filter(|_| exact && evaluation.decision != Decision::Allow) {
        evaluation.reason = reason;
    }
    if let ExecCommand::Argv(argv) = &request.command {
        evaluation.program_on_path = argv.first().and_then(|word| resolver.found_on_path(word));
    }
    evaluation
}

/// Whether the allowlist holds an `=command:` entry for this exact command text.
fn has_exact_approval(request: &ExecRequest, policy: &ExecPolicy) -> bool {
    let any_exact = policy
        .allowlist
        .iter()
        .any(|entry| entry.pattern.trim_start().starts_with("=command:"));
    if !any_exact {
        return false;
    }
    let text = match &request.command {
        ExecCommand::Shell(source) => source.clone(),
        ExecCommand::Argv(argv) => display_argv(argv),
    };
    durable_approval_satisfied(&text, policy.allowlist.iter().map(|e| e.pattern.as_str()))
}

/// A direct argv is one segment; every word is literal.
fn argv_segment(argv: &[String]) -> Result<Vec<ParsedSegment>, Reason> {
    match argv.first() {
        Some(first) if !first.trim().is_empty() => Ok(vec![ParsedSegment {
            assignments: Vec::new(),
            words: Word::direct_argv(argv),
            stdin_piped: false,
            span: 0..0,
        }]),
        _ => Err(Reason::new(Rule::EmptyCommand, "the argv has no program")),
    }
}

fn analysis_failed(
    policy: &ExecPolicy,
    reason: Reason,
    durable: bool,
    warnings: Vec<String>,
) -> ExecEvaluation {
    let requires = requires_approval(facts(policy, false, false, durable));
    let (decision, reason) = match policy.security {
        Security::Deny => (Decision::Deny, security_deny()),
        _ if requires => (Decision::Ask, reason),
        _ if durable => (Decision::Allow, exact_approval()),
        Security::Full => (
            Decision::Allow,
            Reason::new(Rule::SecurityFull, format!("security is full ({reason})")),
        ),
        Security::Allowlist => (Decision::Deny, reason),
    };
    ExecEvaluation {
        decision,
        analysis_ok: false,
        allowlist_satisfied: false,
        requires_approval: requires,
        reason,
        segments: Vec::new(),
        allow_always_patterns: Vec::new(),
        warnings,
        program_on_path: None,
    }
}

fn decide(
    policy: &ExecPolicy,
    outcomes: Vec<SegmentOutcome>,
    durable: bool,
    warnings: Vec<String>,
) -> ExecEvaluation {
    let satisfied = outcomes.iter().all(|o| o.evaluation.satisfied_by.is_some());
    let strict_hit = policy.strict_inline_eval && outcomes.iter().any(|o| o.inline_eval);
    let requires = requires_approval(facts(policy, true, satisfied, durable)) || strict_hit;
    let first_miss = outcomes
        .iter()
        .find(|o| o.evaluation.satisfied_by.is_none())
        .map(|o| o.evaluation.reason.clone());
    let (decision, reason) = match policy.security {
        Security::Deny => (Decision::Deny, security_deny()),
        _ if strict_hit => (
            Decision::Ask,
            Reason::new(
                Rule::InlineEval,
                "strictInlineEval: inline interpreter code always needs approval",
            ),
        ),
        _ if requires => match first_miss {
            Some(miss) => (Decision::Ask, miss),
            None => (
                Decision::Ask,
                Reason::new(
                    Rule::AskAlways,
                    "ask is always: every command needs approval",
                ),
            ),
        },
        Security::Full => (
            Decision::Allow,
            Reason::new(Rule::SecurityFull, "security is full"),
        ),
        Security::Allowlist if durable && first_miss.is_some() => {
            (Decision::Allow, exact_approval())
        }
        Security::Allowlist => match first_miss {
            None => (
                Decision::Allow,
                Reason::new(Rule::AllowlistSatisfied, "every segment is satisfied"),
            ),
            Some(miss) => (Decision::Deny, miss),
        },
    };
    let mut patterns: Vec<String> = Vec::new();
    for pattern in outcomes.iter().filter_map(|o| o.persist.clone()) {
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
    }
    ExecEvaluation {
        decision,
        analysis_ok: true,
        allowlist_satisfied: satisfied,
        requires_approval: requires,
        reason,
        segments: outcomes.into_iter().map(|o| o.evaluation).collect(),
        allow_always_patterns: patterns,
        warnings,
        program_on_path: None,
    }
}

fn facts(
    policy: &ExecPolicy,
    analysis_ok: bool,
    allowlist_satisfied: bool,
    durable: bool,
) -> ApprovalFacts {
    ApprovalFacts {
        security: policy.security,
        ask: policy.ask,
        analysis_ok,
        allowlist_satisfied,
        durable_approval_satisfied: durable,
    }
}

fn exact_approval() -> Reason {
    Reason::new(
        Rule::ExactCommandApproval,
        "a stored approval covers exactly this command text",
    )
}

fn security_deny() -> Reason {
    Reason::new(Rule::SecurityDeny, "security is deny: no command runs")
}
