//! The tool-call gate as the gateway and `gatehouse check --tool` apply it: a call's JSON
//! parameters read into the policy's types ([`params`]), the agent's rules compiled from the
//! config ([`rules`]), and the decision with every host name resolved ([`judge`]).
//!
//! Shared by the service (`tools.call.check`, `tools.call.request`) and the CLI's offline
//! check, so the two never disagree.

pub mod judge;
pub mod params;
pub mod rules;

pub use judge::{Conversation, Gate, ToolSession, judge_tool_call, tool_policy_inputs};
pub use params::{ExecParams, Parsed, parse_params, salient, summary};
pub use rules::AgentRules;
