//! The exec machinery the use cases share: pending caps, the wait for a person, the audit feed,
//! allowlist use marks, program resolution and the runner.

pub(crate) mod allowlist_use;
pub(crate) mod audit;
pub(crate) mod forward;
pub(crate) mod pending;
pub(crate) mod resolve;
pub(crate) mod runner;
pub(crate) mod sandbox;
pub(crate) mod waiting;
