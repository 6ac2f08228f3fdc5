//! The security core of Gatehouse: pure, synchronous decisions about whether an agent may call a
//! tool and whether a shell command may run without a person.
//!
//! **Invariants.** This crate never touches the network, never spawns a process, never writes a
//! file and never reads the clock: time is passed in by the caller. It reads the filesystem only
//! to resolve executables against `PATH`, to hash files that an approval binds and to resolve
//! the paths of file-tool calls (`lstat`, `readlink`). Every outcome
//! carries the rule that produced it, and anything the crate does not understand is refused.
//!
//! **Entry points.** [`exec::evaluate`] decides one command; [`requirement`] composes the
//! decision with `ask`, approvals and `askFallback`; [`tool_call::decide_tool_call`] decides any
//! tool call (files, URLs, MCP tools, exec).
//!
//! ```
//! use gatehouse_policy::exec::{evaluate, Decision, ExecPolicy, ExecRequest};
//!
//! let policy = ExecPolicy::default();
//! let verdict = evaluate(&ExecRequest::shell("cat /etc/shadow > /tmp/x", "/"), &policy);
//! assert_ne!(verdict.decision, Decision::Allow);
//! ```

pub mod binding;
pub mod elevated;
pub mod exec;
pub mod files;
pub mod modes;
pub mod requirement;
mod text;
pub mod tool_call;
pub mod tools;
pub mod urls;

pub use exec::{Decision, ExecEvaluation, ExecPolicy, ExecRequest, evaluate};
pub use modes::{ApprovalDecision, Ask, ParseModeError, Security};
pub use tools::{EffectiveTools, ToolPolicyInputs, check_tool_call, effective_tools};
