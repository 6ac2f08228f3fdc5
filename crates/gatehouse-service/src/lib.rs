//! The Gatehouse application: every use case as a plain function on one [`Service`] object —
//! check, request, run, resolve, wait, list, elevated levels, session bindings, the approvals
//! file and the chat runtime — over the libraries below (policy, config, approvals, store,
//! chat).
//!
//! **Invariants.** It knows no transport: no JSON-RPC, no HTTP, no axum. It is handed what it
//! needs ([`Ports`]: the approval store, the clock, a [`Publisher`] that tells operators and
//! says whether any is listening; a [`Caller`] per use case) and never reaches back into
//! whoever serves it. Its errors are its own ([`ServiceError`]); a transport maps them to its
//! codes in one place. Every approval is durable before anyone hears of it; `system.run`
//! spawns exactly the bound argv, never adding a shell, after re-checking the binding; a
//! requester that goes away cancels its approval (`requester-gone`), a stopping service does
//! not (the next start cancels it, `gateway-restart`).
//!
//! **Entry point.** [`Service::start`] with a [`ServiceSetup`] and [`Ports`], then
//! [`Service::start_chat`] with the connected adapters; the CLI's offline commands use
//! [`policy`] alone.
//!
//! ```no_run
//! # async fn demo(publisher: std::sync::Arc<dyn gatehouse_service::Publisher>)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use gatehouse_approvals::SystemClock;
//! use gatehouse_service::{ExecLimits, Ports, Service, ServiceSetup};
//! use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
//!
//! let store = SqliteApprovalStore::open("approvals.db", SqliteOptions::default())?;
//! let setup = ServiceSetup {
//!     config: gatehouse_config::Config::default(),
//!     approvals_file: "exec-approvals.json".into(),
//!     audit_log: "audit.jsonl".into(),
//!     limits: ExecLimits::default(),
//!     sandbox_host: None,
//!     protected: Vec::new(),
//! };
//! let ports = Ports { store: Arc::new(store), clock: Arc::new(SystemClock), publisher };
//! let service = Service::start(setup, ports).await?;
//! # let _ = service; Ok(()) }
//! ```

mod approvals;
mod audit_read;
mod caller;
pub mod chat;
mod check;
mod core;
pub mod dns;
mod error;
mod exec;
mod file;
mod history;
mod pipeline;
pub mod policy;
mod publish;
mod routes;
mod run;
mod run_log;
mod service;
mod sessions;
mod setup;
mod tools;

pub use approvals::{ApprovalView, Decided, Fallback, RequestInput, RequestOutcome};
pub use audit_read::{AuditEntry, AuditProblem, AuditVerdict, MAX_AUDIT_TAIL};
pub use caller::Caller;
pub use chat::{
    ChatLease, ChatQueue, ChatSetup, ChatStatus, ConnectedChannel, MessageProblem, ProblemKind,
    StoppedChannel,
};
pub use check::{CheckInput, ToolsInput};
pub use error::{PendingHolder, ServiceError};
pub use exec::runner::{Captured, Finished};
pub use file::FileView;
pub use history::{HISTORY_WINDOW, HistoryPage, HistoryQuery, MAX_HISTORY_PAGE, Outcome};
pub use pipeline::ExecContext;
pub use policy::agent_view::{AgentPolicyView, ElevatedView};
pub use publish::{Denial, Publisher, RunEvent};
pub use run::{RunInput, RunOutcome};
pub use run_log::LoggedRun;
pub use service::{Ports, Prepared, Service};
pub use sessions::BindInput;
pub use setup::{ExecLimits, ServiceSetup};
pub use tools::{
    ToolCallInput, ToolFinished, ToolFinishedInput, ToolRequestInput, ToolRequestOutcome,
};
