//! What a person approving a command must see: every program the chain runs (not only the
//! first), where each resolved and what it was looked through, the request's own environment
//! variables, and the exact patterns an allow-always answer would store. Every approval surface
//! (Control UI, chat cards, CLI) renders this one summary, so none of them shows less.

use std::path::PathBuf;

use super::evaluation::{ExecEvaluation, SatisfiedBy};
use super::request::ExecRequest;

/// One program of the chain as an approver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramLine {
    /// The words the program runs with (wrappers left out: they are in `looked_through`).
    pub argv: Vec<String>,
    /// Where it resolved; `None` for a shell builtin or a name that resolves nowhere.
    pub resolved_path: Option<PathBuf>,
    /// What it runs through, outermost first, each with where it resolved (as written when it
    /// did not resolve).
    pub looked_through: Vec<String>,
    /// What lets it run without a person; `None` when a person decides.
    pub satisfied_by: Option<SatisfiedBy>,
    /// The rule and detail for it (`no-allowlist-match: …`).
    pub reason: String,
}

/// Everything an approval surface shows for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalSummary {
    /// Every segment of the chain, in order.
    pub programs: Vec<ProgramLine>,
    /// The names (never the values, which may be secrets) of the variables the requester set.
    pub env_names: Vec<String>,
    /// The exact allowlist patterns allow-always would store; empty when it stores nothing.
    pub allow_always_patterns: Vec<String>,
}

/// The summary of one evaluated request.
pub fn approval_summary(request: &ExecRequest, evaluation: &ExecEvaluation) -> ApprovalSummary {
    let programs = evaluation
        .segments
        .iter()
        .map(|segment| ProgramLine {
            argv: segment.program_argv.clone(),
            resolved_path: segment.resolved_path.clone(),
            looked_through: segment
                .looked_through
                .iter()
                .map(|wrapper| match &wrapper.resolved_path {
                    Some(path) => path.display().to_string(),
                    None => wrapper.word.clone(),
                })
                .collect(),
            satisfied_by: segment.satisfied_by,
            reason: segment.reason.to_string(),
        })
        .collect();
    ApprovalSummary {
        programs,
        env_names: request
            .env
            .keys()
            .filter(|key| !request.inherited.contains(*key))
            .cloned()
            .collect(),
        allow_always_patterns: evaluation.allow_always_patterns.clone(),
    }
}

impl ApprovalSummary {
    /// Plain-text lines for a chat card or the CLI: one per program, then the variables and
    /// what allow-always stores.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .programs
            .iter()
            .enumerate()
            .map(|(index, program)| {
                let path = program
                    .resolved_path
                    .as_ref()
                    .map_or_else(|| "unresolved".to_owned(), |p| p.display().to_string());
                let through = if program.looked_through.is_empty() {
                    String::new()
                } else {
                    format!(" via {}", program.looked_through.join(" → "))
                };
                let verdict = program
                    .satisfied_by
                    .map_or("needs a person", |by| by.as_str());
                format!(
                    "{}. {} [{path}{through}] — {verdict}",
                    index + 1,
                    program.argv.join(" ")
                )
            })
            .collect();
        if !self.env_names.is_empty() {
            lines.push(format!("environment: {}", self.env_names.join(", ")));
        }
        lines.push(if self.allow_always_patterns.is_empty() {
            "allow-always stores nothing (approve this exact command)".to_owned()
        } else {
            format!(
                "allow-always stores: {}",
                self.allow_always_patterns.join(", ")
            )
        });
        lines
    }
}
