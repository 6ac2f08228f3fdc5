//! What applies to a request: the composed policy (config and `exec-approvals.json`), cached per
//! file version, the elevated level laid over it, the JSON reports of a decision and of the
//! effective tools, and an agent's effective policy as operators read it.

pub mod agent_view;
pub(crate) mod cache;
pub mod compose;
pub(crate) mod elevated;
pub mod report;
pub mod request;
pub mod tool_call;
