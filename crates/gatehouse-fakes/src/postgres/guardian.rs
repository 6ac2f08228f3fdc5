//! The guardian: a small shell process, started with each cluster, that stops the server and
//! removes the cluster's directory once the test process lets go of it — when the cluster is
//! dropped, and also when the test process exits without dropping it (the per-process shared
//! cluster lives in a `static`, which is never dropped), panics across an abort, is killed, or
//! is interrupted with Ctrl-C.
//!
//! It waits for end-of-file on a pipe whose only writer is the test process (Rust opens pipes
//! close-on-exec, so no other program inherits it); the kernel closes that end whatever way
//! the process ends. It runs in its own process group, so a terminal's Ctrl-C does not reach
//! it, and as the test process's user: as root it may delete the cluster's directory from any
//! temporary directory (the server's account could not unless that directory is
//! world-writable) and signal the server; only removing the server's shared memory needs the
//! server's account there, since root in a container lacks `CAP_SYS_ADMIN`, so that one step
//! runs through `setpriv`.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use super::account::ServerAccount;
use super::error::ClusterError;

/// The cleanup, run by `sh` with the cluster directory as `$1` and, when the server runs as
/// another account, the `setpriv` command that switches to it as `$2`. It asks a live postmaster for
/// an immediate shutdown (SIGQUIT: children killed, shared memory released), waits up to 5 s,
/// then SIGKILLs it. A postmaster counts as alive only while its command line names the data
/// directory, so neither a zombie nor another process that reused the pid is waited on or
/// signalled. If `postmaster.pid` is still there afterwards, the server did not shut down
/// cleanly and its System V shared memory segment (id in line 7) would outlive it: removed.
const SCRIPT: &str = r#"
dir=$1
data=$dir/data
as_server=$2
while read -r _; do :; done
pid=$(sed -n 1p "$data/postmaster.pid" 2>/dev/null)
alive() { [ -n "$pid" ] && tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$data"; }
if alive; then
  kill -QUIT "$pid" 2>/dev/null
  n=0
  while alive && [ "$n" -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
  if alive; then kill -KILL "$pid" 2>/dev/null; fi
fi
shm=$(sed -n 7p "$data/postmaster.pid" 2>/dev/null)
shm=${shm##* }
if [ -n "$shm" ]; then $as_server ipcrm -m "$shm" 2>/dev/null; fi
rm -rf -- "$dir"
"#;

/// The running guardian of one cluster.
#[derive(Debug)]
pub(crate) struct Guardian {
    process: Child,
    /// Our end of the pipe it waits on; dropping it starts the cleanup.
    pipe: Option<ChildStdin>,
}

impl Guardian {
    /// Starts the guardian of the cluster in `dir` (data in `dir/data`).
    pub(crate) fn spawn(dir: &Path, account: &ServerAccount) -> Result<Self, ClusterError> {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(SCRIPT)
            .arg("gatehouse-pg-guardian")
            .arg(dir)
            .arg(account.setpriv().unwrap_or_default())
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut process = command.spawn().map_err(ClusterError::io(
            "starting the cluster's cleanup process (/bin/sh)",
        ))?;
        let pipe = process.stdin.take();
        Ok(Self { process, pipe })
    }

    /// Lets the guardian clean up and waits until it has: the server stopped, the directory
    /// removed.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        drop(self.pipe.take());
        self.process.wait().map(drop)
    }
}
