//! The durable approvals database: `gatehouse-approvals`' [`ApprovalStore`] on SQLite. Every
//! approval is a row, and every state change is a compare-and-swap in the store.
//!
//! [`SqliteApprovalStore`] commits concurrent writes in batches on one writer thread (one fsync
//! per batch, each operation in its own savepoint) and reads on connections of its own.
//! [`PgApprovalStore`] keeps the same rows in a PostgreSQL database that several gateways share
//! (`postgres/`); it reuses this module's row decoding and answers.
//!
//! [`ApprovalStore`]: gatehouse_approvals::ApprovalStore

mod batch_times;
mod checkpoint;
mod ids;
mod outbox;
mod postgres;
mod readers;
mod rows;
mod schema;
mod sqlite;
mod summary;
mod tools;
mod write_ops;
mod writer;

pub use batch_times::{BATCH_TIME_BOUNDS, BatchTimesSnapshot};
pub use postgres::{
    DatabaseCheck, PendingCaps, PgApprovalStore, PgAuditLog, PgDocuments, PgOptions,
};
pub use sqlite::{SqliteApprovalStore, SqliteOptions};
