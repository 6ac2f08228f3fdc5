//! Channel-independent chat approvals.
//!
//! Work in progress: lands with the chat core (issue 6).

pub mod channel;
pub mod commands;
pub mod config;
pub mod delivery;
pub mod dispatch;
pub mod error;
pub mod filter;
pub mod grammar;
pub mod plan;
pub mod render;
pub mod replies;
pub mod route;
pub mod sanitize;
pub mod token;
