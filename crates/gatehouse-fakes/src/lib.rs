//! Local fake chat platform servers for tests and demos.
//!
//! Work in progress: lands with the chat channels (issues 6-8).
