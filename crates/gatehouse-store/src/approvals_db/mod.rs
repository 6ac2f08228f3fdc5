//! The durable approvals database: every approval is a row, and every state change is a
//! compare-and-swap in the store.
//!
//! [`ApprovalStore`] is the contract; [`SqliteApprovalStore`] the default implementation.

mod record;
mod schema;
mod sqlite;
mod store;

pub use record::{
    ApprovalRecord, ApprovalRequest, ApprovalState, ConsumeOutcome, DeliveredMessage, ListFilter,
    NewApproval, Resolution, ResolveOutcome, Retention, RunBinding, TurnSource,
};
pub use sqlite::{SqliteApprovalStore, SqliteOptions};
pub use store::ApprovalStore;
