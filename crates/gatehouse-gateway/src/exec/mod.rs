//! The exec half of the gateway: config, `exec-approvals.json`, the approval manager and the
//! runner, behind one handle the `exec.*` and `system.run` methods share.
//!
//! **Invariants.** Every approval is created through the manager, so it is durable before the
//! requester hears of it; a request nobody can answer (no approval surface connected) is expired
//! at once with `no-approval-route`; an agent never holds more than `max_pending_per_agent`
//! pending approvals, nor a token more than `max_pending_per_token`.

mod allowlist_use;
mod audit;
mod forward;
mod pending;
mod policies;
pub(crate) mod resolve;
pub(crate) mod runner;
mod waiting;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt as _;
use gatehouse_approvals::{
    ApprovalManager, ApprovalRecord, ApprovalRequest, ApprovalState, ApprovalStore, Clock as _,
    CreateApproval, Created, EventSubscription, ManagerConfig, Offered, PendingDecision, Retention,
    SystemClock,
};
use gatehouse_config::Config;
use gatehouse_config::model::GatewayLimitsConfig;
use gatehouse_policy::exec::ExecEvaluation;
use gatehouse_store::approvals_db::{BatchTimesSnapshot, SqliteApprovalStore, SqliteOptions};
use gatehouse_store::approvals_file::{ExecApprovalsStore, Snapshot, SnapshotCache};
use gatehouse_store::audit::AuditKind;
use serde_json::Value;
use uuid::Uuid;

use crate::error::Error;
use crate::hub::EventHub;
use allowlist_use::{AllowlistUse, EntryUse};
use audit::Auditor;
pub(crate) use forward::spawn_forwarder;
use pending::{Pending, PendingLimits};
pub(crate) use policies::AgentPolicy;
use policies::PolicyCache;
use waiting::RequesterGuard;

/// Where the exec state lives and how it is bounded; the binary fills it from config.
#[derive(Debug, Clone)]
pub struct ExecSetup {
    /// The loaded config (policy, agents, tools).
    pub config: Config,
    /// `exec-approvals.json`: host settings and allowlists.
    pub approvals_file: PathBuf,
    /// The SQLite approvals database.
    pub database: PathBuf,
    /// The hash-chained audit log (JSON lines).
    pub audit_log: PathBuf,
    /// Bounds on approvals and runs.
    pub limits: ExecLimits,
}

/// Bounds on approvals and runs; the defaults are the documented ones.
#[derive(Debug, Clone)]
pub struct ExecLimits {
    /// Pending approvals one agent may hold at once.
    pub max_pending_per_agent: usize,
    /// Pending approvals one token may hold at once across every agent id it names.
    pub max_pending_per_token: usize,
    /// Approval timeout when a request names none.
    pub approval_timeout: Duration,
    /// Bytes kept of each of stdout and stderr; the rest is read and dropped.
    pub max_output_bytes: usize,
    /// Run timeout when `system.run` names none.
    pub run_timeout: Duration,
    /// The longest run timeout a request may ask for.
    pub max_run_timeout: Duration,
    /// A run still going after this long is announced with `exec.running`.
    pub running_event_after: Duration,
    /// How long a settled approval stays in the approvals database.
    pub history: Duration,
}

impl Default for ExecLimits {
    fn default() -> Self {
        Self {
            max_pending_per_agent: 64,
            max_pending_per_token: 256,
            approval_timeout: Duration::from_secs(30 * 60),
            max_output_bytes: 64 * 1024,
            // The config crate owns these two: it refuses a config whose run timeout, defaults
            // included, is above the maximum.
            run_timeout: Duration::from_millis(GatewayLimitsConfig::DEFAULT_RUN_TIMEOUT_MS),
            max_run_timeout: Duration::from_millis(GatewayLimitsConfig::DEFAULT_MAX_RUN_TIMEOUT_MS),
            running_event_after: Duration::from_secs(1),
            history: Duration::from_secs(30 * 24 * 60 * 60),
        }
    }
}

/// A cheap handle on the exec state; clones share it.
#[derive(Clone)]
pub struct ExecServices {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    file: ExecApprovalsStore,
    /// The last settled version of the file, so a request re-parses it only after a change.
    file_cache: SnapshotCache,
    /// Each agent's policy for the file version in `file_cache`.
    policies: PolicyCache,
    manager: ApprovalManager,
    /// The manager's store too, for the batch times `GET /metrics` reports.
    database: Arc<SqliteApprovalStore>,
    limits: ExecLimits,
    pending: Pending,
    audit: Auditor,
    /// The allowlist entries' last uses, written to the approvals file off the run's path.
    allowlist_use: Arc<AllowlistUse>,
    /// The manager's first subscription, which holds the restart cancellations; taken once by
    /// the forwarder.
    startup_events: Mutex<Option<EventSubscription>>,
}

impl std::fmt::Debug for ExecServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecServices")
            .field("approvals_file", &self.inner.file.path())
            .field("manager", &self.inner.manager)
            .finish_non_exhaustive()
    }
}

impl ExecServices {
    /// Opens the database (cancelling approvals an earlier run left pending), makes sure
    /// `exec-approvals.json` exists with mode 0600, and starts the approval manager. Must run
    /// inside a tokio runtime.
    pub async fn start(setup: ExecSetup) -> Result<Self, Error> {
        let audit = Auditor::open(&setup.audit_log)?;
        let file = ExecApprovalsStore::new(&setup.approvals_file);
        let snapshot = file.ensure().map_err(|error| Error::Store {
            reason: error.to_string(),
        })?;
        for note in &snapshot.report.notes {
            tracing::warn!(path = %snapshot.path.display(), %note, "Approvals file note.");
        }
        let database = SqliteApprovalStore::open(&setup.database, SqliteOptions::default())
            .map_err(database_refused)?;
        let database = Arc::new(database);
        let config = ManagerConfig {
            default_timeout: setup.limits.approval_timeout,
            retention: Retention {
                history_ms: u64::try_from(setup.limits.history.as_millis()).unwrap_or(u64::MAX),
            },
            ..ManagerConfig::default()
        };
        let (manager, startup) = ApprovalManager::start(
            Arc::clone(&database) as Arc<dyn ApprovalStore>,
            Arc::new(file.clone()),
            Arc::new(SystemClock),
            config,
        )
        .await
        .map_err(Error::from)?;
        Ok(Self {
            inner: Arc::new(Inner {
                config: setup.config,
                file: file.clone(),
                file_cache: SnapshotCache::new(),
                policies: PolicyCache::default(),
                manager,
                database,
                pending: Pending::new(PendingLimits {
                    per_agent: setup.limits.max_pending_per_agent,
                    per_token: setup.limits.max_pending_per_token,
                }),
                limits: setup.limits,
                audit,
                allowlist_use: Arc::new(AllowlistUse::new(file.clone())),
                startup_events: Mutex::new(Some(startup)),
            }),
        })
    }

    /// Every refusal [`ExecServices::start`] would stop at in `setup`'s audit log and approvals
    /// database (a loose mode, a broken chain, a schema newer than this build, a file that is
    /// no database), found by the same checks and worded as the same errors, without writing
    /// anything, so it may run beside a gateway using them. `gatehouse doctor` runs it; the
    /// approvals file it reads itself, for the policy it shows.
    pub fn check(setup: &ExecSetup) -> Vec<Error> {
        let audit = Auditor::check(&setup.audit_log);
        let database = SqliteApprovalStore::check(&setup.database)
            .map(drop)
            .map_err(database_refused);
        [audit, database]
            .into_iter()
            .filter_map(Result::err)
            .collect()
    }

    pub(crate) fn config(&self) -> &Config {
        &self.inner.config
    }

    pub(crate) fn manager(&self) -> &ApprovalManager {
        &self.inner.manager
    }

    /// How long the approvals database's write batches have taken: a slow disk shows here.
    pub(crate) fn database_batch_times(&self) -> BatchTimesSnapshot {
        self.inner.database.batch_times()
    }

    pub(crate) fn limits(&self) -> &ExecLimits {
        &self.inner.limits
    }

    pub(crate) fn file(&self) -> &ExecApprovalsStore {
        &self.inner.file
    }

    /// Appends to the audit log (asynchronously, in order).
    pub(crate) fn audit(
        &self,
        kind: AuditKind,
        approval_id: Option<&str>,
        run_id: Option<&str>,
        payload: Value,
    ) {
        self.inner.audit.record(kind, approval_id, run_id, payload);
    }

    /// Marks each allowlist entry that let `evaluation`'s segments run for `agent_id`, now
    /// (`lastUsedAt`); written in the background.
    pub(crate) fn record_allowlist_uses(
        &self,
        agent_id: &str,
        command: &str,
        evaluation: &ExecEvaluation,
    ) {
        let used_at_ms = SystemClock.now_ms();
        for segment in &evaluation.segments {
            if let Some(entry) = &segment.allowlist_entry {
                self.inner.allowlist_use.record(EntryUse {
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

    pub(crate) fn pending(&self) -> &Pending {
        &self.inner.pending
    }

    /// The approvals file as it is now; read per request so edits apply at once.
    pub(crate) fn snapshot(&self) -> Result<Arc<Snapshot>, Error> {
        let now = std::time::SystemTime::now();
        self.inner
            .file_cache
            .read(&self.inner.file, now)
            .map_err(|error| Error::Store {
                reason: error.to_string(),
            })
    }

    /// The policy that applies to `agent` right now, and its `askFallback`.
    pub(crate) fn policy(&self, agent: &str) -> Result<AgentPolicy, Error> {
        let snapshot = self.snapshot()?;
        Ok(self
            .inner
            .policies
            .get(&self.inner.config, &snapshot, agent))
    }

    /// Creates an approval on behalf of `owner` (a token name), counting it against the agent's
    /// pending cap and the token's; expires it at once when `has_route` is false. The returned
    /// claim on the decision may be dropped by callers that answer before it is given (two-phase).
    pub(crate) async fn create(
        &self,
        owner: &str,
        create: CreateApproval,
        has_route: bool,
    ) -> Result<(Created, PendingDecision), Error> {
        let agent = create.request.agent_id.clone().unwrap_or_default();
        let slot = self.inner.pending.reserve(&agent, owner)?;
        let (created, decision) = match self.inner.manager.create_awaited(create).await {
            Ok(created) => created,
            Err(error) => {
                slot.release();
                return Err(error.into());
            }
        };
        slot.commit(created.id, created.offered);
        if !has_route {
            tracing::info!(approval_id = %created.id, "No approval surface connected; expiring.");
            self.inner.manager.expire_no_route(created.id).await?;
        }
        Ok((created, decision))
    }

    /// Creates an approval for `owner` and waits for its decision. If the requester goes away
    /// (the socket closes, the HTTP client disconnects) at any moment — even while the approval
    /// is still being created — it is cancelled with reason `requester-gone`, so nobody approves
    /// a command nobody will run (see [`waiting`]).
    ///
    /// A person may take minutes and a stopping gateway has `shutdown_grace`, so once shutdown
    /// begins the wait answers [`Error::ShuttingDown`] at once (and a wait that would start
    /// during shutdown creates nothing). The approval is then left pending in the store, not
    /// cancelled: the requester did not give up, and the next start cancels it with
    /// `gateway-restart` as it does every approval a stop left pending.
    pub(crate) async fn create_and_await(
        &self,
        owner: &str,
        create: CreateApproval,
        has_route: bool,
        state: &crate::GatewayState,
    ) -> Result<ApprovalRecord, Error> {
        let mut shutdown = std::pin::pin!(state.shutdown_signal());
        if (&mut shutdown).now_or_never().is_some() {
            return Err(Error::ShuttingDown);
        }
        let exec = self.clone();
        let owner = owner.to_owned();
        let creating: waiting::Creating =
            Box::pin(async move { exec.create(&owner, create, has_route).await });
        let mut guard = RequesterGuard::new(self.clone(), state.clone(), creating);
        let (created, decision) = guard.created().await?;
        // A decision wins a tie with shutdown.
        let answer = tokio::select! {
            biased;
            record = decision.decided() => record.map_err(Error::from),
            () = &mut shutdown => {
                tracing::info!(approval_id = %created.id, "Shutting down; the approval stays pending until the next start cancels it.");
                Err(Error::ShuttingDown)
            }
        };
        guard.answered();
        answer
    }

    /// The decisions an operator may still give on `record`: none once it left `pending`, and
    /// never allow-always when this run did not create it.
    pub(crate) fn offered(&self, record: &ApprovalRecord) -> Option<Offered> {
        if record.state != ApprovalState::Pending {
            return None;
        }
        let known = Uuid::parse_str(&record.id)
            .ok()
            .and_then(|id| self.inner.pending.offered(id));
        Some(known.unwrap_or(pending::ONCE_OR_DENY))
    }

    /// Whether `owner` created approval `id` (agents may only see their own).
    pub(crate) fn owns(&self, owner: &str, id: Uuid) -> bool {
        self.inner.pending.owner_of(id).as_deref() == Some(owner)
    }

    /// Whether `id` is an approval this gateway created (its run carries the approval id).
    pub(crate) fn owns_any(&self, id: Uuid) -> bool {
        self.inner.pending.owner_of(id).is_some()
    }

    pub(crate) fn take_startup_events(&self) -> Option<EventSubscription> {
        self.inner
            .startup_events
            .lock()
            .ok()
            .and_then(|mut slot| slot.take())
    }
}

/// The approvals database's refusal to open, as `start` and `check` report it.
fn database_refused(error: gatehouse_store::StoreError) -> Error {
    Error::Store {
        reason: error.to_string(),
    }
}

/// Reason recorded when the requester stopped waiting.
pub(crate) const REASON_REQUESTER_GONE: &str = "requester-gone";

/// Whether anyone can answer an approval now: a WebSocket client allowed to resolve approvals,
/// or a chat route the request would be delivered to.
pub(crate) fn has_approval_route(state: &crate::GatewayState, request: &ApprovalRequest) -> bool {
    let hub: &EventHub = state.events();
    hub.has_subscriber(crate::scope::Access::Scope(crate::scope::Scope::Approvals))
        || state.chat().is_some_and(|chat| chat.has_route(request))
}
