//! Whether an agent id named on the command line is one the deployment knows. Once the config
//! lists agents, an id outside the list still gets an answer (the global settings, as the
//! gateway gives it), so a misspelt `--agent` would answer plausibly for the wrong agent.

use gatehouse_chat::sanitize::one_line;
use gatehouse_config::{Config, DEFAULT_AGENT_ID};

/// Refuses `agent` when the config lists agents and neither it nor `also_known` (the approvals
/// file's agents) names it. The default agent id is always known: it is what a command names
/// when it names none.
pub(crate) fn known_agent<'a>(
    config: &Config,
    also_known: impl IntoIterator<Item = &'a str>,
    agent: &str,
) -> Result<(), String> {
    let known = config.agents.list.is_empty()
        || agent == DEFAULT_AGENT_ID
        || config.agent(agent).is_some()
        || also_known.into_iter().any(|id| id != "*" && id == agent);
    if known {
        return Ok(());
    }
    let listed: Vec<String> = config
        .agents
        .list
        .iter()
        .map(|listed| format!("`{}`", one_line(&listed.id, 80)))
        .collect();
    Err(format!(
        "agent `{}` is not in `agents.list` ({}); an unlisted id gets the global settings, so a \
         typo would answer for the wrong agent",
        one_line(agent, 80),
        listed.join(", ")
    ))
}
