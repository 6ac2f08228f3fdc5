//! The file rules of one agent: what the config says, and the compiled form checks use.

use std::path::{Path, PathBuf};

use super::error::FileRulesError;
use super::globs::{ListKind, PathGlobs};
use super::resolve::{WalkOptions, walk};

/// The file-tool settings of one agent, as the config states them (the config crate fills
/// this; the policy never reads config syntax). Build [`FileRules`] from it once per config
/// load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRulesConfig {
    /// The agent's workspace: `agents.list[i].workspace`, else `agents.defaults.workspace`.
    /// Relative paths are taken from here.
    pub workspace: PathBuf,
    /// The home directory `~/` expands to in requests and globs; `None` refuses `~` paths.
    pub home: Option<PathBuf>,
    /// `tools.fs.workspaceOnly` (the agent's `agents.list[i].tools.fs.workspaceOnly` first):
    /// `read`, `write`, `edit` and `apply_patch` stay inside the workspace. OpenClaw's default
    /// is `false`.
    pub workspace_only: bool,
    /// `tools.exec.applyPatch.workspaceOnly`: `apply_patch` stays inside the workspace even
    /// when `workspace_only` is off. OpenClaw's default is `true`.
    pub apply_patch_workspace_only: bool,
    /// `tools.read`: what `read` (and the read half of `edit`) may open.
    pub read: PathAccessConfig,
    /// `tools.write`: what `write`, `edit` and `apply_patch` may change.
    pub write: PathAccessConfig,
    /// `tools.fs.denyPaths`: additions to the built-in denied files, for every file tool.
    pub deny_paths: Vec<String>,
    /// The gateway's own files (config, data directory, tokens, `exec-approvals.json`): never
    /// readable or writable by a tool.
    pub protected: Vec<ProtectedPath>,
}

impl FileRulesConfig {
    /// OpenClaw's defaults for a workspace: file tools may leave it, `apply_patch` may not,
    /// no globs, no size limits.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        FileRulesConfig {
            workspace: workspace.into(),
            home: None,
            workspace_only: false,
            apply_patch_workspace_only: true,
            read: PathAccessConfig::new("tools.read"),
            write: PathAccessConfig::new("tools.write"),
            deny_paths: Vec::new(),
            protected: Vec::new(),
        }
    }
}

/// One `tools.read` or `tools.write` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathAccessConfig {
    /// The key of the section (`tools.read`, or the agent's `agents.list[2].tools.read`), named
    /// in refusals.
    pub key: String,
    /// `allow`: path globs; when set, a path must match one. `None` filters nothing.
    pub allow: Option<Vec<String>>,
    /// `deny`: path globs that refuse a path (and everything under a matching directory).
    pub deny: Vec<String>,
    /// `maxSizeBytes`: the largest file (read) or content (write) accepted.
    pub max_size_bytes: Option<u64>,
}

impl PathAccessConfig {
    /// An empty section at `key`.
    pub fn new(key: impl Into<String>) -> Self {
        PathAccessConfig {
            key: key.into(),
            allow: None,
            deny: Vec::new(),
            max_size_bytes: None,
        }
    }
}

/// A file or directory of the gateway itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    /// The path; a directory protects everything under it.
    pub path: PathBuf,
    /// What it is, for the refusal (`the gateway's data directory`).
    pub what: String,
}

/// [`FileRulesConfig`] compiled: the workspace resolved, globs built.
#[derive(Debug, Clone)]
pub struct FileRules {
    pub(crate) workspace: PathBuf,
    pub(crate) home: Option<PathBuf>,
    pub(crate) workspace_only: bool,
    pub(crate) apply_patch_workspace_only: bool,
    pub(crate) read: CompiledAccess,
    pub(crate) write: CompiledAccess,
    pub(crate) deny_paths: PathGlobs,
    /// Each protected path as configured and canonical (its existing prefix resolved, so a
    /// directory created later under a symlinked parent is still recognized).
    pub(crate) protected: Vec<(Vec<PathBuf>, String)>,
}

/// One compiled `tools.read`/`tools.write` section.
#[derive(Debug, Clone)]
pub(crate) struct CompiledAccess {
    pub(crate) key: String,
    pub(crate) allow: Option<PathGlobs>,
    pub(crate) deny: PathGlobs,
    pub(crate) max_size_bytes: Option<u64>,
}

impl FileRules {
    /// Resolves the workspace (it must exist) and compiles every glob; a bad entry fails here,
    /// at config load, rather than letting a request through.
    pub fn new(config: FileRulesConfig) -> Result<Self, FileRulesError> {
        let workspace =
            std::fs::canonicalize(&config.workspace).map_err(|e| FileRulesError::Workspace {
                path: config.workspace.clone(),
                error: e.to_string(),
            })?;
        let home = config.home.as_deref();
        let compile_access = |access: &PathAccessConfig| -> Result<_, FileRulesError> {
            let list = |entries: &[String], kind, suffix: &str| {
                PathGlobs::new(
                    entries,
                    kind,
                    &format!("{}.{suffix}", access.key),
                    &workspace,
                    home,
                )
            };
            Ok(CompiledAccess {
                key: access.key.clone(),
                allow: access
                    .allow
                    .as_deref()
                    .map(|a| list(a, ListKind::Allow, "allow"))
                    .transpose()?,
                deny: list(&access.deny, ListKind::Deny, "deny")?,
                max_size_bytes: access.max_size_bytes,
            })
        };
        let read = compile_access(&config.read)?;
        let write = compile_access(&config.write)?;
        let deny_paths = PathGlobs::new(
            &config.deny_paths,
            ListKind::Deny,
            "tools.fs.denyPaths",
            &workspace,
            home,
        )?;
        let protected = config
            .protected
            .iter()
            .map(|p| {
                let mut forms = vec![p.path.clone()];
                if let Some(real) = canonical_even_if_missing(&p.path)
                    && real != p.path
                {
                    forms.push(real);
                }
                (forms, p.what.clone())
            })
            .collect();
        Ok(FileRules {
            workspace,
            home: config.home,
            workspace_only: config.workspace_only,
            apply_patch_workspace_only: config.apply_patch_workspace_only,
            read,
            write,
            deny_paths,
            protected,
        })
    }

    /// The canonical workspace root: the directory a caller opens and resolves beneath.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }
}

/// `path` with its existing prefix resolved and any missing rest appended, as the walk
/// resolves a write's target; `None` if the path cannot be walked.
fn canonical_even_if_missing(path: &Path) -> Option<PathBuf> {
    let text = path.to_str()?;
    let options = WalkOptions {
        workspace: Path::new("/"),
        home: None,
        contained: false,
        may_create: true,
    };
    walk(text, &options).ok().map(|walked| walked.path)
}
