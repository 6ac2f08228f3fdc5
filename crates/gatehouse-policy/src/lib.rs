//! The security core of Gatehouse: pure, synchronous decisions about whether an agent may call a
//! tool and whether a shell command may run without a person.
//!
//! **Invariants.** This crate never touches the network, never spawns a process, never writes a
//! file and never reads the clock: time is passed in by the caller. It reads the filesystem only
//! to resolve executables against `PATH` and to hash files that an approval binds. Every outcome
//! carries the rule that produced it, and anything the crate does not understand is refused.

pub mod binding;
pub mod modes;

pub use modes::{ApprovalDecision, Ask, ParseModeError, Security};
