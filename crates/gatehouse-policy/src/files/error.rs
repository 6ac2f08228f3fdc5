//! Why a file access is refused, and why file rules fail to load.

use std::path::PathBuf;

use super::patch::PatchError;

/// Why a file tool may not touch a path. Each variant is one rule of
/// `docs/file-and-url-checks.md`; [`FileRefusal::rule`] is its id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileRefusal {
    /// The path holds a control, format (bidi, zero-width) or unassigned character.
    #[error("path {path:?} contains {character} at byte {offset}")]
    UnsafeCharacter {
        /// The path (requested, or the on-disk name the walk reached).
        path: String,
        /// The character, as `U+XXXX`.
        character: String,
        /// Its byte offset in `path`.
        offset: usize,
    },
    /// The path is empty, too long, uses `~user`, needs an unknown home, or names a file whose
    /// on-disk name is not UTF-8.
    #[error("path {path:?} is not usable: {why}")]
    InvalidPath {
        /// The requested path.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// `workspaceOnly` is on and the path lies outside the workspace.
    #[error("path {path:?} resolves to {resolved:?}, outside the workspace {workspace:?}")]
    OutsideWorkspace {
        /// The requested path.
        path: String,
        /// Where the walk was when it left the workspace.
        resolved: PathBuf,
        /// The workspace root.
        workspace: PathBuf,
    },
    /// `workspaceOnly` is on and a symlink inside the workspace points out of it.
    #[error("path {path:?}: symlink {link:?} points to {target:?}, outside the workspace")]
    SymlinkEscape {
        /// The requested path.
        path: String,
        /// The symlink that leads out.
        link: PathBuf,
        /// What it points to, as stored.
        target: PathBuf,
    },
    /// More than 40 symlinks were followed (a loop, as the kernel's `ELOOP`).
    #[error("path {path:?} follows more than {limit} symlinks (a loop?)")]
    SymlinkLoop {
        /// The requested path.
        path: String,
        /// The limit.
        limit: u32,
    },
    /// Nothing exists there, and the tool needs an existing file.
    #[error("path {path:?} does not exist ({missing:?} is missing)")]
    NotFound {
        /// The requested path.
        path: String,
        /// The first component that is missing.
        missing: PathBuf,
    },
    /// A component before the end is a file, not a directory.
    #[error("path {path:?}: {component:?} is not a directory")]
    NotADirectory {
        /// The requested path.
        path: String,
        /// The component that is not a directory.
        component: PathBuf,
    },
    /// After a missing component only plain names may follow (no `..`, no symlink to resolve).
    #[error("path {path:?}: `..` after the missing {missing:?} cannot be resolved")]
    UnresolvableTail {
        /// The requested path.
        path: String,
        /// The first missing component.
        missing: PathBuf,
    },
    /// The target is a directory.
    #[error("path {path:?} is a directory, not a file")]
    Directory {
        /// The canonical path.
        path: PathBuf,
    },
    /// The target is a FIFO, socket or device.
    #[error("path {path:?} is a {kind}, not a regular file")]
    SpecialFile {
        /// The canonical path.
        path: PathBuf,
        /// `fifo`, `socket`, `character device` or `block device`.
        kind: &'static str,
    },
    /// Writing an existing file with more than one hard link would change the other names too.
    #[error("path {path:?} has {links} hard links; writing it would change another file")]
    HardLink {
        /// The canonical path.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// Under `/proc`, `/sys` or `/dev`.
    #[error("path {path:?} is in a system pseudo-filesystem")]
    SystemPath {
        /// The canonical path.
        path: PathBuf,
    },
    /// One of the gateway's own files or directories.
    #[error("path {path:?} is protected: {what}")]
    Protected {
        /// The canonical path.
        path: PathBuf,
        /// What the protected path is (e.g. `the gateway's config file`).
        what: String,
    },
    /// A credential or key file on the built-in denied list, or on `tools.fs.denyPaths`.
    #[error("path {path:?} matches denied-file entry {entry:?} ({key})")]
    DeniedFile {
        /// The path (requested or canonical) that matched.
        path: String,
        /// The entry.
        entry: String,
        /// `(built-in)`, `(built-in, writes)` or `tools.fs.denyPaths`.
        key: String,
    },
    /// `tools.read.deny` or `tools.write.deny` matches.
    #[error("path {path:?} matches {key} entry {entry:?}")]
    PathDenied {
        /// The canonical path.
        path: PathBuf,
        /// The entry.
        entry: String,
        /// `tools.read.deny` or `tools.write.deny`.
        key: String,
    },
    /// `tools.read.allow` or `tools.write.allow` is set and does not match.
    #[error("path {path:?} matches no entry of {key}")]
    PathNotAllowed {
        /// The canonical path.
        path: PathBuf,
        /// `tools.read.allow` or `tools.write.allow`.
        key: String,
    },
    /// Larger than `maxSizeBytes`.
    #[error("path {path:?}: {size} bytes is more than {key} ({max})")]
    TooLarge {
        /// The canonical path.
        path: PathBuf,
        /// The file's size (reads, edits) or the content's length (writes).
        size: u64,
        /// The limit.
        max: u64,
        /// `tools.read.maxSizeBytes` or `tools.write.maxSizeBytes`.
        key: String,
    },
    /// The filesystem answered with an error other than "not found" (permissions, I/O).
    #[error("path {path:?} cannot be examined: {error}")]
    Unexaminable {
        /// The path being examined.
        path: PathBuf,
        /// The error.
        error: String,
    },
    /// The `apply_patch` text does not parse; nothing in it is checked, so all of it is refused.
    #[error("apply_patch input does not parse: {0}")]
    Patch(#[from] PatchError),
}

impl FileRefusal {
    /// The rule id operators look up in the docs.
    pub fn rule(&self) -> &'static str {
        match self {
            FileRefusal::UnsafeCharacter { .. } => "unsafe-character",
            FileRefusal::InvalidPath { .. } => "invalid-path",
            FileRefusal::OutsideWorkspace { .. } => "outside-workspace",
            FileRefusal::SymlinkEscape { .. } => "symlink-escape",
            FileRefusal::SymlinkLoop { .. } => "symlink-loop",
            FileRefusal::NotFound { .. } => "not-found",
            FileRefusal::NotADirectory { .. } => "not-a-directory",
            FileRefusal::UnresolvableTail { .. } => "unresolvable-tail",
            FileRefusal::Directory { .. } => "directory",
            FileRefusal::SpecialFile { .. } => "special-file",
            FileRefusal::HardLink { .. } => "hard-link",
            FileRefusal::SystemPath { .. } => "system-path",
            FileRefusal::Protected { .. } => "protected-path",
            FileRefusal::DeniedFile { .. } => "denied-file",
            FileRefusal::PathDenied { .. } => "path-denied",
            FileRefusal::PathNotAllowed { .. } => "path-not-allowed",
            FileRefusal::TooLarge { .. } => "too-large",
            FileRefusal::Unexaminable { .. } => "unexaminable",
            FileRefusal::Patch(_) => "patch-unparsed",
        }
    }
}

/// Why file rules could not be built from config; the gateway refuses every file call of the
/// agent until the config is fixed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileRulesError {
    /// The workspace directory cannot be resolved.
    #[error("workspace {path:?} cannot be resolved: {error}")]
    Workspace {
        /// The configured workspace.
        path: PathBuf,
        /// The error.
        error: String,
    },
    /// A glob entry does not compile or cannot be anchored.
    #[error("{key}: entry {entry:?} is not a valid path glob: {why}")]
    InvalidGlob {
        /// The config key of the list.
        key: String,
        /// The entry as written.
        entry: String,
        /// What is wrong.
        why: String,
    },
}
