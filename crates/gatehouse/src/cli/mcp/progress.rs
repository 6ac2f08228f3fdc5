//! MCP progress notifications while `run_command` waits: that a person has been asked (which
//! approval, where, until when), that the wait goes on, that the command was approved and runs.
//! A client that sent no progress token gets none of this, and nothing is polled for it.
//!
//! Notifications also keep a wait alive: MCP clients that reset their tool-call timeout on
//! progress (the SDKs' `resetTimeoutOnProgress`) do not give up on a person who takes minutes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use gatehouse_chat::sanitize::one_line;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::cli::approval_id::once_held;
use crate::cli::client::ServerArgs;

/// The longest silence while a command waits or runs.
const HEARTBEAT: Duration = Duration::from_secs(10);
/// How often a held approval is looked at, to tell the client once it is decided.
const LOOK_WHILE_PENDING: Duration = Duration::from_secs(2);

/// How much of the command and of the model's description a notice repeats: enough to
/// recognise them in a client's status line.
const MAX_NOTICE_CHARS: usize = 300;

/// Where the client asked for progress on one call. Clones share the count, which must grow
/// with every notification of the call.
#[derive(Clone)]
pub(super) struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    sent: Arc<AtomicU32>,
}

impl Progress {
    /// The call's progress channel, if its `_meta` carries a progress token.
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Option<Self> {
        context.meta.get_progress_token().map(|token| Progress {
            peer: context.peer.clone(),
            token,
            sent: Arc::new(AtomicU32::new(0)),
        })
    }

    /// Sends one notification. A client that went away is not an error here: the call's own
    /// answer (or cancellation) ends the work.
    async fn say(&self, message: String) {
        let step = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
        let notification = ProgressNotificationParam::new(self.token.clone(), f64::from(step))
            .with_message(message);
        let _ = self.peer.notify_progress(notification).await;
    }
}

/// What a pending notice says about where the approval went, beyond the gateway's own
/// surfaces (`--route-*`).
#[derive(Debug, Clone, Default)]
pub(super) struct Notice {
    /// The command as shown to approvers.
    pub(super) command: String,
    /// The model's reason for it.
    pub(super) description: Option<String>,
    /// `channel to [thread]` of the configured route.
    pub(super) route: Option<String>,
}

/// Watches approval `id` of a `system.run` in flight and reports on it through `progress`
/// until the call's answer arrives (the caller drops this future then). Never returns while
/// there is something to report; returns only when the gateway stops answering `get`.
pub(super) async fn watch_run(server: &ServerArgs, id: String, progress: Progress, notice: Notice) {
    let started = Instant::now();
    // The policy may let the command through without anyone (the approval never appears), so
    // the look for it runs beside a plain heartbeat.
    let held = tokio::select! {
        held = once_held(server, &id) => held,
        () = heartbeat(&progress, started, "Working on it") => return,
    };
    let Some(approval) = held else {
        return heartbeat(&progress, started, "Working on it").await;
    };
    progress.say(pending_message(&approval, &notice)).await;
    let mut last_said = Instant::now();
    loop {
        tokio::time::sleep(LOOK_WHILE_PENDING).await;
        let Ok(approval) = server
            .call_async("exec.approval.get", json!({"id": &id}))
            .await
        else {
            return heartbeat(&progress, started, "Working on it").await;
        };
        match approval["state"].as_str() {
            Some("pending") if last_said.elapsed() >= HEARTBEAT => {
                progress
                    .say(format!(
                        "Still waiting for a person to decide on approval {} ({} so far; {})",
                        short(&id),
                        duration(started.elapsed()),
                        expiry(&approval)
                    ))
                    .await;
                last_said = Instant::now();
            }
            Some("pending") => {}
            Some("allowed") => {
                progress
                    .say(format!(
                        "Approved ({} by {}); running",
                        approval["decision"].as_str().unwrap_or("allowed"),
                        approval["resolvedBy"].as_str().unwrap_or("an approver")
                    ))
                    .await;
                return heartbeat(&progress, Instant::now(), "Running").await;
            }
            // Denied, expired or cancelled: the call's answer says so at once.
            _ => return,
        }
    }
}

/// Says `what (N so far)` every [`HEARTBEAT`]; never returns.
async fn heartbeat(progress: &Progress, since: Instant, what: &str) {
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        progress
            .say(format!("{what} ({} so far)", duration(since.elapsed())))
            .await;
    }
}

/// The first notice of a wait: which approval, where it went, how to answer it, until when.
/// The command and the description are the model's text, shown on one line with control
/// characters made visible, as approvers are shown them.
fn pending_message(approval: &Value, notice: &Notice) -> String {
    let id = approval["id"].as_str().unwrap_or_default();
    let why = notice
        .description
        .as_deref()
        .map(|text| format!(" (the agent says: {})", one_line(text, MAX_NOTICE_CHARS)))
        .unwrap_or_default();
    let route = notice
        .route
        .as_deref()
        .map(|route| format!(", and to {route} when approvals.exec forwards by session"))
        .unwrap_or_default();
    format!(
        "Waiting for a person to approve `{}`{why}. Approval {} (id {id}) was sent to the \
         gateway's approvers: the Control UI and the chat channels approvals.exec forwards \
         to{route}. An approver answers there, or with `gatehouse approvals resolve {} \
         allow-once|deny`; {}.",
        one_line(&notice.command, MAX_NOTICE_CHARS),
        short(id),
        short(id),
        expiry(approval)
    )
}

/// The short id approvers see and type: the first 8 hex digits.
fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// "expires in 29m 40s", from the approval's `expiresAtMs`.
fn expiry(approval: &Value) -> String {
    let left = approval["expiresAtMs"]
        .as_u64()
        .map(|at| at.saturating_sub(crate::cli::now_ms()));
    match left {
        Some(ms) => format!("it expires in {}", duration(Duration::from_millis(ms))),
        None => "it expires when the gateway's approval timeout ends".to_owned(),
    }
}

/// `45s`, `3m 05s`, `1h 02m`.
fn duration(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    match (seconds / 3600, seconds / 60 % 60, seconds % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(Duration::from_secs(45)), "45s");
        assert_eq!(duration(Duration::from_secs(185)), "3m 05s");
        assert_eq!(duration(Duration::from_secs(3720)), "1h 02m");
    }

    #[test]
    fn the_pending_notice_names_the_approval_and_how_to_answer_it() {
        let approval = json!({"id": "3f0c1a2b-0000-8000-8000-000000000000", "expiresAtMs": 0});
        let notice = Notice {
            command: "make deploy".into(),
            description: Some("ship the fix".into()),
            route: Some("telegram -100123".into()),
        };
        let message = pending_message(&approval, &notice);
        for part in [
            "`make deploy` (the agent says: ship the fix)",
            "Approval 3f0c1a2b (id 3f0c1a2b-0000-8000-8000-000000000000)",
            "to telegram -100123",
            "gatehouse approvals resolve 3f0c1a2b",
            "it expires in 0s",
        ] {
            assert!(message.contains(part), "{part} missing from: {message}");
        }
    }
}
