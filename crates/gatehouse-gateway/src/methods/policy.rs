//! `exec.policy.check` and `tools.effective`: the same answers as `gatehouse check --json` and
//! `gatehouse tools --json`, from the server's config and approvals file.

use gatehouse_policy::elevated::SenderIdentity;
use gatehouse_policy::exec::evaluate;
use gatehouse_policy::tools::{Sandboxing, Sender, SessionContext, ToolPolicyInputs};

use crate::chat::LevelRequest;
use crate::error::Error;
use crate::methods::{Call, exec_of, requested_policy};
use crate::payloads::{DecisionJson, ToolsJson, effective_tools_at_depth, exec_request};
use crate::wire::exec::{CheckParams, ToolsParams};

/// `exec.policy.check`: may this command run without a person? `agent` scope.
pub(super) async fn check(call: Call, params: CheckParams) -> Result<DecisionJson, Error> {
    let exec = exec_of(&call)?;
    let request =
        exec_request(params.command, params.argv, params.cwd, &params.env).map_err(|reason| {
            Error::InvalidParams {
                method: "exec.policy.check".into(),
                reason,
            }
        })?;
    let level = LevelRequest {
        method: "exec.policy.check",
        agent_id: &params.agent_id,
        session_key: params.session_key.as_deref(),
        level: params.elevated,
        sender: params.sender.as_ref().map(SenderIdentity::from),
    };
    let (policy, _, _) = requested_policy(&call, &exec, &level)?;
    Ok(DecisionJson::from(&evaluate(&request, &policy)))
}

/// `tools.effective`: the agent's tool set and why each other tool was removed. `agent` scope.
pub(super) async fn effective(call: Call, params: ToolsParams) -> Result<ToolsJson, Error> {
    let exec = exec_of(&call)?;
    super::acting_for(&call, &params.agent_id)?;
    let mut inputs = ToolPolicyInputs {
        config: exec.config().tool_config(&params.agent_id),
        session: SessionContext {
            sender: if params.owner {
                Sender::Owner
            } else {
                Sender::NonOwner
            },
            provider: params.provider,
            model: params.model,
            sandbox: if params.sandboxed {
                Sandboxing::On
            } else {
                Sandboxing::Off
            },
            spawn: None,
        },
        plugin_tools: Vec::new(),
    };
    let effective = effective_tools_at_depth(&mut inputs, params.spawn_depth);
    Ok(ToolsJson::from(&effective))
}
