//! One decision for one tool call, host names resolved: the tool policy first (a removed or
//! unknown tool is refused as such, whatever it was sent), then the parameters, then the
//! policy core's decision, resolving every host it asks for and deciding again with the
//! answers (those are the addresses the caller must pin).

use gatehouse_config::Config;
use gatehouse_policy::exec::{Decision, ExecPolicy, ExecRequest};
use gatehouse_policy::tool_call::{
    Grant, ToolCall, ToolCallDecision, ToolCallOutcome, ToolCallPolicy, ToolCallReason, ToolParams,
    decide_tool_call,
};
use gatehouse_policy::tools::{
    EffectiveTools, Sandboxing, Sender, SessionContext, ToolPolicyInputs,
    check_tool_call_registering_mcp, normalize_tool_name,
};

use super::params::{ExecParams, Parsed};
use super::rules::AgentRules;
use crate::dns::Resolver;
use crate::policy::compose::effective_tools_at_depth;
use crate::policy::request::with_host_env;

/// Who is calling, as far as the tool policy cares; the agent host's word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSession {
    /// The sender owns the deployment (owner-only tools are refused to everyone else).
    pub owner: bool,
    /// The model provider, for `byProvider` rules and `apply_patch`'s model gate.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The session runs sandboxed (the sandbox step applies).
    pub sandboxed: bool,
    /// How deep in sub-agents the session is (0 for the agent itself).
    pub spawn_depth: u32,
    /// The chat conversation the call comes from, for its `channels.*` tool policy.
    pub conversation: Option<Conversation>,
}

/// A group, guild or channel of a chat platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// The platform (`telegram`, `discord`, `slack`).
    pub channel: String,
    /// Its id there: a Telegram group's chat id, a Discord guild id, a Slack channel id.
    pub id: String,
}

/// The tool policy's inputs for `agent_id` in `session`, and the tools it ends up with.
pub fn tool_policy_inputs(
    config: &Config,
    agent_id: &str,
    session: &ToolSession,
) -> (ToolPolicyInputs, EffectiveTools) {
    let mut tool_config = config.tool_config(agent_id);
    tool_config.group = session
        .conversation
        .as_ref()
        .and_then(|c| config.conversation_rules(&c.channel, &c.id));
    let mut inputs = ToolPolicyInputs {
        config: tool_config,
        session: SessionContext {
            sender: if session.owner {
                Sender::Owner
            } else {
                Sender::NonOwner
            },
            provider: session.provider.clone(),
            model: session.model.clone(),
            sandbox: if session.sandboxed {
                Sandboxing::On
            } else {
                Sandboxing::Off
            },
            spawn: None,
        },
        plugin_tools: Vec::new(),
    };
    let effective = effective_tools_at_depth(&mut inputs, session.spawn_depth);
    (inputs, effective)
}

/// Everything one decision reads, borrowed from the caller.
#[derive(Debug, Clone, Copy)]
pub struct Gate<'a> {
    /// The session's tool-policy inputs.
    pub inputs: &'a ToolPolicyInputs,
    /// What they allow.
    pub effective: &'a EffectiveTools,
    /// The agent's compiled rules.
    pub rules: &'a AgentRules,
    /// The exec policy that applies (after any elevated level).
    pub exec: &'a ExecPolicy,
    /// The agent's allow-always grants.
    pub grants: &'a [Grant],
}

/// Decides `tool` called with `parsed` (the parameters as read, or why they could not be).
pub async fn judge_tool_call(
    tool: &str,
    parsed: Result<Parsed, String>,
    gate: Gate<'_>,
    resolver: &Resolver,
) -> ToolCallDecision {
    let policy = ToolCallPolicy {
        tools: gate.inputs,
        effective: gate.effective,
        always_ask: &gate.rules.always_ask,
        files: gate.rules.files.as_ref().ok(),
        fetch: gate.rules.fetch.as_ref().ok(),
        browser: gate.rules.browser.as_ref().ok(),
        exec: gate.exec,
        grants: gate.grants,
    };
    let canonical = normalize_tool_name(tool);
    // A refused tool is refused as such, before anything of its parameters is read.
    if check_tool_call_registering_mcp(gate.inputs, gate.effective, tool).is_err() {
        let call = ToolCall::new(tool, ToolParams::Other { urls: Vec::new() });
        if let ToolCallOutcome::Decided(decision) = decide_tool_call(&call, &policy) {
            return *decision;
        }
    }
    let params = match parsed.and_then(|parsed| typed(parsed, gate.rules)) {
        Ok(params) => params,
        Err(why) => return refused(canonical, "invalid-params", why),
    };
    let mut call = ToolCall::new(tool, params);
    // One round of resolution: the second decision has every host's addresses.
    for _ in 0..2 {
        let hosts = match decide_tool_call(&call, &policy) {
            ToolCallOutcome::Decided(decision) => return explained(*decision, gate.rules),
            ToolCallOutcome::NeedsResolution(hosts) => hosts,
        };
        let lookups = hosts.iter().map(|host| resolver.resolve(&host.host));
        let answers = futures_util::future::join_all(lookups).await;
        for (host, answer) in hosts.into_iter().zip(answers) {
            match answer {
                Ok(addresses) => call = call.with_resolved(host.host, addresses),
                Err(why) => return refused(canonical, "dns-failed", why),
            }
        }
    }
    refused(
        canonical,
        "dns-failed",
        "the decision still asked for resolution after every host was resolved".to_owned(),
    )
}

/// The policy's parameters: `exec` becomes its request (in the workspace when no `cwd` was
/// sent), with the gateway's `PATH` and `HOME` unless the call overrides them.
fn typed(parsed: Parsed, rules: &AgentRules) -> Result<ToolParams, String> {
    match parsed {
        Parsed::Params(params) => Ok(params),
        Parsed::Exec(ExecParams { command, cwd, env }) => {
            let cwd = cwd.or_else(|| rules.workspace.clone()).ok_or_else(|| {
                "exec needs `cwd` (or a workspace for the agent, where it would run)".to_owned()
            })?;
            let request = with_host_env(ExecRequest::shell(command, cwd), &env);
            Ok(ToolParams::Exec(Box::new(request)))
        }
    }
}

/// The decision with the policy's generic "did not load" refusals replaced by why they did
/// not (no workspace, a workspace that does not exist).
fn explained(mut decision: ToolCallDecision, rules: &AgentRules) -> ToolCallDecision {
    for reason in &mut decision.reasons {
        let why = match reason.rule.as_str() {
            "no-file-rules" => rules.files.as_ref().err(),
            "no-url-rules" if reason.message.contains("browser") => rules.browser.as_ref().err(),
            "no-url-rules" => rules.fetch.as_ref().err(),
            _ => None,
        };
        if let Some(why) = why {
            reason.message.clone_from(why);
        }
    }
    decision
}

/// A refusal of the whole call for one reason.
pub(crate) fn refused(tool: String, rule: &str, message: String) -> ToolCallDecision {
    ToolCallDecision {
        tool,
        decision: Decision::Deny,
        reasons: vec![ToolCallReason {
            decision: Decision::Deny,
            rule: rule.to_owned(),
            message,
        }],
        files: Vec::new(),
        urls: Vec::new(),
        exec: None,
        grant: None,
    }
}
