//! The Gatehouse approval manager.
//!
//! Work in progress: lands with the approvals core (issue 4).
