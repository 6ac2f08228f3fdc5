//! What the use cases and the chat runtime share: the config, the approvals file and its
//! policies, the approval manager, pending caps, the audit log, the clock, the publisher and the
//! shutdown flag. The chat runtime holds this, never the [`Service`](crate::Service), so nothing
//! it owns reaches back up.

use std::sync::Arc;

use gatehouse_approvals::{
    ApprovalManager, ApprovalRecord, ApprovalState, Clock, CreateApproval, Created, DocumentStore,
    Offered, PendingDecision,
};
use gatehouse_config::Config;
use gatehouse_policy::exec::ExecEvaluation;
use gatehouse_store::approvals_file::{ExecApprovalsStore, Snapshot, SnapshotCache};
use gatehouse_store::audit::AuditKind;
use serde_json::Value;
use tokio::sync::watch;
use uuid::Uuid;

use crate::error::ServiceError;
use crate::exec::allowlist_use::{AllowlistUse, EntryUse};
use crate::exec::audit::Auditor;
use crate::exec::pending::{self, Pending};
use crate::exec::sandbox::Sandboxes;
use crate::policy::cache::{AgentPolicy, PolicyCache};
use crate::publish::Publisher;
use crate::setup::ExecLimits;
use crate::tools::ToolState;

/// Everything the use cases share.
pub(crate) struct Core {
    pub(crate) config: Config,
    pub(crate) file: ExecApprovalsStore,
    /// The last settled version of the file, so a request re-parses it only after a change.
    pub(crate) file_cache: SnapshotCache,
    /// Where per-host state lives when gateways share a database (the chat sessions' too);
    /// `None` for the data directory.
    pub(crate) documents: Option<Arc<dyn DocumentStore>>,
    /// Each agent's policy for the file version in `file_cache`.
    pub(crate) policies: PolicyCache,
    pub(crate) manager: ApprovalManager,
    pub(crate) limits: ExecLimits,
    /// Which sessions run sandboxed, and bubblewrap located once.
    pub(crate) sandboxes: Sandboxes,
    pub(crate) pending: Pending,
    pub(crate) audit: Auditor,
    /// The allowlist entries' last uses, written to the approvals file off the run's path.
    pub(crate) allowlist_use: Arc<AllowlistUse>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) publisher: Arc<dyn Publisher>,
    pub(crate) shutdown: watch::Sender<bool>,
    /// The tool-call gate's resolver, compiled rules and recent decisions.
    pub(crate) tools: ToolState,
}

impl Core {
    /// Whether a graceful shutdown has begun.
    pub(crate) fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Resolves once shutdown has begun; usable from any task.
    pub(crate) fn shutdown_signal(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.shutdown.subscribe();
        async move {
            let _ = receiver.wait_for(|down| *down).await;
        }
    }

    /// Appends to the audit log (asynchronously, in order).
    pub(crate) fn audit(
        &self,
        kind: AuditKind,
        approval_id: Option<&str>,
        run_id: Option<&str>,
        payload: Value,
    ) {
        self.audit.record(kind, approval_id, run_id, payload);
    }

    /// Marks each allowlist entry that let `evaluation`'s segments run for `agent_id`, now
    /// (`lastUsedAt`); written in the background.
    pub(crate) fn record_allowlist_uses(
        &self,
        agent_id: &str,
        command: &str,
        evaluation: &ExecEvaluation,
    ) {
        let used_at_ms = self.clock.now_ms();
        for segment in &evaluation.segments {
            if let Some(entry) = &segment.allowlist_entry {
                self.allowlist_use.record(EntryUse {
                    agent_id,
                    entry,
                    used_at_ms,
                    command,
                    resolved_path: segment
                        .resolved_path
                        .as_ref()
                        .map(|path| path.display().to_string()),
                });
            }
        }
    }

    /// The approvals file as it is now; read per request so edits apply at once.
    pub(crate) fn snapshot(&self) -> Result<Arc<Snapshot>, ServiceError> {
        let now = std::time::SystemTime::now();
        self.file_cache
            .read(&self.file, now)
            .map_err(ServiceError::store)
    }

    /// The policy that applies to `agent` right now, and its `askFallback`.
    pub(crate) fn policy(&self, agent: &str) -> Result<AgentPolicy, ServiceError> {
        let snapshot = self.snapshot()?;
        Ok(self.policies.get(&self.config, &snapshot, agent))
    }

    /// Creates an approval on behalf of `owner` (a token name), counting it against the agent's
    /// pending cap and the token's; expires it at once when `has_route` is false. The returned
    /// claim on the decision may be dropped by callers that answer before it is given (two-phase).
    pub(crate) async fn create(
        &self,
        owner: &str,
        create: CreateApproval,
        has_route: bool,
    ) -> Result<(Created, PendingDecision), ServiceError> {
        let agent = create.request.agent_id.clone().unwrap_or_default();
        let slot = self.pending.reserve(&agent, owner)?;
        let (created, decision) = match self.manager.create_awaited(create).await {
            Ok(created) => created,
            Err(error) => {
                slot.release();
                return Err(error.into());
            }
        };
        slot.commit(created.id, created.offered);
        if !has_route {
            // The forwarder logs the expiry, with the fix, as it logs every approval event.
            self.manager.expire_no_route(created.id).await?;
        }
        Ok((created, decision))
    }

    /// The decisions an operator may still give on `record`: none once it left `pending`, and
    /// never allow-always when this run did not create it.
    pub(crate) fn offered(&self, record: &ApprovalRecord) -> Option<Offered> {
        if record.state != ApprovalState::Pending {
            return None;
        }
        let known = Uuid::parse_str(&record.id)
            .ok()
            .and_then(|id| self.pending.offered(id));
        Some(known.unwrap_or(pending::ONCE_OR_DENY))
    }

    /// Whether `owner` created approval `id` (agents may only see their own).
    pub(crate) fn owns(&self, owner: &str, id: Uuid) -> bool {
        self.pending.owner_of(id).as_deref() == Some(owner)
    }

    /// Whether `id` is an approval this service created (its run carries the approval id).
    pub(crate) fn owns_any(&self, id: Uuid) -> bool {
        self.pending.owner_of(id).is_some()
    }
}
