//! The durable approvals database: every approval is a row, and every state change is a
//! compare-and-swap in the store.
//!
//! [`ApprovalStore`] is the contract; [`SqliteApprovalStore`] the default implementation, which
//! commits concurrent writes in batches on one writer thread (one fsync per batch, each
//! operation in its own savepoint) and reads on connections of its own.

mod batch_times;
mod checkpoint;
mod ids;
mod readers;
mod record;
mod rows;
mod schema;
mod sqlite;
mod store;
mod write_ops;
mod writer;

pub use batch_times::{BATCH_TIME_BOUNDS, BatchTimesSnapshot};
pub use ids::{SHORT_ID_DIGITS, mint_approval_id, short_id};
pub use record::{
    ApprovalRecord, ApprovalRequest, ApprovalState, ConsumeOutcome, DeliveredMessage, ListFilter,
    ListOrder, NewApproval, Resolution, ResolveOutcome, Retention, RunBinding, TurnSource,
};
pub use sqlite::{SqliteApprovalStore, SqliteOptions};
pub use store::{ApprovalStore, Completion};
