//! What is asked: a command, where it runs and the environment it sees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The command an agent wants to run, in the two shapes agent hosts send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecCommand {
    /// A raw shell string (gateway `exec`): parsed with the bash grammar before anything else.
    Shell(String),
    /// A direct argv (node `system.run`): no shell sits between it and `execve`.
    Argv(Vec<String>),
}

/// One request to evaluate. The environment matters because `PATH` decides which binary a bare
/// name runs and `HOME` decides what `~` means, both in commands and in allowlist patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The command as the agent sent it.
    pub command: ExecCommand,
    /// The working directory relative executables and `./script` resolve against.
    pub cwd: PathBuf,
    /// The request environment; only `PATH` and `HOME` are read.
    pub env: BTreeMap<String, String>,
    /// Keys of `env` the host filled in from its own environment (its `PATH` and `HOME`), not
    /// the requester: those are the host's settings, so they are not judged as the requester's
    /// attempt to change what programs load.
    pub inherited: BTreeSet<String>,
}

impl ExecRequest {
    /// A shell-string request with an empty environment; set `env` for `PATH`/`HOME`.
    pub fn shell(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        ExecRequest {
            command: ExecCommand::Shell(command.into()),
            cwd: cwd.into(),
            env: BTreeMap::new(),
            inherited: BTreeSet::new(),
        }
    }

    /// A direct-argv request with an empty environment; set `env` for `PATH`/`HOME`.
    pub fn argv<I, S>(argv: I, cwd: impl Into<PathBuf>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ExecRequest {
            command: ExecCommand::Argv(argv.into_iter().map(Into::into).collect()),
            cwd: cwd.into(),
            env: BTreeMap::new(),
            inherited: BTreeSet::new(),
        }
    }

    /// Builder-style setter for one environment variable the requester sets (replacing one the
    /// host filled in, if any).
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.inherited.remove(&key);
        self.env.insert(key, value.into());
        self
    }

    /// Builder-style setter for one variable the host supplies from its own environment.
    pub fn with_inherited_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.inherited.insert(key.clone());
        self.env.insert(key, value.into());
        self
    }
}
