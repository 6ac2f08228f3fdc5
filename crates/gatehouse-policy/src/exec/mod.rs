//! Exec security: may this shell command run on this host without a person?
//!
//! The pipeline is parse → segment → unwrap → resolve → match, and every stage fails closed:
//! what it does not understand becomes a refusal that names its [`Rule`].

mod command_text;
mod evaluation;
mod policy;
mod request;
mod shells;

pub use command_text::{NodeCommandText, display_argv, node_command_text};
pub use evaluation::{Decision, ExecEvaluation, Reason, Rule, SatisfiedBy, SegmentEvaluation};
pub use policy::{
    AllowlistEntry, DEFAULT_SAFE_BIN_TRUSTED_DIRS, DEFAULT_SAFE_BINS, ExecPolicy, SafeBinProfile,
    SkillBin,
};
pub use request::{ExecCommand, ExecRequest};

/// Evaluates one request against one policy. Pure apart from reading the filesystem to resolve
/// executables; never panics on any input.
pub fn evaluate(request: &ExecRequest, policy: &ExecPolicy) -> ExecEvaluation {
    let _ = (request, policy);
    ExecEvaluation {
        decision: Decision::Deny,
        analysis_ok: false,
        allowlist_satisfied: false,
        requires_approval: false,
        reason: Reason::new(Rule::UnsupportedSyntax, "analysis not implemented yet"),
        segments: Vec::new(),
        allow_always_patterns: Vec::new(),
        warnings: Vec::new(),
    }
}
