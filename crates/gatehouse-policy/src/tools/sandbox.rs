//! The sandbox step: a sandboxed session gets the sandbox allow/deny lists on top of everything
//! else, taken from the agent's entry, else the global one, else the built-in defaults.

use std::collections::BTreeSet;

use super::catalog::Catalog;
use super::filter::{Filter, keep};
use super::inputs::ToolRules;
use super::selector::resolve_list;
use super::verdict::{SandboxDecision, SandboxListOrigin, SandboxSource};
use super::warnings::Warnings;

/// Tools a sandboxed session keeps when no sandbox allow list is configured.
pub const SANDBOX_DEFAULT_ALLOW: [&str; 14] = [
    "exec",
    "process",
    "read",
    "write",
    "edit",
    "apply_patch",
    "image",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "session_status",
];

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

/// The sandbox step's filters and where its lists came from.
pub(crate) fn sandbox_filters(
    agent: Option<&ToolRules>,
    global: Option<&ToolRules>,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> (Vec<Filter>, SandboxDecision) {
    let pick = |list: fn(&ToolRules) -> Option<&Vec<String>>, suffix: &str| {
        if let Some((rules, entries)) = agent.and_then(|r| list(r).map(|l| (r, l))) {
            (
                entries.clone(),
                SandboxSource::Agent,
                format!("{}.{suffix}", rules.path),
            )
        } else if let Some((rules, entries)) = global.and_then(|r| list(r).map(|l| (r, l))) {
            (
                entries.clone(),
                SandboxSource::Global,
                format!("{}.{suffix}", rules.path),
            )
        } else {
            let defaults: Vec<String> = match suffix {
                "allow" => SANDBOX_DEFAULT_ALLOW
                    .iter()
                    .map(|t| (*t).to_owned())
                    .collect(),
                _ => SANDBOX_DEFAULT_DENY_TOOLS
                    .iter()
                    .chain(CHANNEL_IDS.iter())
                    .map(|t| (*t).to_owned())
                    .collect(),
            };
            (
                defaults,
                SandboxSource::Default,
                format!("{GLOBAL_SANDBOX_PATH}.{suffix}"),
            )
        }
    };
    let (deny, deny_source, deny_path) = pick(|r| r.deny.as_ref(), "deny");
    let (allow, allow_source, allow_path) = pick(|r| r.allow.as_ref(), "allow");

    // Channel ids in the default deny list are not core tools; only warn about entries the
    // operator wrote.
    let mut scratch = Warnings::default();
    let deny_warnings = if deny_source == SandboxSource::Default {
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
        allow: SandboxListOrigin {
            source: allow_source,
            config_path: allow_path,
        },
        deny: SandboxListOrigin {
            source: deny_source,
            config_path: deny_path,
        },
    };
    (filters, decision)
}
