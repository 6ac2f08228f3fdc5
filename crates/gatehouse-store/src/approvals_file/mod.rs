//! `exec-approvals.json`: the host's own exec settings and allowlists, in OpenClaw's format.
//!
//! [`parse_str`] turns text into the model, [`ExecApprovalsFile::resolve_agent`] and
//! [`ExecApprovalsFile::effective_policy`] say what it means for an agent, and
//! [`ExecApprovalsStore`] reads and writes the file safely; [`SnapshotCache`] spares a re-parse
//! when it has not changed.

mod cache;
mod model;
mod parse;
mod resolve;
mod store;
mod token;

pub use cache::{SETTLE, SnapshotCache};
pub use model::{
    AgentEntry, AllowlistEntry, AllowlistItem, ExecApprovalsFile, PolicySettings, Setting,
    SettingValue, SocketConfig,
};
pub use parse::{
    DEFAULT_AGENT_ID, LEGACY_DEFAULT_AGENT_ID, LoadNote, LoadReport, Parsed, WILDCARD_AGENT_ID,
    parse_str,
};
pub use resolve::{
    AgentPolicy, Composed, EffectivePolicy, HostFallback, RequestedPolicy, Resolved, SettingSource,
};
pub use store::{
    AddedEntry, AllowlistHit, EXEC_APPROVALS_DOCUMENT, ExecApprovalsStore, Import,
    NewAllowlistEntry, RedactedSnapshot, Snapshot, hash_bytes, to_file_bytes,
};
pub use token::{REDACTED_TOKEN, SocketToken};
