//! `exec.approvals.get` / `.set`: read and replace `exec-approvals.json`, never showing its
//! socket token, and never overwriting an edit the caller did not see (`baseHash`).

use std::path::Path;

use gatehouse_store::StoreError;
use gatehouse_store::approvals_file::{RedactedSnapshot, parse_str, to_file_bytes};
use serde_json::Value;

use crate::error::Error;
use crate::methods::{Call, exec_of};
use crate::wire::NoParams;
use crate::wire::exec::{FileResult, SetFileParams};

/// `exec.approvals.get`: the file with its token redacted, and the hash to base a write on.
/// `operator.approvals` scope.
pub(super) async fn get(call: Call, _: NoParams) -> Result<FileResult, Error> {
    let exec = exec_of(&call)?;
    file_result(&exec.snapshot()?.redacted())
}

/// `exec.approvals.set`: replaces the file if it still has `baseHash`; a redacted or missing
/// token keeps the stored one. `operator.admin` scope.
pub(super) async fn set(call: Call, params: SetFileParams) -> Result<FileResult, Error> {
    let exec = exec_of(&call)?;
    let text = params.file.to_string();
    let parsed = parse_str(&text, Path::new("exec.approvals.set")).map_err(|error| {
        Error::InvalidParams {
            method: "exec.approvals.set".into(),
            reason: error.to_string(),
        }
    })?;
    let snapshot = exec
        .file()
        .replace(parsed.file, &params.base_hash)
        .map_err(|error| match error {
            StoreError::Conflict {
                expected, actual, ..
            } => Error::Conflict { expected, actual },
            other => Error::Store {
                reason: other.to_string(),
            },
        })?;
    file_result(&snapshot.redacted())
}

fn file_result(snapshot: &RedactedSnapshot) -> Result<FileResult, Error> {
    let bytes = to_file_bytes(&snapshot.file).map_err(|error| Error::Internal {
        reason: error.to_string(),
    })?;
    let file: Value = serde_json::from_slice(&bytes).map_err(|error| Error::Internal {
        reason: error.to_string(),
    })?;
    Ok(FileResult {
        file,
        hash: snapshot.hash.clone(),
        exists: snapshot.exists,
    })
}
