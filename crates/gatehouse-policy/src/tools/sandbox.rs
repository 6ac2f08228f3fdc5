//! The sandbox step: a sandboxed session gets the sandbox allow/deny lists on top of everything
//! else, taken from the agent's entry, else the global one, else the built-in defaults.

use std::collections::BTreeSet;

use super::catalog::Catalog;
use super::filter::{Filter, keep};
use super::inputs::ToolRules;
use super::selector::resolve_list;
use super::verdict::{SandboxDecision, SandboxListOrigin, SandboxSource};
use super::warnings::Warnings;

/// Entries a sandboxed session keeps when no sandbox allow list is configured: exec process
/// read write edit apply_patch image and the whole sessions group.
pub const SANDBOX_DEFAULT_ALLOW: [&str; 4] =
    ["group:runtime", "group:fs", "image", "group:sessions"];

/// Built-in chat channel ids; a plugin tool or plugin named after a channel is denied in a
/// sandbox by default, because it would let sandboxed code talk on that channel.
pub const CHANNEL_IDS: [&str; 9] = [
    "telegram",
    "whatsapp",
    "discord",
    "irc",
    "googlechat",
    "slack",
    "signal",
    "imessage",
    "line",
];

/// Tools (besides every channel id) a sandboxed session loses when no sandbox deny list is set.
pub const SANDBOX_DEFAULT_DENY_TOOLS: [&str; 5] = ["browser", "canvas", "nodes", "cron", "gateway"];

/// Where the sandbox lists default to in the config, named in default-sourced removals.
const GLOBAL_SANDBOX_PATH: &str = "tools.sandbox.tools";

/// One sandbox list: the agent's, else the global one, else the built-in default, each list
/// chosen on its own (an agent may set only `deny` and inherit the global `allow`).
fn pick_list(
    agent: Option<&ToolRules>,
    global: Option<&ToolRules>,
    list: fn(&ToolRules) -> Option<&Vec<String>>,
    suffix: &str,
    defaults: &[&str],
) -> (Vec<String>, SandboxListOrigin) {
    let configured = [
        (agent, SandboxSource::Agent),
        (global, SandboxSource::Global),
    ]
    .into_iter()
    .find_map(|(rules, source)| rules.and_then(|r| list(r).map(|l| (r, l, source))));
    match configured {
        Some((rules, entries, source)) => (
            entries.clone(),
            SandboxListOrigin {
                source,
                config_path: format!("{}.{suffix}", rules.path),
            },
        ),
        None => (
            defaults.iter().map(|t| (*t).to_owned()).collect(),
            SandboxListOrigin {
                source: SandboxSource::Default,
                config_path: format!("{GLOBAL_SANDBOX_PATH}.{suffix}"),
            },
        ),
    }
}

/// The sandbox step's filters and where its lists came from.
pub(crate) fn sandbox_filters(
    agent: Option<&ToolRules>,
    global: Option<&ToolRules>,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> (Vec<Filter>, SandboxDecision) {
    let default_deny: Vec<&str> = SANDBOX_DEFAULT_DENY_TOOLS
        .iter()
        .chain(&CHANNEL_IDS)
        .copied()
        .collect();
    let (deny, deny_origin) = pick_list(agent, global, |r| r.deny.as_ref(), "deny", &default_deny);
    let (allow, allow_origin) = pick_list(
        agent,
        global,
        |r| r.allow.as_ref(),
        "allow",
        &SANDBOX_DEFAULT_ALLOW,
    );
    let (deny_path, allow_path) = (
        deny_origin.config_path.clone(),
        allow_origin.config_path.clone(),
    );

    // Channel ids in the default deny list are not core tools; only warn about entries the
    // operator wrote.
    let mut scratch = Warnings::default();
    let deny_warnings = if deny_origin.source == SandboxSource::Default {
        &mut scratch
    } else {
        &mut *warnings
    };
    let deny = resolve_list(&deny, &deny_path, catalog, deny_warnings).tools;

    let mut filters = Vec::new();
    if !deny.is_empty() {
        filters.push(Filter::Deny {
            tools: deny.clone(),
            config_path: deny_path.clone(),
        });
    }
    if allow.iter().any(|entry| !entry.trim().is_empty()) {
        let also_allow: Vec<String> = [agent, global]
            .into_iter()
            .flatten()
            .filter_map(|r| r.also_allow.clone())
            .flatten()
            .collect();
        let mut tools: BTreeSet<String> = resolve_list(
            allow.iter().chain(&also_allow),
            &allow_path,
            catalog,
            warnings,
        )
        .tools;
        // As in OpenClaw, image understanding stays available in a sandbox unless denied.
        if !deny.contains("image") {
            tools.insert("image".to_owned());
        }
        filters.push(keep(tools, allow_path.clone()));
    }
    let decision = SandboxDecision {
        allow: allow_origin,
        deny: deny_origin,
    };
    (filters, decision)
}
