//! Gatehouse configuration: the JSON5 file operators write, with OpenClaw's keys.
//!
//! Work in progress: the config model lands with the policy core (issue 2).
