//! Exec security: may this shell command run on this host without a person?
//!
//! The pipeline is parse → segment → unwrap → resolve → match, and every stage fails closed:
//! what it does not understand becomes a refusal that names its [`Rule`].

mod allowlist;
mod approval_view;
mod carriers;
mod child_env;
mod command_text;
mod environment;
mod evaluate;
mod evaluation;
pub(crate) mod inline_eval;
pub(crate) mod options;
pub(crate) mod parse;
mod policy;
mod profiles;
mod render;
mod request;
mod resolve;
mod safe_bins;
mod segment;
mod shells;
pub(crate) mod unwrap;

pub use allowlist::ignored_entries as ignored_allowlist_entries;
pub use approval_view::{ApprovalSummary, ProgramLine, approval_summary};
pub use carriers::{Carrier, carriers};
pub use child_env::{
    FORCED_LOCALE, SHELL_STATE_VARIABLES, child_environment, effective_ctype, is_analysable_locale,
    is_shell_state_variable,
};
pub use command_text::{NodeCommandText, display_argv, node_command_text};
pub use evaluate::evaluate;
pub use evaluation::{
    Decision, ExecEvaluation, LookedThrough, Reason, Rule, SatisfiedBy, SegmentEvaluation,
};
pub use policy::{
    AllowlistEntry, DEFAULT_SAFE_BIN_TRUSTED_DIRS, DEFAULT_SAFE_BINS, ExecPolicy, SafeBinProfile,
    SkillBin,
};
pub use profiles::{ProgramTrust, program_trust};
pub use render::render_for_shell;
pub use request::{ExecCommand, ExecRequest};
pub use safe_bins::{has_builtin_profile, is_in_trusted_dir};
