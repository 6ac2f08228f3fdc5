//! Runs one approved argv on the gateway host: no shell is added, output is bounded, and the
//! process is killed at its timeout.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::process::Command;

/// What to run: the program is the already-resolved executable, so `PATH` cannot redirect it
/// between binding and spawn.
#[derive(Debug)]
pub(crate) struct Spawn<'a> {
    pub(crate) executable: &'a Path,
    pub(crate) argv: &'a [String],
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a BTreeMap<String, String>,
    pub(crate) timeout: Duration,
    pub(crate) max_output_bytes: usize,
}

/// How a run ended.
#[derive(Debug, Default)]
pub(crate) struct Finished {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) duration: Duration,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
}

/// The first bytes of a stream; the rest was read and dropped so the child never blocks.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) bytes: Vec<u8>,
    pub(crate) truncated: bool,
}

/// Starts the process; spawning failures are reported, never retried through a shell.
pub(crate) fn start(spawn: &Spawn<'_>) -> std::io::Result<Running> {
    let mut command = Command::new(spawn.executable);
    if let Some(name) = spawn.argv.first() {
        std::os::unix::process::CommandExt::arg0(command.as_std_mut(), name);
    }
    command
        .args(spawn.argv.iter().skip(1))
        .current_dir(spawn.cwd)
        .envs(spawn.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn()?;
    Ok(Running {
        child,
        started: Instant::now(),
        timeout: spawn.timeout,
        limit: spawn.max_output_bytes,
        executable: spawn.executable.to_path_buf(),
    })
}

/// A started process.
#[derive(Debug)]
pub(crate) struct Running {
    child: tokio::process::Child,
    started: Instant,
    timeout: Duration,
    limit: usize,
    executable: PathBuf,
}

impl Running {
    /// Waits for the process (killing it at the timeout) and collects bounded output.
    pub(crate) async fn finish(mut self) -> std::io::Result<Finished> {
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        let limit = self.limit;
        let out = tokio::spawn(capture(stdout, limit));
        let err = tokio::spawn(capture(stderr, limit));
        let (status, timed_out) = match tokio::time::timeout(self.timeout, self.child.wait()).await
        {
            Ok(status) => (status?, false),
            Err(_) => {
                tracing::info!(executable = %self.executable.display(), "Run timed out; killing it.");
                self.child.kill().await?;
                (self.child.wait().await?, true)
            }
        };
        let duration = self.started.elapsed();
        Ok(Finished {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out,
            duration,
            stdout: out.await.unwrap_or_default(),
            stderr: err.await.unwrap_or_default(),
        })
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
    use super::*;

    fn spawn_sh(script: &str, timeout: Duration, limit: usize) -> Running {
        let argv = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        start(&Spawn {
            executable: Path::new("/bin/sh"),
            argv: &argv,
            cwd: Path::new("/"),
            env: &BTreeMap::new(),
            timeout,
            max_output_bytes: limit,
        })
        .unwrap()
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
