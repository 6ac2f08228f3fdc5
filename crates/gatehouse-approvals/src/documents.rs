//! [`DocumentStore`]: state one gateway keeps as a small file in its data directory
//! (`exec-approvals.json`, the chat sessions' `/elevated` levels) and replicas sharing one
//! database keep as named documents there, so a change made through any replica applies on
//! every one.
//!
//! A document is opaque bytes to the store: whoever owns it parses, validates and serializes
//! it, exactly as for its file, so both backings read and write the same format.

use std::sync::Arc;

use tokio::sync::watch;

use crate::store::StoreError;

/// One version of a document: its bytes, or `None` while it has never been written.
pub type DocumentBytes = Option<Arc<[u8]>>;

/// A change: given the bytes stored now, the bytes to store instead, or `None` to leave them.
pub type DocumentChange<'a> = &'a mut dyn FnMut(Option<&[u8]>) -> Option<Vec<u8>>;

/// Named documents several gateways share.
///
/// Blocking: implementations wait for their database, so callers run off the async threads
/// (as for [`AllowlistStore`](crate::AllowlistStore)).
pub trait DocumentStore: Send + Sync + std::fmt::Debug {
    /// The document `name` as stored now, and then whenever any gateway changes it: the
    /// receiver is updated soon after each committed change (and read again after the store
    /// lost contact with the database), so readers check it instead of querying.
    fn follow(&self, name: &str) -> Result<watch::Receiver<DocumentBytes>, StoreError>;

    /// Applies `change` to the latest bytes of `name`, with every other gateway's change to it
    /// held off until this one is stored, so concurrent changes never lose each other. Returns
    /// the bytes stored afterwards.
    fn update(&self, name: &str, change: DocumentChange<'_>) -> Result<DocumentBytes, StoreError>;
}
