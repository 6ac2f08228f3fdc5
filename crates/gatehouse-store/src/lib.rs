//! Gatehouse persistence: `exec-approvals.json`, the durable approvals database and the audit
//! log. The approvals database and the allowlists are `gatehouse-approvals`' `ApprovalStore` and
//! `AllowlistStore`, implemented here.
//!
//! **Invariants.** Every file this crate creates is mode 0600. `exec-approvals.json` is only ever
//! replaced atomically (temp file, fsync, rename, fsync directory) under an inter-process lock,
//! and every replacement is checked against the hash of the bytes it was based on, so no writer
//! silently overwrites another. Unknown fields are kept, never dropped. The socket token never
//! appears in `Debug` output or in the redacted view given to clients. This crate never reads the
//! wall clock: every timestamp is passed in by the caller (the approvals writer times its
//! batches on the monotonic clock, for metrics only).
//!
//! **Entry points.** [`approvals_file::ExecApprovalsStore`] for the file,
//! [`approvals_file::parse_str`] for text already in hand, and
//! [`approvals_db::SqliteApprovalStore`] (behind the [`gatehouse_approvals::ApprovalStore`] trait) for
//! approvals. Pending rows move to a terminal state only by compare-and-swap: the first answer
//! wins, and an `allow-once` run can be taken exactly once. [`audit::AuditLog`] appends the
//! hash-chained audit log; [`audit::verify`] checks it.
//!
//! ```
//! use gatehouse_store::approvals_file::{parse_str, HostFallback, DEFAULT_AGENT_ID};
//! let parsed = parse_str(
//!     r#"{"version":1,"agents":{"*":{"allowlist":[{"pattern":"/bin/hostname"}]}}}"#,
//!     std::path::Path::new("exec-approvals.json"),
//! )?;
//! let policy = parsed.file.resolve_agent(DEFAULT_AGENT_ID, &HostFallback::default());
//! assert_eq!(policy.allowlist[0].pattern, "/bin/hostname");
//! # Ok::<(), gatehouse_store::StoreError>(())
//! ```

pub mod approvals_db;
pub mod approvals_file;
pub mod audit;
mod durable_fs;
mod error;
pub mod private_file;

pub use error::{DatabaseError, PostgresError, StoreError};
