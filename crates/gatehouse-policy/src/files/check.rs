//! The check of one file access: walk, then every rule in turn; the first refusal wins.

use std::path::{Path, PathBuf};

use super::denied::{builtin, in_system_dir};
use super::error::FileRefusal;
use super::examine::{Examined, Kind};
use super::patch::{PatchOp, parse_patch};
use super::resolve::{WalkOptions, refuse_unsafe_chars, walk};
use super::rules::{CompiledAccess, FileRules};

/// What a file tool does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileOp {
    /// `read`: the file must exist; `tools.read` applies.
    Read,
    /// `write`: the file may exist (it is replaced) or not (it is created, with missing
    /// directories); `tools.write` applies to the content's length.
    Write {
        /// Bytes the caller will write.
        len: u64,
    },
    /// `edit`: an existing file is read and written back; both sections apply.
    Edit,
    /// An `apply_patch` deletion (or the source of a move): the file must exist.
    Delete,
}

impl FileOp {
    /// Whether the operation changes the file.
    pub fn writes(self) -> bool {
        !matches!(self, FileOp::Read)
    }
}

/// Which workspace containment setting governs a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileTool {
    /// `read`, `write`, `edit`: `tools.fs.workspaceOnly`.
    Fs,
    /// `apply_patch`: also `tools.exec.applyPatch.workspaceOnly`.
    ApplyPatch,
}

/// A path a file tool may touch, and exactly how the caller must open it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedFile {
    /// The operation checked.
    pub op: FileOp,
    /// The path as requested.
    pub requested: String,
    /// The canonical absolute path: no symlink, `.` or `..` left. The caller opens this path,
    /// never the requested one (see the docs for how to open it without a race).
    pub path: PathBuf,
    /// The file as examined, when it exists; `None` means the caller creates it (with
    /// `O_CREAT | O_EXCL`) and any missing directories on the way.
    pub existing: Option<FileIdentity>,
    /// Whether `path` lies inside the workspace.
    pub in_workspace: bool,
}

/// Which file was examined, so the caller can verify after opening (`fstat`) that it opened
/// the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// Device id (`st_dev`).
    pub dev: u64,
    /// Inode number (`st_ino`).
    pub ino: u64,
    /// Size in bytes when examined.
    pub size: u64,
}

/// Checks one access to `path` for `tool`.
///
/// Reads the filesystem (`lstat`, `readlink`) and nothing else. The answer is only as fresh as
/// the moment it was made: the caller must open [`ResolvedFile::path`] so that a later swap is
/// refused (`openat2` with `RESOLVE_NO_SYMLINKS`, then `fstat` against
/// [`ResolvedFile::existing`]).
pub fn check_file(
    path: &str,
    op: FileOp,
    tool: FileTool,
    rules: &FileRules,
) -> Result<ResolvedFile, FileRefusal> {
    // The text first: a refusal must not depend on (and so reveal) whether the file exists.
    if in_system_dir(Path::new(path)) {
        return Err(FileRefusal::SystemPath {
            path: PathBuf::from(path),
        });
    }
    check_denied(&[path], op, rules)?;
    let contained =
        rules.workspace_only || (tool == FileTool::ApplyPatch && rules.apply_patch_workspace_only);
    let walked = walk(
        path,
        &WalkOptions {
            workspace: &rules.workspace,
            home: rules.home.as_deref(),
            contained,
            may_create: matches!(op, FileOp::Write { .. }),
        },
    )?;
    let canonical = walked.path;
    if in_system_dir(&canonical) {
        return Err(FileRefusal::SystemPath { path: canonical });
    }
    let existing = match &walked.target {
        Some(target) => Some(examine_target(&canonical, target, op)?),
        None => None,
    };
    let canonical_text = canonical.to_str().ok_or_else(|| FileRefusal::InvalidPath {
        path: path.to_owned(),
        why: format!("{} is not UTF-8 on disk", canonical.display()),
    })?;
    refuse_unsafe_chars(canonical_text)?;
    check_protected(&canonical, rules)?;
    check_denied(&[canonical_text], op, rules)?;
    for access in sections(op, rules) {
        check_section(&canonical, canonical_text, access)?;
        check_size(&canonical, op, existing.as_ref(), access)?;
    }
    Ok(ResolvedFile {
        op,
        requested: path.to_owned(),
        in_workspace: canonical.starts_with(&rules.workspace),
        path: canonical,
        existing,
    })
}

/// Refuses directories, special files and (for writes) hard-linked files.
fn examine_target(path: &Path, target: &Examined, op: FileOp) -> Result<FileIdentity, FileRefusal> {
    let special = match target.kind {
        Kind::File => None,
        Kind::Dir => {
            return Err(FileRefusal::Directory {
                path: path.to_path_buf(),
            });
        }
        Kind::Fifo => Some("fifo"),
        Kind::Socket => Some("socket"),
        Kind::CharDevice => Some("character device"),
        Kind::BlockDevice => Some("block device"),
        Kind::Symlink | Kind::Other => {
            return Err(FileRefusal::Unexaminable {
                path: path.to_path_buf(),
                error: "not a regular file".to_owned(),
            });
        }
    };
    if let Some(kind) = special {
        return Err(FileRefusal::SpecialFile {
            path: path.to_path_buf(),
            kind,
        });
    }
    if op.writes() && target.nlink > 1 {
        return Err(FileRefusal::HardLink {
            path: path.to_path_buf(),
            links: target.nlink,
        });
    }
    Ok(FileIdentity {
        dev: target.dev,
        ino: target.ino,
        size: target.size,
    })
}

fn check_protected(canonical: &Path, rules: &FileRules) -> Result<(), FileRefusal> {
    for (forms, what) in &rules.protected {
        if forms.iter().any(|form| canonical.starts_with(form)) {
            return Err(FileRefusal::Protected {
                path: canonical.to_path_buf(),
                what: what.clone(),
            });
        }
    }
    Ok(())
}

/// The built-in lists and `tools.fs.denyPaths`, against the requested or the canonical path.
fn check_denied(paths: &[&str], op: FileOp, rules: &FileRules) -> Result<(), FileRefusal> {
    let Some(builtin) = builtin() else {
        return Err(FileRefusal::DeniedFile {
            path: paths.join(", "),
            entry: String::new(),
            key: "(built-in lists failed to compile)".to_owned(),
        });
    };
    let mut lists = vec![
        (&builtin.all, "(built-in)"),
        (&rules.deny_paths, "tools.fs.denyPaths"),
    ];
    if op.writes() {
        lists.push((&builtin.writes, "(built-in, writes)"));
    }
    for (list, key) in lists {
        for path in paths {
            if let Some(entry) = list.matching(path) {
                return Err(FileRefusal::DeniedFile {
                    path: (*path).to_owned(),
                    entry: entry.to_owned(),
                    key: key.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// The `tools.read`/`tools.write` sections an operation answers to.
fn sections(op: FileOp, rules: &FileRules) -> Vec<&CompiledAccess> {
    match op {
        FileOp::Read => vec![&rules.read],
        FileOp::Write { .. } | FileOp::Delete => vec![&rules.write],
        FileOp::Edit => vec![&rules.read, &rules.write],
    }
}

fn check_section(canonical: &Path, text: &str, access: &CompiledAccess) -> Result<(), FileRefusal> {
    if let Some(entry) = access.deny.matching(text) {
        return Err(FileRefusal::PathDenied {
            path: canonical.to_path_buf(),
            entry: entry.to_owned(),
            key: format!("{}.deny", access.key),
        });
    }
    if let Some(allow) = &access.allow
        && allow.matching(text).is_none()
    {
        return Err(FileRefusal::PathNotAllowed {
            path: canonical.to_path_buf(),
            key: format!("{}.allow", access.key),
        });
    }
    Ok(())
}

/// `maxSizeBytes`: the content's length for writes, the file's size for reads and edits.
fn check_size(
    canonical: &Path,
    op: FileOp,
    existing: Option<&FileIdentity>,
    access: &CompiledAccess,
) -> Result<(), FileRefusal> {
    let Some(max) = access.max_size_bytes else {
        return Ok(());
    };
    let size = match op {
        FileOp::Write { len } => len,
        FileOp::Read | FileOp::Edit => existing.map_or(0, |e| e.size),
        FileOp::Delete => return Ok(()),
    };
    if size > max {
        return Err(FileRefusal::TooLarge {
            path: canonical.to_path_buf(),
            size,
            max,
            key: format!("{}.maxSizeBytes", access.key),
        });
    }
    Ok(())
}

/// Checks every path an `apply_patch` input touches; an input that does not parse is refused
/// whole. Adds are writes of their content, updates are edits, a move is an edit of the source
/// and a write of the destination, deletions must name an existing file.
pub fn check_patch(text: &str, rules: &FileRules) -> Result<Vec<ResolvedFile>, FileRefusal> {
    let tool = FileTool::ApplyPatch;
    let mut checked = Vec::new();
    for op in parse_patch(text)? {
        match op {
            PatchOp::Add { path, len } => {
                checked.push(check_file(&path, FileOp::Write { len }, tool, rules)?);
            }
            PatchOp::Delete { path } => {
                checked.push(check_file(&path, FileOp::Delete, tool, rules)?)
            }
            PatchOp::Update { path, move_to } => {
                let source = check_file(&path, FileOp::Edit, tool, rules)?;
                let len = source.existing.map_or(0, |e| e.size);
                checked.push(source);
                if let Some(dest) = move_to {
                    checked.push(check_file(&dest, FileOp::Write { len }, tool, rules)?);
                }
            }
        }
    }
    Ok(checked)
}
