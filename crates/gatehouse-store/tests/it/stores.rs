//! The store contract's subjects: each contract test runs on the SQLite store and on the
//! PostgreSQL store (a fresh database on a real server the tests start), through the
//! `ApprovalStore` trait the manager uses, so the two are held to the same answers.

use std::sync::Arc;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalStore, ChatOutbox, Completion, ConsumeOutcome, DeliveredMessage,
    ListFilter, NewApproval, Resolution, ResolveOutcome, StoreError, StoredGrant,
};
use gatehouse_fakes::postgres::TempDatabase;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};

use crate::support::open_db;

/// A store under test, with what keeps it alive: dropped in this order, so the store and its
/// runtime's connections are gone before the database is.
pub(crate) struct Db {
    store: Arc<dyn ApprovalStore>,
    /// The same store's chat outbox.
    outbox: Arc<dyn ChatOutbox>,
    runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    _database: Option<TempDatabase>,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

impl Db {
    /// The SQLite store in a temporary directory.
    pub(crate) fn sqlite() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(open_db(&dir));
        Db {
            outbox: Arc::clone(&store) as Arc<dyn ChatOutbox>,
            store,
            runtime: runtime(),
            _dir: dir,
            _database: None,
        }
    }

    /// The PostgreSQL store on a fresh database of the shared test cluster.
    pub(crate) fn postgres() -> Db {
        let database = gatehouse_fakes::postgres::database().unwrap();
        let runtime = runtime();
        let store = runtime
            .block_on(PgApprovalStore::connect(
                database.url(),
                PgOptions::default(),
            ))
            .unwrap();
        let store = Arc::new(store);
        Db {
            outbox: Arc::clone(&store) as Arc<dyn ChatOutbox>,
            store,
            runtime,
            _dir: tempfile::tempdir().unwrap(),
            _database: Some(database),
        }
    }

    /// Submits a write and waits for its answer.
    fn wait<T: Send + 'static>(&self, submit: impl FnOnce(Completion<T>)) -> Result<T, StoreError> {
        let (sender, answer) = std::sync::mpsc::channel();
        submit(Box::new(move |result| {
            let _ = sender.send(result);
        }));
        answer.recv().unwrap()
    }

    pub(crate) fn insert(&self, approval: &NewApproval) -> Result<ApprovalRecord, StoreError> {
        self.wait(|done| self.store.insert(approval.clone(), done))
    }

    pub(crate) fn resolve(
        &self,
        id: &str,
        resolution: &Resolution,
        at_ms: u64,
    ) -> Result<ResolveOutcome, StoreError> {
        self.wait(|done| {
            self.store
                .resolve(id.to_owned(), resolution.clone(), at_ms, done)
        })
    }

    pub(crate) fn consume_allow_once(
        &self,
        id: &str,
        at_ms: u64,
    ) -> Result<ConsumeOutcome, StoreError> {
        self.wait(|done| self.store.consume_allow_once(id.to_owned(), at_ms, done))
    }

    pub(crate) fn record_delivery(
        &self,
        id: &str,
        message: &DeliveredMessage,
    ) -> Result<(), StoreError> {
        self.wait(|done| {
            self.store
                .record_delivery(id.to_owned(), message.clone(), done)
        })
    }

    pub(crate) fn cancel_all_pending(
        &self,
        reason: &str,
        at_ms: u64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.wait(|done| {
            self.store
                .cancel_all_pending(reason.to_owned(), at_ms, done)
        })
    }

    pub(crate) fn prune_terminal_before(
        &self,
        cutoff_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        self.wait(|done| self.store.prune_terminal_before(cutoff_ms, limit, done))
    }

    pub(crate) fn revoke_grant(&self, id: &str) -> Result<Option<StoredGrant>, StoreError> {
        self.wait(|done| self.store.revoke_grant(id.to_owned(), done))
    }

    pub(crate) fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        self.runtime.block_on(self.store.get(id.to_owned()))
    }

    pub(crate) fn find_by_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.runtime
            .block_on(self.store.find_by_prefix(prefix.to_owned(), limit))
    }

    pub(crate) fn short_ids(&self) -> Result<Vec<u32>, StoreError> {
        self.runtime.block_on(self.store.short_ids())
    }

    pub(crate) fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.runtime.block_on(self.store.list(filter.clone()))
    }

    /// The store's chat outbox.
    pub(crate) fn outbox(&self) -> &dyn ChatOutbox {
        &*self.outbox
    }

    /// Runs `work` (the outbox's calls) to its end on the store's runtime.
    pub(crate) fn block_on<T>(&self, work: impl std::future::Future<Output = T>) -> T {
        self.runtime.block_on(work)
    }

    pub(crate) fn grants(&self) -> Result<Vec<StoredGrant>, StoreError> {
        self.runtime.block_on(self.store.grants())
    }
}

/// Runs each named contract test (a `fn(&Db)`) on both stores, as
/// `on_sqlite::<name>` and `on_postgres::<name>`.
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[test]
                fn $test() {
                    super::$test(&crate::stores::Db::sqlite());
                }
            )*
        }
        mod on_postgres {
            $(
                #[test]
                fn $test() {
                    super::$test(&crate::stores::Db::postgres());
                }
            )*
        }
    };
}
pub(crate) use on_both_stores;
