//! The append-only, hash-chained audit log: every request, decision, delivery and execution as
//! one JSON line, each carrying the sha256 of the line before it.
//!
//! **Guarantees.** An edited, removed, inserted or reordered record, a removed tail (checked
//! against the `<log>.head` anchor) and a torn last line are all reported by [`verify`], which
//! names the first bad line. The writer never reads the clock (callers pass `at_ms`), holds an
//! inter-process lock for its lifetime, creates files 0600, and refuses to extend a log that
//! fails verification. **Limit:** someone who can rewrite the log *and* its head, recomputing
//! every hash, is not detected; ship lines off the host to catch that (see `docs/audit.md`).
//!
//! **Two homes, one chain format.** The log is a file set in the data directory, or, when the
//! approvals store is PostgreSQL, rows of one table all gateways append to
//! ([`SharedAuditLog`]); rows are checked by the same walk (`rows`) and give the same
//! [`VerifyReport`].
//!
//! ```
//! use gatehouse_store::audit::{verify, AuditEvent, AuditKind, AuditLog, AuditOptions};
//! # let dir = tempfile::tempdir()?;
//! let path = dir.path().join("audit.jsonl");
//! let (log, _report) = AuditLog::open(&path, AuditOptions::default())?;
//! let event = AuditEvent::new(AuditKind::Request, serde_json::json!({"command": "ls"}))
//!     .with_approval_id("a1");
//! assert_eq!(log.append(1_700_000_000_000, event)?, 1);
//! drop(log);
//! assert!(verify(&path)?.is_valid());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chain;
mod error;
mod head;
mod record;
pub(crate) mod rows;
mod segments;
mod shared;
mod transition;
mod verify;
mod writer;

pub use error::AuditError;
pub use record::{AuditEvent, AuditKind, AuditRecord, GENESIS_PREV};
pub(crate) use record::{ChainTip, encode_line};
pub use shared::{AuditFuture, SharedAuditLog};
pub use transition::{Transition, transition_event};
pub use verify::{Problem, ProblemKind, VerifyReport, verify};
pub use writer::{
    AuditLog, AuditOptions, DEFAULT_ROTATE_AT_BYTES, LOG_FILE_NAME, OpenReport, SyncPolicy,
    TornTail,
};
