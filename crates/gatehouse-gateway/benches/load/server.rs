//! The gateway under test, in a tokio runtime of its own, so its worker threads are not the
//! client's and the two can be sized apart.

use std::net::SocketAddr;
use std::path::Path;

use std::sync::Arc;

use gatehouse_approvals::SystemClock;
use gatehouse_config::Config;
use gatehouse_gateway::{
    GatewaySettings, GatewayState, Limits, Scope, Secret, StoreBatches, TokenSpec,
};
use gatehouse_service::{ExecLimits, Ports, Service, ServiceSetup};
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
use tokio::runtime::Runtime;

use crate::{ADMIN, AGENT};

/// A running gateway; dropping it stops the runtime and the server with it.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    _runtime: Runtime,
}

/// Starts the real server on a loopback port with the durable store in `dir`: the SQLite
/// approvals database, `exec-approvals.json` and the audit log. Rate limits are off and the
/// pending cap is above what the load can reach, so neither is what gets measured.
pub(crate) fn start(dir: &Path, threads: usize, max_pending: usize) -> Server {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("gateway")
        .enable_all()
        .build()
        .unwrap();
    let settings = GatewaySettings {
        tokens: vec![
            TokenSpec {
                name: "admin".into(),
                secret: Secret::new(ADMIN),
                scopes: vec![Scope::Admin],
                agents: None,
            },
            TokenSpec {
                name: "agent".into(),
                secret: Secret::new(AGENT),
                scopes: vec![Scope::Agent],
                agents: None,
            },
        ],
        limits: Limits {
            rate: None,
            event_queue: 1 << 16,
            max_in_flight: 1 << 14,
            ..Limits::default()
        },
    };
    let database = dir.join("approvals.db");
    let setup = ServiceSetup {
        config: Config::default(),
        approvals_file: dir.join("exec-approvals.json"),
        audit_log: dir.join("audit.jsonl"),
        limits: ExecLimits {
            max_pending_per_agent: max_pending,
            max_pending_per_token: max_pending,
            ..ExecLimits::default()
        },
        sandbox_host: None,
        protected: Vec::new(),
    };
    let addr = runtime.block_on(async move {
        let store =
            Arc::new(SqliteApprovalStore::open(database, SqliteOptions::default()).unwrap());
        // As `serve` does: `GET /metrics` reports the database's batch times, which the bench
        // reads.
        let batches = Arc::clone(&store);
        let builder = GatewayState::builder(&settings).store_metrics(Arc::new(move || {
            let times = batches.batch_times();
            StoreBatches {
                cumulative: times.cumulative().collect(),
                total: times.total,
                writes: times.writes,
            }
        }));
        let ports = Ports {
            store,
            clock: Arc::new(SystemClock),
            publisher: Arc::new(builder.events().clone()),
        };
        let service = Service::start(setup, ports).await.unwrap();
        let state = builder.with_service(service).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(gatehouse_gateway::serve(
            listener,
            state,
            std::future::pending(),
        ));
        addr
    });
    Server {
        addr,
        _runtime: runtime,
    }
}
