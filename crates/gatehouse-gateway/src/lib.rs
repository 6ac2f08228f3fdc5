//! The Gatehouse server.
//!
//! Work in progress: lands with the gateway (issue 5).
