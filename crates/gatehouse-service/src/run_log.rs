//! Run events in a shared store's event log, so every gateway announces them, numbered, among
//! the approval events, and a client replays them on any gateway (docs/high-availability.md,
//! "One event sequence").
//!
//! The log holds what the announcement needs and nothing more: the run's output never leaves
//! the gateway that ran it (only whether it was truncated). The encoding is this crate's own
//! JSON, not the protocol's frame, so the wire stays the transport's to spell.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_approvals::RunNote;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::core::Core;
use crate::exec::runner::{Captured, Finished};
use crate::publish::{Denial, RunEvent};

/// A run event as the log holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
enum Body {
    Running {
        agent_id: String,
        argv: Vec<String>,
        cwd: String,
    },
    Finished {
        exit_code: Option<i32>,
        signal: Option<i32>,
        timed_out: bool,
        duration_ms: u64,
        stdout_truncated: bool,
        stderr_truncated: bool,
    },
    Denied {
        reason: String,
        detail: String,
    },
}

impl Body {
    fn of(event: &RunEvent<'_>) -> (Uuid, Body) {
        match *event {
            RunEvent::Running {
                run_id,
                agent_id,
                argv,
                cwd,
            } => (
                run_id,
                Body::Running {
                    agent_id: agent_id.to_owned(),
                    argv: argv.to_vec(),
                    cwd: cwd.display().to_string(),
                },
            ),
            RunEvent::Finished { run_id, finished } => (
                run_id,
                Body::Finished {
                    exit_code: finished.exit_code,
                    signal: finished.signal,
                    timed_out: finished.timed_out,
                    duration_ms: u64::try_from(finished.duration.as_millis()).unwrap_or(u64::MAX),
                    stdout_truncated: finished.stdout.truncated,
                    stderr_truncated: finished.stderr.truncated,
                },
            ),
            RunEvent::Denied {
                run_id,
                denial,
                detail,
            } => (
                run_id,
                Body::Denied {
                    reason: denial.as_str().to_owned(),
                    detail: detail.to_owned(),
                },
            ),
        }
    }
}

/// A run event read back from the log (or kept for announcing locally), owning what a
/// [`RunEvent`] borrows.
#[derive(Debug)]
pub struct LoggedRun {
    run_id: Uuid,
    event: Owned,
}

#[derive(Debug)]
enum Owned {
    Running {
        agent_id: String,
        argv: Vec<String>,
        cwd: PathBuf,
    },
    /// Without the output, which is never logged: its `Captured` bytes are empty.
    Finished(Finished),
    Denied {
        denial: Denial,
        detail: String,
    },
}

impl LoggedRun {
    /// The run event a log entry holds; `None` when the body is not one this build writes (a
    /// newer build's, or damaged).
    pub fn decode(run_id: Uuid, body: &str) -> Option<LoggedRun> {
        let body: Body = serde_json::from_str(body).ok()?;
        LoggedRun::from_body(run_id, body)
    }

    /// An owned copy of `event`, as it would read back from the log.
    fn copy_of(event: &RunEvent<'_>) -> Option<LoggedRun> {
        let (run_id, body) = Body::of(event);
        LoggedRun::from_body(run_id, body)
    }

    fn from_body(run_id: Uuid, body: Body) -> Option<LoggedRun> {
        let event = match body {
            Body::Running {
                agent_id,
                argv,
                cwd,
            } => Owned::Running {
                agent_id,
                argv,
                cwd: PathBuf::from(cwd),
            },
            Body::Finished {
                exit_code,
                signal,
                timed_out,
                duration_ms,
                stdout_truncated,
                stderr_truncated,
            } => Owned::Finished(Finished {
                exit_code,
                signal,
                timed_out,
                duration: Duration::from_millis(duration_ms),
                stdout: Captured {
                    bytes: Vec::new(),
                    truncated: stdout_truncated,
                },
                stderr: Captured {
                    bytes: Vec::new(),
                    truncated: stderr_truncated,
                },
            }),
            Body::Denied { reason, detail } => Owned::Denied {
                denial: Denial::parse(&reason)?,
                detail,
            },
        };
        Some(LoggedRun { run_id, event })
    }

    /// The event, as the service announces it.
    pub fn event(&self) -> RunEvent<'_> {
        let run_id = self.run_id;
        match &self.event {
            Owned::Running {
                agent_id,
                argv,
                cwd,
            } => RunEvent::Running {
                run_id,
                agent_id,
                argv,
                cwd,
            },
            Owned::Finished(finished) => RunEvent::Finished { run_id, finished },
            Owned::Denied { denial, detail } => RunEvent::Denied {
                run_id,
                denial: *denial,
                detail,
            },
        }
    }
}

/// Announces a run event and returns the payload operators are told (for the audit log).
///
/// On a shared store it is appended to the event log, behind this gateway's earlier writes,
/// and announced by every gateway when they read it there, with its number. The run never
/// waits for that: the append is queued and its outcome awaited on a task of its own. If it
/// fails (the database unreachable, the writer's queue full), the event is announced to this
/// gateway's operators at once, as a single gateway would (without a number of its own), and
/// a warning says that the other gateways' operators will not see it.
pub(crate) fn announce(core: &Core, event: &RunEvent<'_>) -> Value {
    let (run_id, body) = Body::of(event);
    let body = match serde_json::to_string(&body) {
        Ok(body) => body,
        Err(error) => {
            tracing::warn!(%error, %run_id, "Could not encode a run event for the event log.");
            return core.publisher.run_event(event);
        }
    };
    let Some(appended) = core.manager.log_run(RunNote { run_id, body }) else {
        return core.publisher.run_event(event);
    };
    let payload = core.publisher.run_payload(event);
    let publisher = Arc::clone(&core.publisher);
    let fallback = LoggedRun::copy_of(event);
    tokio::spawn(async move {
        if let Err(error) = appended.await {
            tracing::warn!(
                %error,
                %run_id,
                "Could not add a run event to the shared event log; announced to this \
                 gateway's operators only (other gateways' operators will not see it)."
            );
            if let Some(fallback) = fallback {
                publisher.run_event(&fallback.event());
            }
        }
    });
    payload
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn a_run_event_reads_back_from_its_encoding_as_it_was_without_the_output() {
        let run_id = Uuid::new_v4();
        let argv = vec!["echo".to_owned(), "a b".to_owned()];
        let finished = Finished {
            exit_code: Some(3),
            signal: None,
            timed_out: true,
            duration: Duration::from_millis(1_250),
            stdout: Captured {
                bytes: b"secret output".to_vec(),
                truncated: true,
            },
            stderr: Captured::default(),
        };
        let events = [
            RunEvent::Running {
                run_id,
                agent_id: "ops",
                argv: &argv,
                cwd: Path::new("/srv/work"),
            },
            RunEvent::Finished {
                run_id,
                finished: &finished,
            },
            RunEvent::Denied {
                run_id,
                denial: Denial::BindingMismatch,
                detail: "script changed",
            },
        ];
        for event in &events {
            let (id, body) = Body::of(event);
            let encoded = serde_json::to_string(&body).unwrap();
            assert!(!encoded.contains("secret output"), "{encoded}");
            let decoded = LoggedRun::decode(id, &encoded).unwrap();
            assert_eq!(
                format!("{:?}", Body::of(&decoded.event())),
                format!("{:?}", (run_id, body))
            );
        }
        assert!(LoggedRun::decode(run_id, r#"{"event":"exploded"}"#).is_none());
        let unknown_reason = r#"{"event":"denied","reason":"moon-phase","detail":""}"#;
        assert!(LoggedRun::decode(run_id, unknown_reason).is_none());
    }
}
