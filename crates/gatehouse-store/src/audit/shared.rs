//! The audit log as a service several gateways share (the database log, when the approvals
//! store is PostgreSQL): appends, the verdict and the last records, each a future, so the
//! gateway neither knows nor cares where the chain is kept.

use std::future::Future;
use std::pin::Pin;

use super::error::AuditError;
use super::record::AuditEvent;
use super::verify::VerifyReport;

/// What a [`SharedAuditLog`] call resolves to.
pub type AuditFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuditError>> + Send + 'a>>;

/// One hash chain for every gateway on a database. Records of approval transitions are
/// appended by the store itself, in each transition's transaction; this appends the others
/// (runs, checks, refusals).
pub trait SharedAuditLog: Send + Sync + std::fmt::Debug {
    /// Appends `events` (each with the time it happened, Unix ms) as consecutive records, in
    /// order, in one transaction: all of them or none.
    fn append(&self, events: Vec<(u64, AuditEvent)>) -> AuditFuture<'_, ()>;

    /// Checks the whole chain against its head, as [`verify`](super::verify) checks a file.
    fn verify(&self) -> AuditFuture<'_, VerifyReport>;

    /// The last `count` records' lines, oldest first, unchecked.
    fn tail(&self, count: usize) -> AuditFuture<'_, Vec<Vec<u8>>>;
}
