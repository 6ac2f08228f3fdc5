//! Cancels an approval whose requester stopped waiting, without a task per request.
//!
//! A blocking request is served in the caller's own future: creating the approval, then
//! waiting for its decision. A transport drops that future when the requester goes away (the socket closes, the HTTP client disconnects), and [`RequesterGuard`] acts on
//! the drop: an approval already created is cancelled with `requester-gone`, so nobody approves
//! a command nobody will run; a creation still under way is finished in a background task and
//! then cancelled, since its row may already be queued. During a shutdown it does neither: the
//! connection was closed by the gateway, not given up by the requester, and the next start
//! cancels what a stop left pending (`gateway-restart`).
//!
//! An earlier design ran every blocking request in a spawned task that watched the caller's
//! answer channel; the spawn, the extra wake-up of that task on the decision and the hand-off
//! back to the caller were on every approval's path.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use gatehouse_approvals::{Created, PendingDecision};
use uuid::Uuid;

use crate::core::Core;
use crate::error::ServiceError;

/// Reason recorded when the requester stopped waiting.
const REASON_REQUESTER_GONE: &str = "requester-gone";

/// A creation in progress, owned so it can outlive its requester.
pub(crate) type Creating =
    Pin<Box<dyn Future<Output = Result<(Created, PendingDecision), ServiceError>> + Send>>;

/// Where a blocking request stands, for what dropping it must undo.
enum Stage {
    Creating(Creating),
    Waiting(Uuid),
    Answered,
}

/// Undoes a blocking request's approval when the request is dropped before its answer.
pub(crate) struct RequesterGuard {
    core: Arc<Core>,
    stage: Stage,
}

impl RequesterGuard {
    pub(crate) fn new(core: Arc<Core>, creating: Creating) -> Self {
        Self {
            core,
            stage: Stage::Creating(creating),
        }
    }

    /// Drives the creation; from then on a drop cancels the created approval.
    pub(crate) async fn created(&mut self) -> Result<(Created, PendingDecision), ServiceError> {
        let Stage::Creating(creating) = &mut self.stage else {
            return Err(ServiceError::Internal {
                reason: "the approval was already created".to_owned(),
            });
        };
        let result = creating.as_mut().await;
        self.stage = match &result {
            Ok((created, _)) => Stage::Waiting(created.id),
            Err(_) => Stage::Answered,
        };
        result
    }

    /// The requester has its answer (or a shutdown answered for it): nothing left to undo.
    pub(crate) fn answered(&mut self) {
        self.stage = Stage::Answered;
    }
}

impl Drop for RequesterGuard {
    fn drop(&mut self) {
        let stage = std::mem::replace(&mut self.stage, Stage::Answered);
        if matches!(stage, Stage::Answered) || self.core.is_shutting_down() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("A requester left outside the runtime; its approval stays pending.");
            return;
        };
        let manager = self.core.manager.clone();
        runtime.spawn(async move {
            let id = match stage {
                Stage::Waiting(id) => id,
                Stage::Creating(creating) => match creating.await {
                    Ok((created, _)) => created.id,
                    Err(_) => return,
                },
                Stage::Answered => return,
            };
            // Losing the race to a decision is fine: the store keeps the first answer.
            if let Err(error) = manager.cancel(id, REASON_REQUESTER_GONE).await {
                tracing::debug!(approval_id = %id, error = %error, "Cancel after requester left failed.");
            }
        });
    }
}
