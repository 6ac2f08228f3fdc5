//! Runs one approved argv, on the gateway host or under bubblewrap: no shell is added, output
//! is bounded, and the process is killed at its timeout.
//!
//! A host run starts the resolved executable in a process group of its own with the
//! environment `gatehouse_sandbox::build_env` built (a few of the gateway's variables the
//! policy judged with or that only describe the host, then the request's own); a sandboxed
//! run starts the plan's bubblewrap command, which is in a process group of its own already and
//! carries the run's environment in its arguments. Nothing else of the gateway's environment
//! reaches either, so a token given with `tokenEnv` cannot be read by an allowed program. When
//! the run ends (or times out, or its caller goes away) the whole group is killed, so nothing it
//! started in the background outlives it or holds its output open; under bubblewrap the
//! sandbox dies with it (`--die-with-parent`).

use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use gatehouse_sandbox::{ChildEnv, Plan};
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::process::Command;

/// How long output is still collected after the run ended and its group was killed. Only a
/// process that left the group (`setsid`) can hold the pipes open longer; it is not waited for.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Where and how one run starts.
#[derive(Debug)]
pub(crate) enum Launch {
    /// On the gateway host, as the gateway's user.
    Host {
        /// The already-resolved executable, so `PATH` cannot redirect it between binding and
        /// spawn.
        executable: PathBuf,
        /// The bound argv, `argv[0]` included (the program sees it as its name).
        argv: Vec<String>,
        /// The working directory, real.
        cwd: PathBuf,
        /// Exactly the variables the run gets.
        env: ChildEnv,
    },
    /// Under bubblewrap, as planned right before spawning.
    Sandbox(Box<Plan>),
}

impl Launch {
    /// The command that starts it, with stdin closed and in a process group of its own.
    fn command(&self) -> Command {
        match self {
            Launch::Host {
                executable,
                argv,
                cwd,
                env,
            } => {
                let mut command = std::process::Command::new(executable);
                if let Some(name) = argv.first() {
                    std::os::unix::process::CommandExt::arg0(&mut command, name);
                }
                command
                    .args(argv.iter().skip(1))
                    .current_dir(cwd)
                    .stdin(Stdio::null());
                env.apply(&mut command);
                std::os::unix::process::CommandExt::process_group(&mut command, 0);
                Command::from(command)
            }
            Launch::Sandbox(plan) => Command::from(plan.command()),
        }
    }

    /// The file started, for logs and errors: the executable, or bubblewrap.
    pub(crate) fn program(&self) -> PathBuf {
        match self {
            Launch::Host { executable, .. } => executable.clone(),
            Launch::Sandbox(plan) => plan.command().get_program().into(),
        }
    }
}

/// What to run and how it is bounded.
#[derive(Debug)]
pub(crate) struct Spawn<'a> {
    pub(crate) launch: &'a Launch,
    pub(crate) timeout: Duration,
    pub(crate) max_output_bytes: usize,
}

/// How a run ended.
#[derive(Debug, Default)]
pub struct Finished {
    /// The exit code, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Whether it was killed at its timeout.
    pub timed_out: bool,
    /// How long it ran.
    pub duration: Duration,
    /// The first bytes of its standard output.
    pub stdout: Captured,
    /// The first bytes of its standard error.
    pub stderr: Captured,
}

/// The first bytes of a stream; the rest was read and dropped so the child never blocks.
#[derive(Debug, Default)]
pub struct Captured {
    /// The bytes kept.
    pub bytes: Vec<u8>,
    /// Whether more was written than kept.
    pub truncated: bool,
}

/// Starts the process; spawning failures are reported, never retried through a shell.
pub(crate) fn start(spawn: &Spawn<'_>) -> std::io::Result<Running> {
    let mut command = spawn.launch.command();
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn()?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(Pid::from_raw);
    Ok(Running {
        child,
        group,
        started: Instant::now(),
        timeout: spawn.timeout,
        limit: spawn.max_output_bytes,
        executable: spawn.launch.program(),
    })
}

/// A started process.
#[derive(Debug)]
pub(crate) struct Running {
    child: tokio::process::Child,
    /// The run's process group (the child's pid); `None` once it has been killed.
    group: Option<Pid>,
    started: Instant,
    timeout: Duration,
    limit: usize,
    executable: PathBuf,
}

impl Running {
    /// Waits for the process (killing its group at the timeout), kills whatever it left in its
    /// group, and collects bounded output.
    pub(crate) async fn finish(mut self) -> std::io::Result<Finished> {
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        let limit = self.limit;
        let mut out = tokio::spawn(capture(stdout, limit));
        let mut err = tokio::spawn(capture(stderr, limit));
        let (status, timed_out) = match tokio::time::timeout(self.timeout, self.child.wait()).await
        {
            Ok(status) => (status?, false),
            Err(_) => {
                tracing::info!(executable = %self.executable.display(), "Run timed out; killing it.");
                self.kill_group();
                self.child.kill().await?;
                (self.child.wait().await?, true)
            }
        };
        let duration = self.started.elapsed();
        self.kill_group();
        let stdout = drained(&mut out).await;
        let stderr = drained(&mut err).await;
        Ok(Finished {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out,
            duration,
            stdout,
            stderr,
        })
    }

    /// Kills every process still in the run's group, once.
    fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            // ESRCH (the group is already empty) is the usual outcome and means done.
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

impl Drop for Running {
    /// A run whose caller went away (a dropped request, shutdown) takes its group with it.
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// A stream's capture, given [`DRAIN_GRACE`] to reach the end; what a process outside the group
/// still holds open is cut off there.
async fn drained(capture: &mut tokio::task::JoinHandle<Captured>) -> Captured {
    match tokio::time::timeout(DRAIN_GRACE, &mut *capture).await {
        Ok(captured) => captured.unwrap_or_default(),
        Err(_) => {
            capture.abort();
            Captured {
                bytes: Vec::new(),
                truncated: true,
            }
        }
    }
}

async fn capture<R: AsyncRead + Unpin>(stream: Option<R>, limit: usize) -> Captured {
    let mut captured = Captured::default();
    let Some(mut stream) = stream else {
        return captured;
    };
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                let room = limit.saturating_sub(captured.bytes.len());
                let chunk = buffer.get(..read).unwrap_or_default();
                if chunk.len() > room {
                    captured.truncated = true;
                }
                captured
                    .bytes
                    .extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
            }
        }
    }
    captured
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn spawn_sh(script: &str, timeout: Duration, limit: usize) -> Running {
        spawn_sh_with(script, timeout, limit, &BTreeMap::new())
    }

    fn spawn_sh_with(
        script: &str,
        timeout: Duration,
        limit: usize,
        env: &BTreeMap<String, String>,
    ) -> Running {
        let argv = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let launch = Launch::Host {
            executable: PathBuf::from("/bin/sh"),
            argv,
            cwd: PathBuf::from("/"),
            env: crate::exec::sandbox::host_env(env).unwrap(),
        };
        start(&Spawn {
            launch: &launch,
            timeout,
            max_output_bytes: limit,
        })
        .unwrap()
    }

    /// Security review: a run inherited the gateway's whole environment, tokens given with
    /// `tokenEnv` included. Cargo sets `CARGO_MANIFEST_DIR` for this test process.
    #[tokio::test]
    async fn starts_with_the_inherited_variables_and_the_requests_only() {
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let env = BTreeMap::from([("FROM_REQUEST".to_owned(), "yes".to_owned())]);
        let script = r#"echo "[$CARGO_MANIFEST_DIR][$FROM_REQUEST][${PATH:+path}]""#;
        let finished = spawn_sh_with(script, Duration::from_secs(10), 1000, &env)
            .finish()
            .await
            .unwrap();
        assert_eq!(finished.stdout.bytes, b"[][yes][path]\n");
    }

    /// Security review: what a run started in the background outlived it and held its output
    /// open, so the call waited for it, timeout or not.
    #[tokio::test]
    async fn kills_what_a_run_left_behind_and_does_not_wait_for_it() {
        let finished = spawn_sh("sleep 30 & echo done", Duration::from_secs(20), 100)
            .finish()
            .await
            .unwrap();
        assert_eq!(finished.stdout.bytes, b"done\n");
        assert!(finished.duration < Duration::from_secs(10));
        let stubborn = spawn_sh(
            "trap '' TERM; sleep 30 & wait",
            Duration::from_millis(200),
            100,
        );
        let started = Instant::now();
        let finished = stubborn.finish().await.unwrap();
        assert!(finished.timed_out);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn keeps_only_the_first_bytes_of_long_output_and_reports_truncation() {
        let run = spawn_sh(
            "head -c 100000 /dev/zero; echo err >&2",
            Duration::from_secs(10),
            1000,
        );
        let finished = run.finish().await.unwrap();
        assert_eq!(finished.exit_code, Some(0));
        assert_eq!(finished.stdout.bytes.len(), 1000);
        assert!(finished.stdout.truncated);
        assert_eq!(finished.stderr.bytes, b"err\n");
        assert!(!finished.stderr.truncated);
    }

    #[tokio::test]
    async fn kills_a_run_at_its_timeout() {
        let run = spawn_sh("sleep 30", Duration::from_millis(200), 10);
        let finished = run.finish().await.unwrap();
        assert!(finished.timed_out);
        assert_eq!(finished.signal, Some(9));
        assert!(finished.duration < Duration::from_secs(10));
    }
}
