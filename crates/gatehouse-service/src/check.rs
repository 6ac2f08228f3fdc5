//! Asking without running: may this command run without a person, and which tools does an
//! agent have. The same answers as `gatehouse check` and `gatehouse tools`, from the service's
//! config and approvals file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gatehouse_policy::exec::ExecEvaluation;
use gatehouse_policy::tools::{
    EffectiveTools, Sandboxing, Sender, SessionContext, ToolPolicyInputs,
};

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pipeline::{CHECK, ExecContext, acting_for, invalid};
use crate::policy::compose::effective_tools_at_depth;
use crate::policy::request::exec_request_with;
use crate::service::Service;

/// A command to judge: exactly one of `command` (a shell string) and `argv`.
#[derive(Debug, Clone, Default)]
pub struct CheckInput {
    /// A shell string.
    pub command: Option<String>,
    /// An exact argv.
    pub argv: Option<Vec<String>>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Environment overrides.
    pub env: BTreeMap<String, String>,
    /// Whose settings apply.
    pub context: ExecContext,
}

/// The session an agent's tool set is asked for, as `gatehouse tools` takes it.
#[derive(Debug, Clone, Default)]
pub struct ToolsInput {
    /// The agent.
    pub agent_id: String,
    /// The model provider, for provider-scoped rules.
    pub provider: Option<String>,
    /// The model, for model-scoped rules.
    pub model: Option<String>,
    /// Whether the session's sender is the owner.
    pub owner: bool,
    /// Whether the session is sandboxed.
    pub sandboxed: bool,
    /// How deep in sub-agents the session is (0 for the agent itself).
    pub spawn_depth: u32,
}

impl Service {
    /// `exec.policy.check`: the policy's answer for `input`, under the level it asks for.
    pub fn check(
        &self,
        caller: &dyn Caller,
        input: CheckInput,
    ) -> Result<ExecEvaluation, ServiceError> {
        let (_, judged) = self.judge(caller, CHECK, &input.context, |base| {
            exec_request_with(input.command, input.argv, input.cwd, &input.env, base)
                .map_err(invalid)
        })?;
        Ok(judged.evaluation)
    }

    /// `tools.effective`: the agent's tool set and why each other tool was removed.
    pub fn tools(
        &self,
        caller: &dyn Caller,
        input: ToolsInput,
    ) -> Result<EffectiveTools, ServiceError> {
        acting_for(caller, &input.agent_id)?;
        let mut inputs = ToolPolicyInputs {
            config: self.core().config.tool_config(&input.agent_id),
            session: SessionContext {
                sender: if input.owner {
                    Sender::Owner
                } else {
                    Sender::NonOwner
                },
                provider: input.provider,
                model: input.model,
                sandbox: if input.sandboxed {
                    Sandboxing::On
                } else {
                    Sandboxing::Off
                },
                spawn: None,
            },
            plugin_tools: Vec::new(),
        };
        Ok(effective_tools_at_depth(&mut inputs, input.spawn_depth))
    }
}
