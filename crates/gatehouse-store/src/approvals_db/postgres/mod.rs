//! The approvals database on PostgreSQL, for several gateways sharing one database
//! (docs/high-availability.md). The same rows, checks and answers as the SQLite store, which
//! stays the default: a row is decoded by the same code (`rows::RawRow`), a resolution that
//! loses is answered by the same rules (`write_ops`), and the store contract tests run on both.

mod audit;
mod caps;
mod connect;
mod documents;
mod events;
mod feed;
mod lease;
mod listener;
mod ops;
mod outbox;
mod presence;
mod replays;
mod schema;
mod store;

pub use audit::PgAuditLog;
pub use caps::PendingCaps;
pub use documents::PgDocuments;
pub use store::{DatabaseCheck, PgApprovalStore, PgOptions};
