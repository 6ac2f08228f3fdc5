//! The sub-agent step: a spawned session never gets more than its parent, loses tools that only
//! a main agent should drive, and at the maximum spawn depth also loses the spawning tools.

use std::collections::BTreeSet;

use super::catalog::Catalog;
use super::filter::{Filter, PluginOnlyAllow, rules_filters};
use super::inputs::{AgentScope, SpawnContext, SubagentConfig};
use super::names::normalize_tool_name;
use super::warnings::Warnings;

/// Denied to every sub-agent unless the agent's own `tools.allow` names the tool exactly.
pub const SUBAGENT_ALWAYS_DENY: [&str; 8] = [
    "gateway",
    "agents_list",
    "whatsapp_login",
    "session_status",
    "cron",
    "memory_search",
    "memory_get",
    "sessions_send",
];

/// Also denied to leaf sub-agents (depth ≥ max spawn depth), which may not spawn further.
pub const SUBAGENT_LEAF_DENY: [&str; 4] = [
    "subagents",
    "sessions_list",
    "sessions_history",
    "sessions_spawn",
];

/// The spawn depth at which a sub-agent is a leaf when nothing is configured.
pub const DEFAULT_MAX_SPAWN_DEPTH: u32 = 1;

const DEFAULTS_MAX_DEPTH_PATH: &str = "agents.defaults.subagents.maxSpawnDepth";

/// Reported for tools removed because the parent session lacks them.
pub const PARENT_PATH: &str = "(parent session lacks this tool)";

/// Reported for tools on the built-in sub-agent deny list.
pub const ALWAYS_DENY_PATH: &str = "(sub-agent default deny)";

/// The effective maximum spawn depth and the config key it came from: the agent's override,
/// else the default, else 1. A configured 0 is read as 1.
pub(crate) fn max_spawn_depth(
    agent: Option<&AgentScope>,
    config: &SubagentConfig,
) -> (u32, String) {
    let (value, path) = match agent.and_then(|a| a.max_spawn_depth.map(|d| (a, d))) {
        Some((agent, depth)) => (depth, format!("{}.subagents.maxSpawnDepth", agent.path)),
        None => (
            config
                .default_max_spawn_depth
                .unwrap_or(DEFAULT_MAX_SPAWN_DEPTH),
            DEFAULTS_MAX_DEPTH_PATH.to_owned(),
        ),
    };
    (value.max(1), path)
}

/// The sub-agent step's filters for a session spawned at `spawn.depth`.
pub(crate) fn subagent_filters(
    spawn: &SpawnContext,
    agent: Option<&AgentScope>,
    config: &SubagentConfig,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> Vec<Filter> {
    let explicit: BTreeSet<String> = agent
        .map(|a| &a.tools.rules)
        .into_iter()
        .chain(config.tools.as_ref())
        .flat_map(|r| r.allow.iter().chain(r.also_allow.iter()).flatten())
        .map(|entry| normalize_tool_name(entry))
        .collect();
    let mut filters = vec![Filter::Deny {
        tools: SUBAGENT_ALWAYS_DENY
            .iter()
            .filter(|tool| !explicit.contains(**tool))
            .map(|tool| (*tool).to_owned())
            .collect(),
        config_path: ALWAYS_DENY_PATH.to_owned(),
    }];
    let (max_depth, max_depth_path) = max_spawn_depth(agent, config);
    if spawn.depth.get() >= max_depth {
        filters.push(Filter::Deny {
            tools: SUBAGENT_LEAF_DENY.iter().map(|t| (*t).to_owned()).collect(),
            config_path: max_depth_path,
        });
    }
    if let Some(rules) = &config.tools {
        filters.extend(rules_filters(
            rules,
            PluginOnlyAllow::Apply,
            catalog,
            warnings,
        ));
    }
    filters.push(Filter::Keep {
        tools: spawn.parent_allowed.clone(),
        config_path: PARENT_PATH.to_owned(),
    });
    filters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_spawn_depth_defaults_to_one() {
        let (depth, path) = max_spawn_depth(None, &SubagentConfig::default());
        assert_eq!((depth, path.as_str()), (1, DEFAULTS_MAX_DEPTH_PATH));
    }

    #[test]
    fn agent_override_beats_the_default_and_zero_reads_as_one() {
        let config = SubagentConfig {
            default_max_spawn_depth: Some(3),
            tools: None,
        };
        assert_eq!(max_spawn_depth(None, &config).0, 3);
        let agent = AgentScope {
            id: "worker".into(),
            path: "agents.list[1]".into(),
            max_spawn_depth: Some(0),
            ..Default::default()
        };
        assert_eq!(
            max_spawn_depth(Some(&agent), &config),
            (1, "agents.list[1].subagents.maxSpawnDepth".to_owned())
        );
    }
}
