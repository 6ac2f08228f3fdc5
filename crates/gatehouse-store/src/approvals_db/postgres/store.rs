//! `gatehouse-approvals`' [`ApprovalStore`] on a PostgreSQL database several gateways share.
//!
//! Writes are queued to one writer task per gateway and run in submission order, each in its
//! own transaction on a pooled connection, so a resolve submitted after an insert always finds
//! the row; reads run on the pool at once. The queue is bounded: a write beyond it fails at
//! once with a retryable error instead of waiting (a caller here may not block its thread, and
//! a database that stopped answering must not grow memory without bound). Correctness across gateways rests on the database
//! alone: every state change is a conditional update (see `ops`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;

use deadpool_postgres::Pool;
use gatehouse_approvals::{
    ApprovalRecord, ApprovalStore, ChangeFeed, ChatOutbox, Completion, ConsumeOutcome,
    DeliveredMessage, EventLog, GrantStore, HeldLease, ListFilter, LoggedEvents, NewApproval,
    OutboxEntry, OutboxMessage, OutboxStep, Reading, Resolution, ResolveOutcome, RoutePresence,
    RunNote, SharedChat, StepOutcome, StoredButton, StoredGrant, Writing,
};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};

use super::audit::PgAuditLog;
use super::caps::{self, PendingCaps};
use super::connect::Connector;
use super::documents::PgDocuments;
use super::feed::{self, Subscribers};
use super::listener::Listener;
use super::{events, lease, ops, outbox, presence, replays, schema};
use crate::error::{PostgresError, StoreError};

/// Options for [`PgApprovalStore::connect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgOptions {
    /// Most connections this gateway holds open; the writer uses one at a time, reads the
    /// rest. At least 1.
    pub max_connections: usize,
    /// How long connecting, or waiting for a free pooled connection, may take before the
    /// operation fails.
    pub connect_timeout: Duration,
    /// Most writes waiting for the writer task. A write submitted beyond it fails at once
    /// with [`StoreError::WriterBusy`] rather than queue: a database that stopped answering
    /// must not grow the gateway's memory without bound. At least 1.
    pub queue_capacity: usize,
    /// The pending caps to hold across every gateway sharing the database, counted in the
    /// database inside each insert's transaction (see `caps`); `None` counts nothing.
    pub pending_caps: Option<PendingCaps>,
    /// How long a start that must apply a migration replicas of the previous build cannot
    /// run across waits for the other gateways to disconnect before it refuses (`schema`).
    pub upgrade_wait: Duration,
}

impl PgOptions {
    /// [`PgOptions::queue_capacity`] by default: the SQLite writer's queue, some seconds of
    /// writes at the rate one replica's writer commits (docs/high-availability.md).
    pub const DEFAULT_QUEUE_CAPACITY: usize = 4096;

    /// [`PgOptions::upgrade_wait`] by default: time for an operator stopping the old
    /// replicas while the first upgraded one starts.
    pub const DEFAULT_UPGRADE_WAIT: Duration = Duration::from_secs(30);
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            max_connections: 8,
            connect_timeout: Duration::from_secs(10),
            queue_capacity: Self::DEFAULT_QUEUE_CAPACITY,
            pending_caps: None,
            upgrade_wait: Self::DEFAULT_UPGRADE_WAIT,
        }
    }
}

/// What [`PgApprovalStore::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseCheck {
    /// The migrations applied (0: no gateway has started on it yet).
    pub schema_version: i64,
    /// The version this build migrates to.
    pub supported_version: i64,
    /// The server's clock, ms since the Unix epoch, when it answered.
    pub server_now_ms: i64,
    /// The first migration due that replicas of the previous build cannot run across (its
    /// number and what it brings): the next start waits for every other gateway to stop.
    pub stop_every_replica: Option<(i64, &'static str)>,
}

/// One queued write: run on the pool, or told why it cannot be (the writer stopped, or its
/// queue is full).
type Job =
    Box<dyn FnOnce(Result<Pool, StoreError>) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// The PostgreSQL approval store. Open one per gateway; any number of gateways may share the
/// database.
#[derive(Debug)]
pub struct PgApprovalStore {
    pool: Pool,
    writes: mpsc::Sender<Job>,
    /// Checked in each insert's transaction.
    pending_caps: Option<PendingCaps>,
    /// How lease connections connect.
    connector: Connector,
    /// Tells this store's notices from the other gateways'.
    origin: Arc<str>,
    /// The feeds handed out; the listener holds them weakly.
    subscribers: Arc<Subscribers>,
    /// The one listening connection, for the feeds and the documents alike; started by the
    /// first [`ApprovalStore::changes`] or [`PgApprovalStore::documents`].
    listener: Arc<Listener>,
    /// The event log's instance id, read once at connect (a migration wrote it).
    instance: String,
    /// How long opening a connection may take, for the pools made later.
    connect_timeout: Duration,
}

impl PgApprovalStore {
    /// Connects to the database `url` names (a libpq URL; see `connect` for its TLS settings),
    /// applies the migrations this build has and the database lacks, and starts the writer
    /// task. Call from within a tokio runtime.
    pub async fn connect(url: &str, options: PgOptions) -> Result<Self, StoreError> {
        let connector = Connector::from_url(url, options.connect_timeout)?;
        let pool = connector.pool(options.max_connections, options.connect_timeout)?;
        let instance = {
            let mut client = pool.get().await?;
            schema::migrate(&mut client, options.upgrade_wait).await?;
            events::instance(&*client).await?
        };
        let (writes, jobs) = mpsc::channel(options.queue_capacity.max(1));
        tokio::spawn(write_in_order(pool.clone(), jobs));
        let origin: Arc<str> = feed::new_origin().into();
        let subscribers: Arc<Subscribers> = Arc::default();
        let listener = Listener::new(
            connector.clone(),
            origin.to_string(),
            Arc::downgrade(&subscribers),
        );
        Ok(PgApprovalStore {
            pool,
            writes,
            pending_caps: options.pending_caps,
            connector,
            origin,
            subscribers,
            listener: Arc::new(listener),
            instance,
            connect_timeout: options.connect_timeout,
        })
    }

    /// The shared documents (per-host state replicas share: the exec approvals document, the
    /// chat sessions) on this store's database and pool; follows their changes through the
    /// store's one listening connection. Call from within a tokio runtime.
    pub fn documents(&self) -> PgDocuments {
        PgDocuments::start(self.pool.clone(), Arc::clone(&self.listener))
    }

    /// The audit log in this store's database, which the store's transitions append to: the
    /// gateway appends its other records through it and reads it for `audit.verify` and
    /// `audit.tail`. Appends use a connection of their own, opened by the runtime that
    /// appends.
    pub fn audit_log(&self) -> Result<PgAuditLog, StoreError> {
        let appends = self.connector.pool(1, self.connect_timeout)?;
        Ok(PgAuditLog::new(self.pool.clone(), appends))
    }

    /// The audit log in the database `url` names, for reading it without a gateway
    /// (`gatehouse audit`); migrates nothing, and a database without one is reported as such
    /// when it is read.
    pub fn open_audit_log(url: &str, options: PgOptions) -> Result<PgAuditLog, StoreError> {
        let pool =
            Connector::from_url(url, options.connect_timeout)?.pool(1, options.connect_timeout)?;
        Ok(PgAuditLog::new(pool.clone(), pool))
    }

    /// Connects to the database `url` names and reads what `gatehouse doctor` reports,
    /// writing nothing: a schema newer than this build is refused, as a start would.
    pub async fn check(url: &str, options: PgOptions) -> Result<DatabaseCheck, StoreError> {
        let pool =
            Connector::from_url(url, options.connect_timeout)?.pool(1, options.connect_timeout)?;
        let client = pool.get().await?;
        let schema_version = schema::schema_version(&*client).await?;
        let rows = client
            .query(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .await?;
        let server_now_ms = match rows.first() {
            Some(row) => row.try_get(0)?,
            None => 0,
        };
        Ok(DatabaseCheck {
            schema_version,
            supported_version: schema::CURRENT_VERSION,
            server_now_ms,
            stop_every_replica: schema::stop_every_replica_after(schema_version),
        })
    }

    /// Reads the shared document `name` once, writing nothing (for `gatehouse doctor`):
    /// `None` when it was never written or the database has no documents table yet.
    pub async fn read_document(
        url: &str,
        options: PgOptions,
        name: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let pool =
            Connector::from_url(url, options.connect_timeout)?.pool(1, options.connect_timeout)?;
        let client = pool.get().await?;
        if !schema::table_exists(&*client, "gatehouse_documents").await? {
            return Ok(None);
        }
        let rows = client
            .query(
                "SELECT body FROM gatehouse_documents WHERE name = $1",
                &[&name],
            )
            .await?;
        match rows.first() {
            Some(row) => Ok(Some(row.try_get(0)?)),
            None => Ok(None),
        }
    }

    /// Queues a write: `op` runs in a transaction of its own once every write queued before it
    /// has finished, and `done` hears its answer.
    fn submit<T, Op>(&self, op: Op, done: Completion<T>)
    where
        T: Send + 'static,
        Op: for<'t, 'c> FnOnce(
                &'t deadpool_postgres::Transaction<'c>,
            )
                -> Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 't>>
            + Send
            + 'static,
    {
        let job: Job = Box::new(move |pool| {
            Box::pin(async move {
                let outcome = match pool {
                    Ok(pool) => in_transaction(&pool, op).await,
                    Err(refused) => Err(refused),
                };
                done(outcome.map_err(Into::into));
            })
        });
        self.queue(job);
    }

    /// Hands a job to the writer task; if its queue is full, or the task is gone (its runtime
    /// shut down), the job is told why at once and answers without running.
    fn queue(&self, job: Job) {
        let (job, refusal) = match self.writes.try_send(job) {
            Ok(()) => return,
            Err(TrySendError::Full(job)) => (
                job,
                StoreError::WriterBusy {
                    capacity: self.writes.max_capacity(),
                },
            ),
            Err(TrySendError::Closed(job)) => {
                (job, StoreError::Postgres(PostgresError::writer_stopped()))
            }
        };
        // Given no pool, a job awaits nothing: one poll runs it to the end.
        let mut refused = job(Err(refusal));
        let mut context = Context::from_waker(Waker::noop());
        let _ = refused.as_mut().poll(&mut context);
    }

    /// Queues a write as [`submit`](Self::submit) does, now, for a caller that awaits it.
    fn writing<T, Op>(&self, op: Op) -> Writing<T>
    where
        T: Send + 'static,
        Op: for<'t, 'c> FnOnce(
                &'t deadpool_postgres::Transaction<'c>,
            )
                -> Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 't>>
            + Send
            + 'static,
    {
        let (answer, answered) = oneshot::channel();
        self.submit(
            op,
            Box::new(move |outcome| {
                let _ = answer.send(outcome);
            }),
        );
        Box::pin(async move {
            answered.await.unwrap_or_else(|_| {
                Err(StoreError::Postgres(PostgresError::writer_stopped()).into())
            })
        })
    }

    fn read<T, Op>(&self, op: Op) -> Reading<T>
    where
        T: Send + 'static,
        Op: for<'c> FnOnce(
                &'c deadpool_postgres::ClientWrapper,
            )
                -> Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'c>>
            + Send
            + 'static,
    {
        let pool = self.pool.clone();
        Box::pin(async move {
            let client = pool.get().await.map_err(StoreError::from)?;
            op(&client).await.map_err(Into::into)
        })
    }
}

/// Runs `op` in a transaction of its own, committed when it succeeds.
async fn in_transaction<T, Op>(pool: &Pool, op: Op) -> Result<T, StoreError>
where
    Op: for<'t, 'c> FnOnce(
        &'t deadpool_postgres::Transaction<'c>,
    ) -> Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 't>>,
{
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let outcome = op(&tx).await?;
    tx.commit().await?;
    Ok(outcome)
}

/// The writer task: runs queued writes one after another until the store is dropped and the
/// queue is empty.
async fn write_in_order(pool: Pool, mut jobs: mpsc::Receiver<Job>) {
    while let Some(job) = jobs.recv().await {
        job(Ok(pool.clone())).await;
    }
}

impl ApprovalStore for PgApprovalStore {
    fn insert(&self, approval: NewApproval, done: Completion<ApprovalRecord>) {
        let origin = Arc::clone(&self.origin);
        let pending_caps = self.pending_caps;
        self.submit(
            move |tx| {
                Box::pin(async move {
                    if let Some(pending_caps) = pending_caps {
                        caps::check(tx, pending_caps, &approval.request).await?;
                    }
                    ops::insert(tx, &origin, approval).await
                })
            },
            done,
        );
    }

    fn resolve(
        &self,
        id: String,
        resolution: Resolution,
        at_ms: u64,
        done: Completion<ResolveOutcome>,
    ) {
        let origin = Arc::clone(&self.origin);
        self.submit(
            move |tx| {
                Box::pin(async move { ops::resolve(tx, &origin, &id, &resolution, at_ms).await })
            },
            done,
        );
    }

    fn consume_allow_once(&self, id: String, at_ms: u64, done: Completion<ConsumeOutcome>) {
        self.submit(
            move |tx| Box::pin(async move { ops::consume_allow_once(tx, &id, at_ms).await }),
            done,
        );
    }

    fn record_delivery(&self, id: String, message: DeliveredMessage, done: Completion<()>) {
        self.submit(
            move |tx| Box::pin(async move { ops::record_delivery(tx, &id, &message).await }),
            done,
        );
    }

    fn cancel_all_pending(
        &self,
        reason: String,
        at_ms: u64,
        done: Completion<Vec<ApprovalRecord>>,
    ) {
        self.submit(
            move |tx| Box::pin(async move { ops::cancel_all_pending(tx, &reason, at_ms).await }),
            done,
        );
    }

    fn prune_terminal_before(&self, cutoff_ms: u64, limit: usize, done: Completion<Vec<String>>) {
        self.submit(
            move |tx| Box::pin(ops::prune_terminal_before(tx, cutoff_ms, limit)),
            done,
        );
    }

    fn after_submitted_writes(&self, done: Completion<()>) {
        // Answered in turn, after every write queued before it; with no writer, none is
        // left to wait for; with a full queue, they are still queued, so it fails as a write
        // would.
        self.queue(Box::new(move |pool| {
            Box::pin(async move {
                done(match pool {
                    Err(busy @ StoreError::WriterBusy { .. }) => Err(busy.into()),
                    _ => Ok(()),
                });
            })
        }));
    }

    fn get(&self, id: String) -> Reading<Option<ApprovalRecord>> {
        self.read(move |client| Box::pin(async move { ops::fetch(client, &id).await }))
    }

    fn find_by_prefix(&self, prefix: String, limit: usize) -> Reading<Vec<ApprovalRecord>> {
        self.read(move |client| {
            Box::pin(async move { ops::find_by_prefix(client, &prefix, limit).await })
        })
    }

    fn short_ids(&self) -> Reading<Vec<u32>> {
        self.read(|client| Box::pin(ops::short_ids(client)))
    }

    fn list(&self, filter: ListFilter) -> Reading<Vec<ApprovalRecord>> {
        self.read(move |client| Box::pin(async move { ops::list(client, &filter).await }))
    }

    fn changes(&self) -> Option<ChangeFeed> {
        let feed = self.subscribers.subscribe();
        self.listener.start();
        Some(feed)
    }

    fn event_log(&self) -> Option<&dyn EventLog> {
        Some(self)
    }
}

impl EventLog for PgApprovalStore {
    fn instance(&self) -> &str {
        &self.instance
    }

    fn head(&self) -> Reading<u64> {
        self.read(|client| Box::pin(events::head(client)))
    }

    fn events_after(&self, after: u64, limit: usize) -> Reading<LoggedEvents> {
        self.read(move |client| Box::pin(events::after(client, after, limit)))
    }

    fn append_run(&self, note: RunNote, at_ms: u64) -> Writing<u64> {
        let origin = Arc::clone(&self.origin);
        self.writing(move |tx| {
            Box::pin(async move { events::append_run(tx, &origin, &note, at_ms).await })
        })
    }
}

impl GrantStore for PgApprovalStore {
    fn revoke_grant(&self, id: String, done: Completion<Option<StoredGrant>>) {
        self.submit(
            move |tx| Box::pin(async move { ops::revoke_grant(tx, &id).await }),
            done,
        );
    }

    fn grants(&self) -> Reading<Vec<StoredGrant>> {
        self.read(|client| Box::pin(ops::grants(client)))
    }
}

impl RoutePresence for PgApprovalStore {
    fn heartbeat(&self, reachable: bool, live_for: Duration) -> Reading<bool> {
        let replica = Arc::clone(&self.origin);
        self.read(move |client| {
            Box::pin(
                async move { presence::heartbeat(client, &replica, reachable, live_for).await },
            )
        })
    }
}

/// The chat outbox beside the approvals it shows, every step on the ordered writer, so a step
/// is durable before its caller goes on and after every write submitted before it.
impl ChatOutbox for PgApprovalStore {
    fn plan_messages(&self, messages: Vec<OutboxMessage>, at_ms: u64) -> Writing<()> {
        self.writing(move |tx| Box::pin(async move { outbox::plan(tx, &messages, at_ms).await }))
    }

    fn record_step(&self, key: String, step: OutboxStep, at_ms: u64) -> Writing<StepOutcome> {
        self.writing(move |tx| {
            Box::pin(async move { outbox::record(tx, &key, &step, at_ms).await })
        })
    }

    fn open_messages(&self) -> Reading<Vec<OutboxEntry>> {
        self.read(|client| Box::pin(outbox::open(client)))
    }

    fn troubled_messages(&self, lost_since_ms: u64, limit: usize) -> Reading<Vec<OutboxEntry>> {
        self.read(move |client| {
            Box::pin(async move { outbox::troubled(client, lost_since_ms, limit).await })
        })
    }
}

impl SharedChat for PgApprovalStore {
    fn save_button(&self, button: StoredButton) -> Writing<()> {
        self.writing(move |tx| Box::pin(async move { outbox::save_button(tx, &button).await }))
    }

    fn live_buttons(&self) -> Reading<Vec<StoredButton>> {
        self.read(|client| Box::pin(outbox::live_buttons(client)))
    }

    fn live_button(&self, key: String) -> Reading<Option<StoredButton>> {
        self.read(move |client| Box::pin(async move { outbox::live_button(client, &key).await }))
    }

    fn pending_card_approval(&self, message: DeliveredMessage) -> Reading<Option<String>> {
        self.read(move |client| {
            Box::pin(async move { outbox::pending_card_approval(client, &message).await })
        })
    }

    fn acquire_lease(
        &self,
        name: String,
        holder: String,
    ) -> Pin<Box<dyn Future<Output = HeldLease> + Send>> {
        Box::pin(lease::acquire(self.connector.clone(), name, holder))
    }

    fn lease_holder(&self, name: String) -> Reading<Option<String>> {
        self.read(move |client| Box::pin(async move { lease::holder(client, &name).await }))
    }

    fn first_delivery(&self, key: String, expires_at_ms: u64, now_ms: u64) -> Reading<bool> {
        self.read(move |client| {
            Box::pin(
                async move { replays::first_delivery(client, &key, expires_at_ms, now_ms).await },
            )
        })
    }
}
