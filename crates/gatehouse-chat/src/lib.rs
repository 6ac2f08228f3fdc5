//! Channel-independent chat approvals.
//!
//! Work in progress: lands with the chat core (issue 6).
