//! Why a temporary PostgreSQL cluster could not be made or driven.

use std::path::PathBuf;
use std::time::Duration;

use super::binaries::OVERRIDE_VAR;

/// Why a [`super::TempCluster`] could not start, stop or create a database. The cluster runs
/// programs and waits on processes rather than serving HTTP, so it has its own error type,
/// apart from [`crate::FakeError`].
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No directory holding `initdb`, `postgres`, `createdb` and `dropdb` was found.
    #[error(
        "no PostgreSQL server programs found (looked in {searched}); install Debian's \
         `postgresql` package or set {OVERRIDE_VAR} to the directory holding initdb and postgres"
    )]
    NoBinaries {
        /// Where the programs were looked for.
        searched: String,
    },
    /// The server found is older than the oldest version the cluster is written for.
    #[error("PostgreSQL {found} in {dir} is too old: the test cluster needs {needed} or later")]
    TooOld {
        /// The directory holding the programs.
        dir: PathBuf,
        /// `postgres --version` as it answered.
        found: String,
        /// The oldest major version supported.
        needed: u32,
    },
    /// Running as root (where `initdb` refuses to run) and no unprivileged account to run as.
    #[error(
        "running as root, and neither `postgres` nor `nobody` is in /etc/passwd to run the \
         server as (initdb refuses to run as root)"
    )]
    NoAccount,
    /// A file, directory or process operation failed.
    #[error("{action}: {source}")]
    Io {
        /// What was being done, such as `creating /tmp/gatehouse-pg-…`.
        action: String,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A PostgreSQL program (`initdb`, `createdb`, `dropdb`, …) exited with an error.
    #[error("{program} failed ({status}): {output}")]
    Program {
        /// The program run.
        program: String,
        /// How it exited.
        status: String,
        /// What it printed on stdout and stderr.
        output: String,
    },
    /// The server exited before it accepted connections.
    #[error("the PostgreSQL server exited while starting ({status}); its log ends:\n{log}")]
    ServerExited {
        /// How it exited.
        status: String,
        /// The last lines of the server log.
        log: String,
    },
    /// The server did not report itself ready in time.
    #[error("the PostgreSQL server was not ready after {waited:?}; its log ends:\n{log}")]
    NotReady {
        /// How long it was waited for.
        waited: Duration,
        /// The last lines of the server log.
        log: String,
    },
    /// [`super::TempCluster::start_again`] was called while the server runs.
    #[error("the PostgreSQL server is already running")]
    AlreadyRunning,
    /// After the postmaster died, some of its children did not exit.
    #[error("server processes {pids:?} were still alive {waited:?} after the postmaster died")]
    ProcessesLeft {
        /// Their process ids.
        pids: Vec<u32>,
        /// How long they were waited for (and then killed).
        waited: Duration,
    },
    /// A database name the cluster would have to quote; refused so URLs stay plain.
    #[error(
        "bad database name {0:?}: use 1 to 63 ASCII letters, digits and underscores, \
         not starting with a digit"
    )]
    BadDatabaseName(String),
    /// The per-process shared cluster failed to start (every later call sees this too).
    #[error("the shared test cluster could not start: {0}")]
    SharedCluster(String),
}

impl ClusterError {
    /// Shorthand for an I/O failure with what was being done.
    pub(crate) fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let action = action.into();
        move |source| Self::Io { action, source }
    }
}
