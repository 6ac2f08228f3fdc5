//! File tools (`read`, `write`, `edit`, `apply_patch`): may this agent touch this path, and
//! which file exactly must the caller open?
//!
//! [`check_file`] walks the requested path component by component (`..`, absolute paths,
//! `~/`, symlinks, missing tails of a write), then applies, in order: system pseudo-filesystems,
//! directories and special files, hard links (writes), the gateway's own files, the built-in
//! denied files ([`DENIED_FILES`], [`WRITE_DENIED_FILES`]) and `tools.fs.denyPaths`, the
//! `tools.read`/`tools.write` globs and `maxSizeBytes`. The first refusal wins and names its
//! rule; an allowed access comes back as a [`ResolvedFile`] holding the canonical path to open.
//! [`check_patch`] does the same for every path an `apply_patch` input touches.
//!
//! Reads the filesystem (`lstat`, `readlink`, `realpath` of the workspace when rules are built)
//! and nothing else.
//!
//! ```
//! use gatehouse_policy::files::{FileOp, FileRules, FileRulesConfig, FileTool, check_file};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("notes.md"), "hi").unwrap();
//! std::fs::write(dir.path().join(".env"), "TOKEN=x").unwrap();
//! let rules = FileRules::new(FileRulesConfig::new(dir.path())).unwrap();
//!
//! let ok = check_file("notes.md", FileOp::Read, FileTool::Fs, &rules).unwrap();
//! assert_eq!(ok.path, rules.workspace().join("notes.md"));
//! let refused = check_file(".env", FileOp::Read, FileTool::Fs, &rules).unwrap_err();
//! assert_eq!(refused.rule(), "denied-file");
//! ```

mod check;
mod denied;
mod error;
mod examine;
mod globs;
mod patch;
mod resolve;
mod rules;

pub use check::{FileIdentity, FileOp, FileTool, ResolvedFile, check_file, check_patch};
pub use denied::{DENIED_FILES, SYSTEM_DIRS, WRITE_DENIED_FILES};
pub use error::{FileRefusal, FileRulesError};
pub use patch::{PatchError, PatchOp, parse_patch};
pub use rules::{FileRules, FileRulesConfig, PathAccessConfig, ProtectedPath};
