//! `exec.approvals.get` / `.set`: read and replace `exec-approvals.json`, never showing its
//! socket token, and never overwriting an edit the caller did not see (`baseHash`).

use std::path::Path;

use gatehouse_service::FileView;

use crate::error::Error;
use crate::methods::{Call, service_of};
use crate::wire::NoParams;
use crate::wire::exec::{FileResult, SetFileParams};

/// `exec.approvals.get`: the file with its token redacted, and the hash to base a write on.
/// `operator.approvals` scope.
pub(super) async fn get(call: Call, _: NoParams) -> Result<FileResult, Error> {
    const METHOD: &str = "exec.approvals.get";
    let view = service_of(&call)?
        .approvals_file()
        .map_err(|error| Error::service(METHOD, error))?;
    file_result(&view)
}

/// `exec.approvals.set`: replaces the file if it still has `baseHash`; a redacted or missing
/// token keeps the stored one. `operator.admin` scope.
pub(super) async fn set(call: Call, params: SetFileParams) -> Result<FileResult, Error> {
    const METHOD: &str = "exec.approvals.set";
    let text = params.file.to_string();
    let view = service_of(&call)?
        .replace_approvals_file(&text, Path::new(METHOD), &params.base_hash)
        .await
        .map_err(|error| Error::service(METHOD, error))?;
    file_result(&view)
}

fn file_result(view: &FileView) -> Result<FileResult, Error> {
    FileResult::new(view).map_err(|error| Error::Internal {
        reason: error.to_string(),
    })
}
