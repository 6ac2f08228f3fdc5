//! Properties over generated configs: adding a deny entry never widens the effective set, a
//! sub-agent's set is always within its parent's, and a plugin-only allow list at any config
//! step acts as no allow list at all.

use std::collections::BTreeSet;

use gatehouse_policy::tools::{
    AgentScope, ProviderRules, Sandboxing, Sender, ToolPolicyInputs, ToolRules, effective_tools,
};
use proptest::prelude::*;
use proptest::sample::select;

use crate::tool_support::{agent, plugin, spawned};

/// Entries of every kind: tools, aliases, groups, globs, plugin ids, plugin tools, unknowns.
const ENTRIES: &[&str] = &[
    "read",
    "write",
    "exec",
    "bash",
    "apply_patch",
    "apply-patch",
    "process",
    "web_search",
    "memory_get",
    "sessions_spawn",
    "subagents",
    "session_status",
    "browser",
    "message",
    "cron",
    "gateway",
    "nodes",
    "agents_list",
    "image",
    "tts",
    "whatsapp_login",
    "group:fs",
    "group:runtime",
    "group:sessions",
    "group:openclaw",
    "group:plugins",
    "group:ui",
    "*",
    "sessions_*",
    "memory_?et",
    "lobster",
    "lobster_run",
    "discord",
    "voice_call",
    "typo",
    "",
];

const PROFILES: &[&str] = &["minimal", "coding", "messaging", "full", "bogus"];

fn entry() -> impl Strategy<Value = String> {
    select(ENTRIES).prop_map(str::to_owned)
}

fn list() -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::of(prop::collection::vec(entry(), 0..4))
}

fn profile() -> impl Strategy<Value = Option<String>> {
    prop::option::of(select(PROFILES).prop_map(str::to_owned))
}

fn rules(path: &'static str) -> impl Strategy<Value = ToolRules> {
    (list(), list(), list()).prop_map(move |(allow, also_allow, deny)| ToolRules {
        path: path.to_owned(),
        allow,
        also_allow,
        deny,
    })
}

fn providers(scope: &'static str) -> impl Strategy<Value = Vec<ProviderRules>> {
    let key = select(&["openai", "openai/gpt-5", "anthropic"][..]);
    prop::collection::vec(
        (key, profile(), rules("")).prop_map(move |(key, profile, mut rules)| {
            rules.path = format!("{scope}.byProvider.{key}");
            ProviderRules {
                key: key.to_owned(),
                profile,
                rules,
            }
        }),
        0..3,
    )
}

fn agent_scope() -> impl Strategy<Value = Option<AgentScope>> {
    let parts = (
        profile(),
        rules("agents.list[0].tools"),
        providers("agents.list[0].tools"),
        prop::option::of(rules("agents.list[0].tools.sandbox.tools")),
        prop::option::of(0u32..4),
        any::<(bool, bool)>(),
    );
    prop::option::of(parts.prop_map(
        |(profile, rules, by_provider, sandbox, depth, (exec, fs))| {
            let mut a = agent(0, "main");
            a.tools.profile = profile;
            a.tools.rules = rules;
            a.tools.by_provider = by_provider;
            a.tools.exec_configured = exec;
            a.tools.fs_configured = fs;
            a.sandbox = sandbox;
            a.max_spawn_depth = depth;
            a
        },
    ))
}

prop_compose! {
    fn inputs()(
        profile in profile(),
        global in rules("tools"),
        by_provider in providers("tools"),
        agent in agent_scope(),
        group in prop::option::of(rules("channels.discord.guilds.1.tools")),
        sandbox_rules in prop::option::of(rules("tools.sandbox.tools")),
        subagent_rules in prop::option::of(rules("tools.subagents.tools")),
        max_depth in prop::option::of(0u32..4),
        allow_models in prop::option::of(prop::collection::vec(
            select(&["gpt-5", "anthropic/claude-opus-4"][..]).prop_map(str::to_owned), 0..2)),
        provider in select(&["openai", "anthropic", ""][..]),
        owner in any::<bool>(),
        sandboxed in any::<bool>(),
        flags in any::<(bool, bool)>(),
    ) -> ToolPolicyInputs {
        let mut i = ToolPolicyInputs::default();
        i.config.global.profile = profile;
        i.config.global.rules = global;
        i.config.global.by_provider = by_provider;
        i.config.global.exec_configured = flags.0;
        i.config.global.fs_configured = flags.1;
        i.config.agent = agent;
        i.config.group = group;
        i.config.sandbox = sandbox_rules;
        i.config.subagents.tools = subagent_rules;
        i.config.subagents.default_max_spawn_depth = max_depth;
        i.config.apply_patch_allow_models = allow_models;
        i.session.provider = (!provider.is_empty()).then(|| provider.to_owned());
        i.session.model = Some("gpt-5".to_owned());
        i.session.sender = if owner { Sender::Owner } else { Sender::NonOwner };
        i.session.sandbox = if sandboxed { Sandboxing::On } else { Sandboxing::Off };
        i.plugin_tools = vec![
            plugin("lobster", "lobster_run"),
            plugin("discord", "discord_post"),
            plugin("voice", "voice_call"),
        ];
        i
    }
}

/// Every deny list of the inputs. Sandbox deny lists are included only when present: an absent
/// one falls back to the next layer, so creating it is a replacement, not an addition.
fn deny_lists(i: &mut ToolPolicyInputs) -> Vec<&mut Option<Vec<String>>> {
    let mut lists: Vec<&mut Option<Vec<String>>> = vec![&mut i.config.global.rules.deny];
    lists.extend(
        i.config
            .global
            .by_provider
            .iter_mut()
            .map(|p| &mut p.rules.deny),
    );
    if let Some(a) = i.config.agent.as_mut() {
        lists.push(&mut a.tools.rules.deny);
        lists.extend(a.tools.by_provider.iter_mut().map(|p| &mut p.rules.deny));
        if let Some(s) = a.sandbox.as_mut().filter(|s| s.deny.is_some()) {
            lists.push(&mut s.deny);
        }
    }
    if let Some(g) = i.config.group.as_mut() {
        lists.push(&mut g.deny);
    }
    if let Some(s) = i.config.sandbox.as_mut().filter(|s| s.deny.is_some()) {
        lists.push(&mut s.deny);
    }
    if let Some(s) = i.config.subagents.tools.as_mut() {
        lists.push(&mut s.deny);
    }
    lists
}

/// Every allow/alsoAllow list pair of the config steps that strip a plugin-only allow list:
/// global, its providers, the agent, its providers, the group.
fn step_rules(i: &mut ToolPolicyInputs) -> Vec<&mut ToolRules> {
    let mut rules: Vec<&mut ToolRules> = vec![&mut i.config.global.rules];
    rules.extend(i.config.global.by_provider.iter_mut().map(|p| &mut p.rules));
    if let Some(a) = i.config.agent.as_mut() {
        rules.push(&mut a.tools.rules);
        rules.extend(a.tools.by_provider.iter_mut().map(|p| &mut p.rules));
    }
    if let Some(g) = i.config.group.as_mut() {
        rules.push(g);
    }
    rules
}

/// Allow lists that name only plugin tools.
const PLUGIN_ONLY: &[&[&str]] = &[
    &["lobster"],
    &["group:plugins"],
    &["lobster_run", "discord"],
    &["voice_call"],
];

fn allowed(i: &ToolPolicyInputs) -> BTreeSet<String> {
    effective_tools(i).allowed
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn adding_a_deny_entry_never_widens_the_set(
        base in inputs(),
        depth in prop::option::of(1u32..4),
        which in any::<prop::sample::Index>(),
        added in entry(),
    ) {
        let base = match depth {
            Some(d) => spawned(&base, d),
            None => base,
        };
        let before = allowed(&base);
        let mut narrowed = base.clone();
        let mut lists = deny_lists(&mut narrowed);
        let target = which.index(lists.len());
        lists[target].get_or_insert_with(Vec::new).push(added);
        let after = allowed(&narrowed);
        prop_assert!(after.is_subset(&before), "before {before:?}\nafter {after:?}");
    }

    /// Issue 29: at the global and agent steps (and their providers, and the group) a
    /// plugin-only allow list is stripped, so core tools stay available.
    #[test]
    fn a_plugin_only_allow_list_acts_as_none(
        base in inputs(),
        which in any::<prop::sample::Index>(),
        list in select(PLUGIN_ONLY),
    ) {
        let mut with_list = base.clone();
        let mut without = base;
        let mut targets = step_rules(&mut with_list);
        let target = which.index(targets.len());
        targets[target].allow = Some(list.iter().map(|e| (*e).to_owned()).collect());
        targets[target].also_allow = None;
        let mut targets = step_rules(&mut without);
        targets[target].allow = None;
        targets[target].also_allow = None;
        prop_assert_eq!(allowed(&with_list), allowed(&without));
    }

    #[test]
    fn a_sub_agent_never_exceeds_its_parent(
        parent in inputs(),
        child_agent in agent_scope(),
        depth in 1u32..4,
    ) {
        let parent_set = allowed(&parent);
        let mut child = spawned(&parent, depth);
        // The child may run as a different agent with a more generous config.
        child.config.agent = child_agent;
        let child_set = allowed(&child);
        prop_assert!(child_set.is_subset(&parent_set), "parent {parent_set:?}\nchild {child_set:?}");
        let grandchild_set = allowed(&spawned(&child, depth + 1));
        prop_assert!(grandchild_set.is_subset(&child_set));
    }
}
