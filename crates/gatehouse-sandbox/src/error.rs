//! Why a sandboxed run cannot be planned. Each variant names what the operator or the
//! requester can change; the caller adds the config key's full path (it knows the agent's
//! index in `agents.list`).

use std::path::PathBuf;

use crate::env::EnvRefused;
use crate::validate::MountRefusal;

/// A run that will not be started in a sandbox, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The agent id cannot name a directory under the data directory.
    #[error(
        "agent id {id:?} cannot name the agent's sandbox directory: a sandboxed agent's id must \
         be letters, digits, `_` and `-`, starting with a letter or digit, at most 64 characters"
    )]
    AgentId {
        /// The id as requested.
        id: String,
    },
    /// No workspace is configured.
    #[error(
        "agent {agent:?} runs sandboxed but has no workspace: set `agents.list[].workspace` or \
         `agents.defaults.workspace`"
    )]
    NoWorkspace {
        /// The agent.
        agent: String,
    },
    /// The workspace was refused.
    #[error("workspace: {0}")]
    Workspace(MountRefusal),
    /// The workspace is not a directory.
    #[error("workspace {} is not a directory", path.display())]
    WorkspaceNotDirectory {
        /// The workspace.
        path: PathBuf,
    },
    /// An `allowedRoots` entry is not usable.
    #[error("allowedRoots: {0}")]
    AllowedRoots(MountRefusal),
    /// An `extraPaths` entry was refused.
    #[error("extraPaths[{index}]: {refusal}")]
    ExtraPath {
        /// Its index in `extraPaths`.
        index: usize,
        /// Why.
        refusal: MountRefusal,
    },
    /// A `volumes` entry was refused.
    #[error("volumes[{index}]: {refusal}")]
    Volume {
        /// Its index in `volumes`.
        index: usize,
        /// Why.
        refusal: MountRefusal,
    },
    /// The working directory or the program is not where the sandbox would see it.
    #[error(
        "the {what} {} is not visible inside the sandbox at that path (it sees the workspace, \
         the system directories and what the isolation mode mounts), so the run cannot be \
         bound to what it would execute",
        path.display()
    )]
    NotVisible {
        /// `working directory`, `program` or `program file`.
        what: &'static str,
        /// The host path.
        path: PathBuf,
    },
    /// A mount point lies below a link in a mounted host directory.
    #[error(
        "{} cannot be mounted: {} is a symbolic link, and a mount made through it would land          wherever it points (a link the sandbox left in its own home could put the workspace          over /usr/bin); remove the link",
        dest.display(),
        link.display()
    )]
    MountPointLink {
        /// Where the sandbox would see the mount.
        dest: PathBuf,
        /// The host path of the link on the way.
        link: PathBuf,
    },
    /// The request's environment was refused.
    #[error(transparent)]
    Env(#[from] EnvRefused),
    /// The agent's persistent home or a volume could not be prepared under the data directory.
    #[error("cannot prepare {}: {detail}", path.display())]
    State {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}
