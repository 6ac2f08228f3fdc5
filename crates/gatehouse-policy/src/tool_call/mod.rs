//! The tool-call gate: one decision for any tool call, `allow`, `ask` or `deny`, with the
//! reasons and the facts the caller needs to carry it out safely.
//!
//! [`decide_tool_call`] runs, in order: the tool policy at call time (removed, owner-only and
//! unknown tools are refused; an MCP tool the catalog does not know yet is judged as if
//! registered), a check that the parameters are the tool's kind, the tool's own checks (file
//! tools through [`crate::files`], URLs through [`crate::urls`], `exec` through
//! [`crate::exec::evaluate`]), then the always-ask lists and the stored [`Grant`]s. Reasons
//! compose as exec's do: the strictest wins. An allowed file call names the canonical paths to
//! open; an allowed URL call the addresses to pin; every call that is not refused names the
//! grant an allow-always answer would store.
//!
//! ```
//! use gatehouse_policy::exec::{Decision, ExecPolicy};
//! use gatehouse_policy::files::{FileRules, FileRulesConfig};
//! use gatehouse_policy::tool_call::{ToolCall, ToolCallOutcome, ToolCallPolicy, ToolParams, decide_tool_call};
//! use gatehouse_policy::tools::{ToolPolicyInputs, effective_tools};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("notes.md"), "hi").unwrap();
//! let files = FileRules::new(FileRulesConfig::new(dir.path())).unwrap();
//! let inputs = ToolPolicyInputs::default();
//! let effective = effective_tools(&inputs);
//! let exec = ExecPolicy::default();
//! let policy = ToolCallPolicy {
//!     tools: &inputs, effective: &effective, always_ask: &[], files: Some(&files),
//!     fetch: None, browser: None, exec: &exec, grants: &[],
//! };
//! let call = ToolCall::new("read", ToolParams::Read { path: "notes.md".into() });
//! let ToolCallOutcome::Decided(decision) = decide_tool_call(&call, &policy) else { unreachable!() };
//! assert_eq!(decision.decision, Decision::Allow);
//! assert_eq!(decision.files[0].path, files.workspace().join("notes.md"));
//! ```

mod call;
mod decide;
mod decision;
mod grant;
mod policy;

pub use call::{ToolCall, ToolParams};
pub use decide::decide_tool_call;
pub use decision::{HostToResolve, ToolCallDecision, ToolCallOutcome, ToolCallReason};
pub use grant::{Grant, GrantScope};
pub use policy::{AskList, ToolCallPolicy};
