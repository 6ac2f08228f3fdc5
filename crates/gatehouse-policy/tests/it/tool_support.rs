//! Builders for tool-policy inputs and a compact, whole-value rendering of the outcome.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::num::NonZeroU32;

use gatehouse_policy::tools::{
    AgentScope, EffectiveTools, PluginTool, ProviderRules, Sender, SpawnContext, Step,
    ToolPolicyInputs, ToolRules, effective_tools,
};
use pretty_assertions::assert_eq;

/// `Some(list)` of owned strings.
pub(crate) fn list(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| (*s).to_owned()).collect())
}

/// `Some(owned)`.
pub(crate) fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

/// Inputs with the given global path set, an owner sender on `openai/gpt-5`, nothing else.
pub(crate) fn owner_on_openai() -> ToolPolicyInputs {
    let mut inputs = base();
    inputs.session.sender = Sender::Owner;
    inputs.session.provider = some("openai");
    inputs.session.model = some("gpt-5");
    inputs
}

/// Inputs for a non-owner on `anthropic/claude-sonnet-4`.
pub(crate) fn guest_on_anthropic() -> ToolPolicyInputs {
    let mut inputs = base();
    inputs.session.provider = some("anthropic");
    inputs.session.model = some("claude-sonnet-4");
    inputs
}

fn base() -> ToolPolicyInputs {
    let mut inputs = ToolPolicyInputs::default();
    inputs.config.global.rules.path = "tools".to_owned();
    inputs
}

/// Rules at `path` with the given lists; an empty slice means the list is absent.
pub(crate) fn rules(path: &str, allow: &[&str], also_allow: &[&str], deny: &[&str]) -> ToolRules {
    let opt = |items: &[&str]| if items.is_empty() { None } else { list(items) };
    ToolRules {
        path: path.to_owned(),
        allow: opt(allow),
        also_allow: opt(also_allow),
        deny: opt(deny),
    }
}

/// A `byProvider` entry under `scope_path` (e.g. `tools`).
pub(crate) fn by_provider(
    scope_path: &str,
    key: &str,
    profile: Option<&str>,
    allow: &[&str],
    deny: &[&str],
) -> ProviderRules {
    ProviderRules {
        key: key.to_owned(),
        profile: profile.map(str::to_owned),
        rules: rules(&format!("{scope_path}.byProvider.{key}"), allow, &[], deny),
    }
}

/// The entry `agents.list[index]` with id `id` and no settings.
pub(crate) fn agent(index: usize, id: &str) -> AgentScope {
    let path = format!("agents.list[{index}]");
    let mut agent = AgentScope {
        id: id.to_owned(),
        path: path.clone(),
        ..Default::default()
    };
    agent.tools.rules.path = format!("{path}.tools");
    agent
}

/// A plugin tool.
pub(crate) fn plugin(plugin_id: &str, name: &str) -> PluginTool {
    PluginTool {
        plugin_id: plugin_id.to_owned(),
        name: name.to_owned(),
    }
}

/// The inputs of a session spawned by `parent` at `depth`, inheriting its config and context.
pub(crate) fn spawned(parent: &ToolPolicyInputs, depth: u32) -> ToolPolicyInputs {
    let mut child = parent.clone();
    let depth = NonZeroU32::new(depth).unwrap_or(NonZeroU32::MIN);
    child.session.spawn = Some(SpawnContext {
        depth,
        parent_allowed: effective_tools(parent).allowed,
    });
    child
}

/// Renders an outcome as text: the allowed set, removals grouped by step and config path (tools
/// in catalog order), the sandbox origins and the warnings.
pub(crate) fn render(effective: &EffectiveTools) -> String {
    let mut out = String::new();
    let allowed: Vec<&str> = effective.allowed.iter().map(String::as_str).collect();
    let _ = writeln!(out, "allowed: {}", allowed.join(" "));
    let mut removed: BTreeMap<(Step, &str), Vec<&str>> = BTreeMap::new();
    for verdict in &effective.tools {
        assert_eq!(verdict.allowed, verdict.removed_by.is_none(), "{verdict:?}");
        assert_eq!(
            verdict.allowed,
            effective.allowed.contains(&verdict.name),
            "{verdict:?}"
        );
        if let Some(removal) = &verdict.removed_by {
            removed
                .entry((removal.step, removal.config_path.as_str()))
                .or_default()
                .push(&verdict.name);
        }
    }
    for ((step, path), tools) in removed {
        let _ = writeln!(out, "{step} {path}: {}", tools.join(" "));
    }
    if let Some(sandbox) = &effective.sandbox {
        let _ = writeln!(
            out,
            "sandbox allow from {} {}, deny from {} {}",
            sandbox.allow.source.label(),
            sandbox.allow.config_path,
            sandbox.deny.source.label(),
            sandbox.deny.config_path
        );
    }
    for warning in &effective.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out
}

/// Evaluates `inputs` and compares the whole rendered outcome with `expect`.
#[track_caller]
pub(crate) fn check(inputs: &ToolPolicyInputs, expect: &str) {
    let actual = render(&effective_tools(inputs));
    assert_eq!(actual.trim(), expect.trim());
}
