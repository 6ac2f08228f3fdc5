//! What applies to a request: the composed policy (config and `exec-approvals.json`), cached per
//! file version, the elevated level laid over it, and the JSON reports of a decision and of the
//! effective tools.

pub(crate) mod cache;
pub mod compose;
pub(crate) mod elevated;
pub mod report;
pub mod request;
pub mod tool_call;
