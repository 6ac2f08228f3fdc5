//! The service object: what every use case shares, behind one cheap handle.
//!
//! **Invariants.** Every approval is created through the manager, so it is durable before the
//! requester hears of it; a request nobody can answer (no approver listening, no chat route) is
//! expired at once with `no-approval-route`; an agent never holds more than
//! `max_pending_per_agent` pending approvals, nor a token more than `max_pending_per_token`.

use std::sync::{Arc, OnceLock};

use futures_util::FutureExt as _;
use gatehouse_approvals::{
    ApprovalEvent, ApprovalManager, ApprovalRecord, ApprovalRequest, ApprovalStore, Clock,
    CreateApproval, DocumentStore, ManagerConfig, Retention, RoutePresence,
};
use gatehouse_store::approvals_file::{ExecApprovalsStore, Import, SnapshotCache};
use tokio::sync::watch;

use crate::chat::{ChatRuntime, ChatSetup, ChatStatus};
use crate::core::Core;
use crate::dns::Resolver;
use crate::error::ServiceError;
use crate::exec::allowlist_use::AllowlistUse;
use crate::exec::audit::Auditor;
use crate::exec::forward::spawn_forwarder;
use crate::exec::pending::{Pending, PendingLimits};
use crate::exec::sandbox::Sandboxes;
use crate::exec::waiting::{Creating, RequesterGuard};
use crate::policy::cache::PolicyCache;
use crate::publish::Publisher;
use crate::routes::{self, RoutesElsewhere};
use crate::setup::ServiceSetup;
use crate::tools::ToolState;
use gatehouse_policy::files::ProtectedPath;

/// What the service is given rather than makes: where approvals are stored, the clock, and
/// where operators hear of events. Each is a trait, so the store, the clock and the transport
/// are the caller's choice.
pub struct Ports {
    /// The approvals database (`gatehouse-store`'s SQLite one, or any other store).
    pub store: Arc<dyn ApprovalStore>,
    /// The wall clock (the system's; tests may pass tokio's).
    pub clock: Arc<dyn Clock>,
    /// Where events go, and who is listening (the gateway's event hub).
    pub publisher: Arc<dyn Publisher>,
}

/// The application: the use cases as plain async functions on one handle. Cheap to clone.
#[derive(Clone)]
pub struct Service {
    shared: Arc<Shared>,
}

struct Shared {
    core: Arc<Core>,
    /// The chat runtime, once [`Service::start_chat`] ran.
    chat: OnceLock<Arc<ChatRuntime>>,
    /// Whether other gateways sharing the store have approval routes, once
    /// [`Service::share_routes`] ran.
    routes_elsewhere: OnceLock<Arc<RoutesElsewhere>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("approvals_file", &self.core().file.path())
            .field("manager", &self.core().manager)
            .finish_non_exhaustive()
    }
}

/// A service whose own files are open and checked, waiting for its [`Ports`]: a caller that
/// opens the store itself does so after these, so a start reports the same first refusal
/// whoever opens what.
pub struct Prepared {
    setup: ServiceSetup,
    audit: Auditor,
    file: ExecApprovalsStore,
    /// Where per-host state lives when several gateways share a database.
    documents: Option<Arc<dyn DocumentStore>>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("approvals_file", &self.file.path())
            .finish_non_exhaustive()
    }
}

impl Service {
    /// [`Service::prepare`], then [`Prepared::start`].
    pub async fn start(setup: ServiceSetup, ports: Ports) -> Result<Self, ServiceError> {
        Self::prepare(setup)?.start(ports).await
    }

    /// Opens the audit log (verifying it and repairing a torn tail) and reads
    /// `exec-approvals.json`, refusing one it cannot read (the start then makes sure it exists
    /// with mode 0600, or imports it into a shared store).
    pub fn prepare(setup: ServiceSetup) -> Result<Prepared, ServiceError> {
        let audit = Auditor::open(&setup.audit_log)?;
        let file = ExecApprovalsStore::new(&setup.approvals_file);
        file.read().map_err(ServiceError::store)?;
        Ok(Prepared {
            setup,
            audit,
            file,
            documents: None,
        })
    }

    /// Every refusal [`Service::start`] would stop at in `setup`'s audit log (a loose mode, a
    /// broken chain), found by the same checks and worded as the same errors, without writing
    /// anything, so it may run beside a running service. `gatehouse doctor` runs it; the
    /// approvals file it reads itself, for the policy it shows, and the approvals database is
    /// its store's to check.
    pub fn check_files(setup: &ServiceSetup) -> Vec<ServiceError> {
        Auditor::check(&setup.audit_log).err().into_iter().collect()
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.shared.core
    }

    /// The chat runtime, once [`start_chat`](Self::start_chat) ran.
    pub(crate) fn chat(&self) -> Option<&Arc<ChatRuntime>> {
        self.shared.chat.get()
    }

    /// Starts chat approvals: validates the chat config, subscribes to approval events, edits
    /// the cards of approvals the restart cancelled, and runs every adapter until shutdown; on
    /// a store several gateways share (`ChatSetup::shared`), all of that once this gateway
    /// holds the chat lease. Must run inside a tokio runtime; call it once.
    pub fn start_chat(&self, setup: ChatSetup) -> Result<(), ServiceError> {
        let runtime = ChatRuntime::new(Arc::clone(self.core()), &setup)?;
        self.shared
            .chat
            .set(Arc::clone(&runtime))
            .map_err(|_| ServiceError::InvalidSettings {
                reason: "chat approvals were already started".into(),
            })?;
        runtime.run(setup);
        Ok(())
    }

    /// Counts approval routes of the other gateways sharing the store: from now on a request
    /// is expired for want of a route only when no live gateway has one (see `routes`).
    /// Must run inside a tokio runtime; later calls do nothing.
    pub fn share_routes(&self, presence: Arc<dyn RoutePresence>) {
        let elsewhere = Arc::new(RoutesElsewhere::default());
        if self
            .shared
            .routes_elsewhere
            .set(Arc::clone(&elsewhere))
            .is_err()
        {
            return;
        }
        let service = Arc::downgrade(&self.shared);
        routes::spawn_heartbeat(presence, Arc::downgrade(&elsewhere), move || {
            let shared = service.upgrade()?;
            Some(Service { shared }.reaches_an_approver())
        });
    }

    /// Whether an approver can be reached through this gateway: an operator listening, or a
    /// chat channel running.
    fn reaches_an_approver(&self) -> bool {
        self.core().publisher.approvers_connected()
            || self.chat().is_some_and(|chat| chat.reaches_anyone())
    }

    /// Resolves, with why, if this gateway loses the chat lease it held (on a store several
    /// gateways share): it must then stop, since its chat connections would compete with the
    /// new holder's. Never resolves otherwise.
    pub fn chat_lease_lost(&self) -> impl Future<Output = String> + Send + 'static {
        let lost = self.chat().map(|chat| chat.lease_lost());
        async move {
            match lost {
                Some(lost) => lost.await,
                None => std::future::pending().await,
            }
        }
    }

    /// Chat approvals' status, once [`Service::start_chat`] ran (always under `serve`, with
    /// empty lists when no channel is configured).
    pub async fn chat_status(&self) -> Option<ChatStatus> {
        match self.chat() {
            Some(chat) => Some(chat.status().await),
            None => None,
        }
    }

    /// How many approvals wait for a person now (those being created included): what
    /// `gateway.status` reports, so an operator sees work waiting without listing it.
    pub fn pending_count(&self) -> usize {
        self.core().pending.total()
    }

    /// On a store several gateways share, the events its log holds after `after` (approval
    /// events, and run events as [`EventKind::Run`](gatehouse_approvals::EventKind::Run)),
    /// oldest first, at most `limit`, as they were published: what a client reconnecting with
    /// `since` missed, wherever it was connected. Empty on a store this gateway alone writes.
    pub async fn logged_approval_events(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<ApprovalEvent>, ServiceError> {
        let logged = self
            .core()
            .manager
            .logged_events_after(after, limit)
            .await?;
        Ok(logged.unwrap_or_default())
    }

    /// Starts a graceful shutdown: calls waiting for a person answer
    /// [`ServiceError::ShuttingDown`] at once, and new ones do not start waiting. Idempotent.
    pub fn begin_shutdown(&self) {
        self.core().shutdown.send_replace(true);
    }

    /// Whether [`begin_shutdown`](Self::begin_shutdown) was called.
    pub fn is_shutting_down(&self) -> bool {
        self.core().is_shutting_down()
    }

    /// Resolves once shutdown has begun; usable from any task.
    pub(crate) fn shutdown_signal(&self) -> impl Future<Output = ()> + Send + 'static {
        self.core().shutdown_signal()
    }

    /// Whether anyone can answer an approval now: an operator listening, a chat route the
    /// request would be delivered to, or (on a shared store) another live gateway with either.
    pub(crate) fn has_approval_route(&self, request: &ApprovalRequest) -> bool {
        self.core().publisher.approvers_connected()
            || self.chat().is_some_and(|chat| chat.has_route(request))
            || self
                .shared
                .routes_elsewhere
                .get()
                .is_some_and(|elsewhere| elsewhere.any())
    }

    /// Creates an approval for `owner` and waits for its decision. If the requester goes away
    /// (its future is dropped) at any moment — even while the approval is still being created —
    /// it is cancelled with reason `requester-gone`, so nobody approves a command nobody will
    /// run (see `exec/waiting.rs`).
    ///
    /// A person may take minutes and a stopping gateway has a shutdown grace, so once shutdown
    /// begins the wait answers [`ServiceError::ShuttingDown`] at once (and a wait that would
    /// start during shutdown creates nothing). The approval is then left pending in the store,
    /// not cancelled: the requester did not give up, and the next start cancels it with
    /// `gateway-restart` as it does every approval a stop left pending.
    pub(crate) async fn create_and_await(
        &self,
        owner: &str,
        create: CreateApproval,
    ) -> Result<ApprovalRecord, ServiceError> {
        let mut shutdown = std::pin::pin!(self.shutdown_signal());
        if (&mut shutdown).now_or_never().is_some() {
            return Err(ServiceError::ShuttingDown);
        }
        let has_route = self.has_approval_route(&create.request);
        let core = Arc::clone(self.core());
        let owner = owner.to_owned();
        let creating: Creating =
            Box::pin(async move { core.create(&owner, create, has_route).await });
        let mut guard = RequesterGuard::new(Arc::clone(self.core()), creating);
        let (created, decision) = guard.created().await?;
        // A decision wins a tie with shutdown.
        let answer = tokio::select! {
            biased;
            record = decision.decided() => record.map_err(ServiceError::from),
            () = &mut shutdown => {
                tracing::info!(approval_id = %created.id, "Shutting down; the approval stays pending until the next start cancels it.");
                Err(ServiceError::ShuttingDown)
            }
        };
        guard.answered();
        answer
    }
}

impl Prepared {
    /// Keeps the per-host state (`exec-approvals.json`, the chat sessions' `/elevated` levels)
    /// in `documents`, shared by every gateway on the same database, instead of the data
    /// directory.
    pub fn share_state(mut self, documents: Arc<dyn DocumentStore>) -> Self {
        self.documents = Some(documents);
        self
    }

    /// Starts the approval manager on `ports.store` (cancelling approvals an earlier run left
    /// pending) and starts passing its events to `ports.publisher`. Must run inside a tokio
    /// runtime.
    pub async fn start(self, ports: Ports) -> Result<Service, ServiceError> {
        let Prepared {
            setup,
            audit,
            file,
            documents,
        } = self;
        let file = open_approvals_file(file, documents.clone()).await?;
        // `approvals.exec.timeout`, the reference's key, sets the default for every approval.
        let default_timeout = setup
            .config
            .approvals
            .exec
            .as_ref()
            .and_then(|exec| exec.timeout)
            .unwrap_or(setup.limits.approval_timeout);
        let config = ManagerConfig {
            default_timeout,
            retention: Retention {
                history_ms: u64::try_from(setup.limits.history.as_millis()).unwrap_or(u64::MAX),
            },
            ..ManagerConfig::default()
        };
        let (manager, startup) = ApprovalManager::start(
            ports.store,
            Arc::new(file.clone()),
            Arc::clone(&ports.clock),
            config,
        )
        .await?;
        let sandboxes = Sandboxes::new(&setup.config, setup.sandbox_host);
        let resolver = Resolver::from_config(setup.config.gateway.dns.as_ref());
        let mut protected = setup.protected;
        for (path, what) in [
            (&setup.approvals_file, "the gateway's exec-approvals.json"),
            (&setup.audit_log, "the gateway's audit log"),
        ] {
            protected.push(ProtectedPath {
                path: path.clone(),
                what: what.to_owned(),
            });
        }
        let core = Arc::new(Core {
            sandboxes,
            tools: ToolState::new(resolver, protected),
            config: setup.config,
            file: file.clone(),
            file_cache: SnapshotCache::new(),
            documents,
            policies: PolicyCache::default(),
            manager,
            pending: Pending::new(PendingLimits {
                per_agent: setup.limits.max_pending_per_agent,
                per_token: setup.limits.max_pending_per_token,
            }),
            limits: setup.limits,
            audit,
            allowlist_use: Arc::new(AllowlistUse::new(file)),
            clock: ports.clock,
            publisher: ports.publisher,
            shutdown: watch::Sender::new(false),
        });
        // Before the first event is published: on a shared store, they carry the log's numbers.
        if let Some(sequence) = core.manager.shared_sequence() {
            core.publisher.follow_shared_sequence(&sequence);
        }
        spawn_forwarder(Arc::clone(&core), startup);
        Ok(Service {
            shared: Arc::new(Shared {
                core,
                chat: OnceLock::new(),
                routes_elsewhere: OnceLock::new(),
            }),
        })
    }
}

/// The approvals document the service uses: this host's file, made sure of (0600, a token,
/// ids), or, on a shared store, the shared document, into which this host's file is imported
/// when the store has none yet.
async fn open_approvals_file(
    file: ExecApprovalsStore,
    documents: Option<Arc<dyn DocumentStore>>,
) -> Result<ExecApprovalsStore, ServiceError> {
    let opened: Result<_, gatehouse_store::StoreError> = tokio::task::spawn_blocking(move || {
        let file = match documents {
            None => file,
            Some(documents) => {
                let shared = ExecApprovalsStore::shared(file.path(), documents)?;
                announce_import(shared.import_local_file()?, file.path());
                shared
            }
        };
        let snapshot = file.ensure()?;
        for note in &snapshot.report.notes {
            tracing::warn!(path = %snapshot.path.display(), %note, "Approvals file note.");
        }
        Ok(file)
    })
    .await
    .map_err(ServiceError::internal)?;
    opened.map_err(ServiceError::store)
}

/// Tells the operator, at start, where the allowlists now live.
fn announce_import(import: Import, local: &std::path::Path) {
    let shown = local.display();
    match import {
        Import::NotShared => {}
        Import::Imported => tracing::warn!(
            file = %shown,
            "Imported this host's exec-approvals.json into the shared database: every replica \
             reads and writes it there from now on, and this file is no longer read."
        ),
        Import::AlreadyShared if local.exists() => {
            tracing::warn!(
                file = %shown,
                "exec-approvals.json is kept in the shared database; this host's file is not \
                 read (edit the allowlists with `exec.approvals.set` or `gatehouse approvals \
                 allowlist`)."
            );
        }
        Import::AlreadyShared | Import::NoLocalFile => {
            tracing::info!("exec-approvals.json is kept in the shared database.")
        }
    }
}
