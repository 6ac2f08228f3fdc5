//! A real temporary tree (a workspace beside an outside directory and a home) and a `check`
//! helper over `files::check_file` that renders the outcome in one line.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use gatehouse_policy::files::{FileOp, FileRules, FileRulesConfig, FileTool, check_file};

/// `<tmp>/ws` (the workspace), `<tmp>/outside`, `<tmp>/home`; all canonical.
pub(crate) struct Tree {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) ws: PathBuf,
}

impl Tree {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for sub in ["ws", "outside", "home"] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        Tree {
            _dir: dir,
            ws: root.join("ws"),
            root,
        }
    }

    /// Writes `content` at `rel` (under the temp root), creating parents.
    pub(crate) fn file(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        path
    }

    pub(crate) fn dir(&self, rel: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(&path).unwrap();
        path
    }

    /// A symlink at `rel` storing `target` verbatim (relative targets stay relative).
    pub(crate) fn link(&self, rel: &str, target: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(
            target.replace("{root}", &self.root.display().to_string()),
            &path,
        )
        .unwrap();
        path
    }

    /// OpenClaw's defaults plus `~` at `<tmp>/home`.
    pub(crate) fn config(&self) -> FileRulesConfig {
        let mut config = FileRulesConfig::new(&self.ws);
        config.home = Some(self.root.join("home"));
        config
    }

    /// The defaults with `tools.fs.workspaceOnly: true`.
    pub(crate) fn contained(&self) -> FileRules {
        let mut config = self.config();
        config.workspace_only = true;
        FileRules::new(config).unwrap()
    }

    pub(crate) fn open(&self) -> FileRules {
        FileRules::new(self.config()).unwrap()
    }

    /// `ok <path>` (the canonical path, `{root}` for the temp root, `+new` when it does not
    /// exist yet) or `<rule>`.
    pub(crate) fn check(&self, rules: &FileRules, op: FileOp, path: &str) -> String {
        self.check_tool(rules, op, FileTool::Fs, path)
    }

    pub(crate) fn check_tool(
        &self,
        rules: &FileRules,
        op: FileOp,
        tool: FileTool,
        path: &str,
    ) -> String {
        let path = path.replace("{root}", &self.root.display().to_string());
        match check_file(&path, op, tool, rules) {
            Ok(resolved) => format!(
                "ok {}{}",
                self.show(&resolved.path),
                if resolved.existing.is_none() {
                    " +new"
                } else {
                    ""
                }
            ),
            Err(refusal) => refusal.rule().to_owned(),
        }
    }

    pub(crate) fn show(&self, path: &Path) -> String {
        path.display()
            .to_string()
            .replace(&self.root.display().to_string(), "{root}")
    }
}

/// A write of `len` bytes.
pub(crate) fn write(len: u64) -> FileOp {
    FileOp::Write { len }
}
