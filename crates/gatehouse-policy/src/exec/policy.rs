//! The exec policy as plain data: what the config and the approvals file say, already merged.
//!
//! `gatehouse-config` builds this from OpenClaw's `tools.exec.*` keys and the approvals file;
//! this crate never reads config syntax.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::modes::{Ask, Security};

/// The safe bins used when `tools.exec.safeBins` is not configured.
pub const DEFAULT_SAFE_BINS: &[&str] = &["jq", "cut", "uniq", "head", "tail", "tr", "wc"];

/// Directories a safe bin may live in without configuration. `PATH` is never trusted
/// automatically, because an agent can prepend a directory holding its own `head`.
pub const DEFAULT_SAFE_BIN_TRUSTED_DIRS: &[&str] = &["/bin", "/usr/bin"];

/// Everything `evaluate` needs to decide, in one struct instead of a list of flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPolicy {
    /// `tools.exec.security`, already composed with the approvals file (stricter wins).
    pub security: Security,
    /// `tools.exec.ask`, already composed with the approvals file (more asking wins).
    pub ask: Ask,
    /// `tools.exec.safeBins`: names of stdin-only filters allowed without an allowlist entry.
    pub safe_bins: Vec<String>,
    /// `tools.exec.safeBinTrustedDirs`: added to [`DEFAULT_SAFE_BIN_TRUSTED_DIRS`].
    pub safe_bin_trusted_dirs: Vec<PathBuf>,
    /// `tools.exec.safeBinProfiles`: custom or overriding profiles, keyed by lower-case name.
    pub safe_bin_profiles: BTreeMap<String, SafeBinProfile>,
    /// `tools.exec.strictInlineEval`: inline interpreter code always needs a person.
    pub strict_inline_eval: bool,
    /// `tools.exec.autoAllowSkills`: trusted skill binaries run without an allowlist entry.
    pub auto_allow_skills: bool,
    /// `tools.exec.skillBins`: the skill binaries trusted by `auto_allow_skills`.
    pub skill_bins: Vec<SkillBin>,
    /// The agent's effective allowlist from the approvals file, in file order.
    pub allowlist: Vec<AllowlistEntry>,
}

impl Default for ExecPolicy {
    /// A cautious starting point for tests and embedders: allowlist security, ask on a miss,
    /// the default safe bins, nothing allowlisted. Config loading sets every field itself.
    fn default() -> Self {
        ExecPolicy {
            security: Security::Allowlist,
            ask: Ask::OnMiss,
            safe_bins: DEFAULT_SAFE_BINS.iter().map(|s| (*s).to_owned()).collect(),
            safe_bin_trusted_dirs: Vec::new(),
            safe_bin_profiles: BTreeMap::new(),
            strict_inline_eval: false,
            auto_allow_skills: false,
            skill_bins: Vec::new(),
            allowlist: Vec::new(),
        }
    }
}

/// One allowlist entry of the approvals file (`agents.<id>.allowlist[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowlistEntry {
    /// A case-insensitive glob over the resolved executable path; `~` expands to `HOME`,
    /// `*` stays inside one path component and `**` crosses them.
    pub pattern: String,
    /// An optional regular expression the segment's arguments (joined by single spaces) must
    /// match in full; without it any arguments match.
    pub arg_pattern: Option<String>,
}

impl AllowlistEntry {
    /// An entry that matches any arguments.
    pub fn new(pattern: impl Into<String>) -> Self {
        AllowlistEntry {
            pattern: pattern.into(),
            arg_pattern: None,
        }
    }
}

/// A binary a skill ships, trusted when `autoAllowSkills` is on and it resolves to exactly
/// this path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillBin {
    /// The bare command name the agent types.
    pub name: String,
    /// Where the skill installed it; a same-named binary elsewhere on `PATH` is not trusted.
    pub resolved_path: PathBuf,
}

impl SkillBin {
    /// A skill binary named bare, as OpenClaw lists them (`skillBins: ["gh-skill"]`): trusted at
    /// the real path the name resolves to on `path` (the host's `PATH`), as OpenClaw's node host
    /// resolves it. `None` for a name with a `/` (never trusted) or one that resolves nowhere.
    pub fn on_path(name: &str, path: &str) -> Option<SkillBin> {
        let name = name.trim();
        if name.is_empty() || name.contains('/') {
            return None;
        }
        let env = BTreeMap::from([("PATH".to_owned(), path.to_owned())]);
        let resolver = super::resolve::Resolver::new(std::path::Path::new("/"), &env);
        Some(SkillBin {
            name: name.to_owned(),
            resolved_path: resolver.resolve_program(name, false)?,
        })
    }
}

/// How a safe bin may be called (`tools.exec.safeBinProfiles.<name>`). A configured profile
/// replaces the built-in one of that name, and every flag it does not list is refused: a profile
/// is a list of what is allowed, never of what is forbidden alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SafeBinProfile {
    /// Fewest positional (non-flag) arguments.
    pub min_positional: Option<usize>,
    /// Most positional arguments; `Some(0)` means stdin only.
    pub max_positional: Option<usize>,
    /// Flags that take a value (`-n 5`, `--lines=5`).
    pub allowed_value_flags: Vec<String>,
    /// Flags refused outright, such as the ones that read or write files.
    pub denied_flags: Vec<String>,
}
