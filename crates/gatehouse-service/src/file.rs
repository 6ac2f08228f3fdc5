//! `exec-approvals.json` for operators: read it without its socket token, and replace it
//! without overwriting an edit the caller did not see (`baseHash`).

use std::path::Path;

use gatehouse_store::StoreError;
use gatehouse_store::approvals_file::{RedactedSnapshot, parse_str, to_file_bytes};

use crate::error::ServiceError;
use crate::pipeline::invalid;
use crate::service::Service;

/// The approvals file as an operator may see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileView {
    /// The file's bytes as they would be written, with the socket token redacted.
    pub bytes: Vec<u8>,
    /// The hash to base a replacement on.
    pub hash: String,
    /// False when there is no file yet.
    pub exists: bool,
}

impl Service {
    /// `exec.approvals.get`: the file with its token redacted, and the hash to base a write on.
    pub fn approvals_file(&self) -> Result<FileView, ServiceError> {
        view(&self.core().snapshot()?.redacted())
    }

    /// `exec.approvals.set`: replaces the file with `text` if it still has `base_hash`; a
    /// redacted or missing token keeps the stored one. `source` names the text in a parse
    /// error. The write (a file's fsync, a shared store's round trips) runs on the blocking
    /// pool.
    pub async fn replace_approvals_file(
        &self,
        text: &str,
        source: &Path,
        base_hash: &str,
    ) -> Result<FileView, ServiceError> {
        let parsed = parse_str(text, source).map_err(|error| invalid(error.to_string()))?;
        let file = self.core().file.clone();
        let base_hash = base_hash.to_owned();
        let replaced = tokio::task::spawn_blocking(move || file.replace(parsed.file, &base_hash))
            .await
            .map_err(ServiceError::internal)?;
        let snapshot = replaced.map_err(|error| match error {
            StoreError::Conflict {
                expected, actual, ..
            } => ServiceError::Conflict { expected, actual },
            other => ServiceError::store(other),
        })?;
        view(&snapshot.redacted())
    }
}

fn view(snapshot: &RedactedSnapshot) -> Result<FileView, ServiceError> {
    Ok(FileView {
        bytes: to_file_bytes(&snapshot.file).map_err(ServiceError::internal)?,
        hash: snapshot.hash.clone(),
        exists: snapshot.exists,
    })
}
