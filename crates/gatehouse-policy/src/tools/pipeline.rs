//! The entry point: builds every step's filters from the inputs and runs the catalog through
//! them in order, recording the first removal of each tool.

use std::collections::BTreeSet;

use super::catalog::{Catalog, OWNER_ONLY_TOOLS};
use super::filter::{Filter, PluginOnlyAllow, keep, rules_filters};
use super::inputs::{Sandboxing, Sender, ToolPolicyInputs, ToolScope};
use super::profile::Profile;
use super::provider::{apply_patch_allowed, matching_provider_rules};
use super::sandbox::sandbox_filters;
use super::selector::{resolve_entry, resolve_list};
use super::subagent::subagent_filters;
use super::verdict::{EffectiveTools, Removal, SandboxDecision, Step, ToolVerdict};
use super::warnings::Warnings;

/// Reported for owner-only tools removed for a non-owner sender.
pub const OWNER_ONLY_PATH: &str = "(owner-only tool)";

/// Reported when the model gate removes `apply_patch`.
pub const APPLY_PATCH_MODELS_PATH: &str = "tools.exec.applyPatch.allowModels";

/// Computes which tools the session may see and call, and why each other tool is missing.
///
/// Pure and total: every input yields an answer, and anything not understood narrows the set
/// (with a warning) rather than widening it.
pub fn effective_tools(inputs: &ToolPolicyInputs) -> EffectiveTools {
    let mut warnings = Warnings::default();
    let catalog = Catalog::new(&inputs.plugin_tools, &mut warnings);
    let (steps, sandbox) = build_steps(inputs, &catalog, &mut warnings);

    let mut tools: Vec<ToolVerdict> = catalog
        .tools()
        .iter()
        .map(|tool| ToolVerdict {
            name: tool.name.clone(),
            allowed: true,
            removed_by: None,
        })
        .collect();
    for (step, filters) in &steps {
        for verdict in tools.iter_mut().filter(|v| v.allowed) {
            if let Some(path) = filters.iter().find_map(|f| f.removes(&verdict.name)) {
                verdict.allowed = false;
                verdict.removed_by = Some(Removal {
                    step: *step,
                    config_path: path.to_owned(),
                });
            }
        }
    }
    EffectiveTools {
        allowed: tools
            .iter()
            .filter(|v| v.allowed)
            .map(|v| v.name.clone())
            .collect(),
        tools,
        warnings: warnings.into_vec(),
        sandbox,
    }
}

/// Every step with its filters, in pipeline order.
fn build_steps(
    inputs: &ToolPolicyInputs,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> (Vec<(Step, Vec<Filter>)>, Option<SandboxDecision>) {
    let config = &inputs.config;
    let session = &inputs.session;
    let global = &config.global;
    let agent = config.agent.as_ref();
    let agent_tools = agent.map(|a| &a.tools);
    let mut steps = Vec::with_capacity(Step::ALL.len());

    let allow_models = config
        .apply_patch_allow_models
        .as_deref()
        .unwrap_or_default();
    if !apply_patch_allowed(session, allow_models) {
        steps.push((
            Step::Model,
            vec![Filter::Deny {
                tools: BTreeSet::from(["apply_patch".to_owned()]),
                config_path: APPLY_PATCH_MODELS_PATH.to_owned(),
            }],
        ));
    }

    if session.sender == Sender::NonOwner {
        steps.push((
            Step::Owner,
            vec![Filter::Deny {
                tools: OWNER_ONLY_TOOLS.iter().map(|t| (*t).to_owned()).collect(),
                config_path: OWNER_ONLY_PATH.to_owned(),
            }],
        ));
    }

    steps.push((
        Step::Profile,
        profile_filters(global, agent_tools, catalog, warnings),
    ));
    steps.push((
        Step::ProviderProfile,
        provider_profile_filters(inputs, catalog, warnings),
    ));

    let (global_filters, global_provider_filters) =
        scope_filters(global, inputs, catalog, warnings);
    steps.push((Step::Global, global_filters));
    steps.push((Step::GlobalProvider, global_provider_filters));
    if let Some(scope) = agent_tools {
        let (agent_filters, agent_provider_filters) =
            scope_filters(scope, inputs, catalog, warnings);
        steps.push((Step::Agent, agent_filters));
        steps.push((Step::AgentProvider, agent_provider_filters));
    }
    if let Some(group) = &config.group {
        steps.push((
            Step::Group,
            rules_filters(group, PluginOnlyAllow::Strip, catalog, warnings),
        ));
    }

    let mut sandbox = None;
    if session.sandbox == Sandboxing::On {
        let agent_sandbox = agent.and_then(|a| a.sandbox.as_ref());
        let (filters, decision) =
            sandbox_filters(agent_sandbox, config.sandbox.as_ref(), catalog, warnings);
        steps.push((Step::Sandbox, filters));
        sandbox = Some(decision);
    }

    if let Some(spawn) = &session.spawn {
        steps.push((
            Step::Subagent,
            subagent_filters(spawn, agent, &config.subagents, catalog, warnings),
        ));
    }
    (steps, sandbox)
}

/// The allow/deny filters of a scope and of its `byProvider` entries matching the session. A
/// plugin-only allow list is stripped with a warning here too, as at the profile and group
/// steps (as OpenClaw does at every step): `tools.allow: ["lobster"]` would otherwise remove
/// every core tool, which is never what an operator adding a plugin meant.
fn scope_filters(
    scope: &ToolScope,
    inputs: &ToolPolicyInputs,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> (Vec<Filter>, Vec<Filter>) {
    let own = rules_filters(&scope.rules, PluginOnlyAllow::Strip, catalog, warnings);
    let by_provider = matching_provider_rules(&scope.by_provider, &inputs.session)
        .into_iter()
        .flat_map(|p| rules_filters(&p.rules, PluginOnlyAllow::Strip, catalog, warnings))
        .collect();
    (own, by_provider)
}

/// The profile step: the agent's profile, else the global one, widened by the matching
/// `alsoAllow` and by the tools that configured `exec`/`fs` sections imply.
fn profile_filters(
    global: &ToolScope,
    agent: Option<&ToolScope>,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> Vec<Filter> {
    // The agent's setting replaces the global one, list by list.
    let first_with =
        |has: fn(&ToolScope) -> bool| [agent, Some(global)].into_iter().flatten().find(|s| has(s));
    let Some(scope) = first_with(|s| s.profile.is_some()) else {
        return Vec::new();
    };
    let also_allow = first_with(|s| s.rules.also_allow.is_some());
    let also_allow_path = also_allow
        .map(|s| format!("{}.alsoAllow", s.rules.path))
        .unwrap_or_default();
    let scopes = || [Some(global), agent].into_iter().flatten();
    let mut implied: Vec<String> = Vec::new();
    if scopes().any(|s| s.exec_configured) {
        implied.extend(["exec", "process"].map(str::to_owned));
    }
    if scopes().any(|s| s.fs_configured) {
        implied.extend(["read", "write", "edit"].map(str::to_owned));
    }
    named_profile_filter(
        scope.profile.as_deref().unwrap_or_default(),
        &format!("{}.profile", scope.rules.path),
        (
            also_allow
                .and_then(|s| s.rules.also_allow.as_ref())
                .into_iter()
                .flatten()
                .chain(&implied),
            &also_allow_path,
        ),
        catalog,
        warnings,
    )
}

/// The provider-profile step: the agent's matching `byProvider` profile, else the global one.
fn provider_profile_filters(
    inputs: &ToolPolicyInputs,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> Vec<Filter> {
    let session = &inputs.session;
    let agent = inputs
        .config
        .agent
        .as_ref()
        .map(|a| matching_provider_rules(&a.tools.by_provider, session))
        .unwrap_or_default();
    let global = matching_provider_rules(&inputs.config.global.by_provider, session);
    let chosen = if agent.iter().any(|e| e.profile.is_some()) {
        agent
    } else {
        global
    };
    chosen
        .into_iter()
        .filter_map(|entry| entry.profile.as_deref().map(|p| (entry, p)))
        .flat_map(|(entry, profile)| {
            named_profile_filter(
                profile,
                &format!("{}.profile", entry.rules.path),
                (
                    entry.rules.also_allow.iter().flatten(),
                    &format!("{}.alsoAllow", entry.rules.path),
                ),
                catalog,
                warnings,
            )
        })
        .collect()
}

/// A keep-filter for a named profile plus extra entries; an unknown profile keeps nothing.
fn named_profile_filter<'a>(
    name: &str,
    path: &str,
    (extra, extra_path): (impl IntoIterator<Item = &'a String>, &str),
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> Vec<Filter> {
    let profile = match name.parse::<Profile>() {
        Ok(profile) => profile,
        Err(error) => {
            warnings.push(format!(
                "tools: {path}: {error}; allowing no tools at this step"
            ));
            return vec![Filter::Keep {
                tools: BTreeSet::new(),
                config_path: path.to_owned(),
            }];
        }
    };
    let Some(entries) = profile.entries() else {
        return Vec::new();
    };
    let mut tools = BTreeSet::new();
    for entry in entries {
        tools.extend(resolve_entry(entry, catalog).0);
    }
    tools.extend(resolve_list(extra, extra_path, catalog, warnings).tools);
    vec![keep(tools, path.to_owned())]
}
