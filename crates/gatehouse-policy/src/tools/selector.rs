//! Resolves list entries (names, aliases, globs, `group:<name>`, plugin ids) to the catalog
//! tools they denote.

use std::collections::BTreeSet;

use super::catalog::{Catalog, core_group, is_core_tool, is_mcp_server_id};
use super::names::{glob_matches, is_glob, normalize_tool_name};
use super::warnings::Warnings;

/// What kind of tools an entry denotes; decides whether an allow list is "plugin-only".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// `*`.
    Wildcard,
    /// Denotes at least one core tool.
    Core,
    /// Denotes plugin tools only.
    Plugin,
    /// Denotes nothing in this run.
    Unknown,
}

/// A list resolved against the catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ResolvedList {
    /// Canonical names of the tools the entries denote.
    pub(crate) tools: BTreeSet<String>,
    /// Whether the list had at least one entry and every entry denotes plugin tools only.
    pub(crate) plugin_only: bool,
    /// Whether the list had no non-blank entry.
    pub(crate) is_empty: bool,
}

/// Whether a normalized entry denotes the tool `name` (canonical), registered by `plugin`
/// (lower-cased id; `None` for core tools). The one definition of what an entry means: lists
/// resolve through it over the catalog, and a call to a tool outside the catalog is matched
/// with it directly.
pub(crate) fn denotes(entry: &str, name: &str, plugin: Option<&str>) -> bool {
    if entry == "*" {
        return true;
    }
    if entry == "group:plugins" {
        return plugin.is_some();
    }
    if entry == "group:mcp" {
        return plugin.is_some_and(is_mcp_server_id);
    }
    if let Some(group) = entry.strip_prefix("group:") {
        return core_group(group).is_some_and(|members| members.contains(&name));
    }
    if is_glob(entry) {
        return glob_matches(entry, name);
    }
    // A bare plugin id (or MCP server id, `mcp__github`) denotes that plugin's tools; a tool of
    // the same name is included too, so a deny entry can never be read more narrowly than
    // written.
    name == entry || plugin == Some(entry)
}

/// Resolves one entry.
pub(crate) fn resolve_entry(entry: &str, catalog: &Catalog) -> (BTreeSet<String>, EntryKind) {
    let entry = normalize_tool_name(entry);
    let tools: BTreeSet<String> = catalog
        .tools()
        .iter()
        .filter(|t| denotes(&entry, &t.name, t.plugin.as_deref()))
        .map(|t| t.name.clone())
        .collect();
    let kind = if entry == "*" {
        EntryKind::Wildcard
    } else if tools.iter().any(|t| is_core_tool(t)) {
        EntryKind::Core
    } else if tools.is_empty() {
        EntryKind::Unknown
    } else {
        EntryKind::Plugin
    };
    (tools, kind)
}

/// The first of `entries` that denotes `tool`, a canonical name registered by `plugin`; used
/// for lists consulted per call (`tools.alwaysAsk`), where the tool may be missing from the
/// catalog.
pub fn first_entry_denoting<'a>(
    entries: &'a [String],
    tool: &str,
    plugin: Option<&str>,
) -> Option<&'a String> {
    let plugin = plugin.map(str::to_lowercase);
    entries
        .iter()
        .find(|entry| denotes(&normalize_tool_name(entry), tool, plugin.as_deref()))
}

/// Resolves a list, warning about entries that denote nothing; `path` names the list in
/// warnings (e.g. `tools.allow`).
pub(crate) fn resolve_list<'a>(
    entries: impl IntoIterator<Item = &'a String>,
    path: &str,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> ResolvedList {
    let mut resolved = ResolvedList {
        plugin_only: true,
        is_empty: true,
        ..Default::default()
    };
    for entry in entries {
        if entry.trim().is_empty() {
            warnings.push(format!("tools: {path} has a blank entry; it is ignored"));
            continue;
        }
        resolved.is_empty = false;
        let (tools, kind) = resolve_entry(entry, catalog);
        if kind != EntryKind::Plugin {
            resolved.plugin_only = false;
        }
        if kind == EntryKind::Unknown {
            // The normalized form, so `Typo` and `typo` are one warning.
            let entry = normalize_tool_name(entry);
            warnings.push(format!(
                "tools: {path} entry {entry:?} matches no known tool, group or plugin"
            ));
        }
        resolved.tools.extend(tools);
    }
    resolved.plugin_only &= !resolved.is_empty;
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::inputs::PluginTool;

    fn catalog() -> Catalog {
        let plugins = [
            PluginTool {
                plugin_id: "lobster".into(),
                name: "lobster_run".into(),
            },
            PluginTool {
                plugin_id: "lobster".into(),
                name: "lobster_status".into(),
            },
            PluginTool {
                plugin_id: "voice".into(),
                name: "voice_call".into(),
            },
        ];
        Catalog::new(&plugins, &mut Warnings::default())
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn resolves_aliases_case_insensitively() {
        assert_eq!(
            resolve_entry("BASH", &catalog()),
            (set(&["exec"]), EntryKind::Core)
        );
        assert_eq!(
            resolve_entry("Apply-Patch", &catalog()),
            (set(&["apply_patch"]), EntryKind::Core)
        );
    }

    #[test]
    fn resolves_core_groups() {
        assert_eq!(
            resolve_entry("group:fs", &catalog()),
            (
                set(&["read", "write", "edit", "apply_patch"]),
                EntryKind::Core
            )
        );
        assert_eq!(
            resolve_entry("group:media", &catalog()),
            (set(&["image", "image_generate", "tts"]), EntryKind::Core)
        );
    }

    #[test]
    fn resolves_plugin_groups_and_plugin_ids() {
        assert_eq!(
            resolve_entry("group:plugins", &catalog()),
            (
                set(&["lobster_run", "lobster_status", "voice_call"]),
                EntryKind::Plugin
            )
        );
        assert_eq!(
            resolve_entry("Lobster", &catalog()),
            (set(&["lobster_run", "lobster_status"]), EntryKind::Plugin)
        );
        assert_eq!(
            resolve_entry("voice_call", &catalog()),
            (set(&["voice_call"]), EntryKind::Plugin)
        );
    }

    #[test]
    fn resolves_globs_over_core_and_plugin_tools() {
        assert_eq!(
            resolve_entry("memory_*", &catalog()),
            (set(&["memory_get", "memory_search"]), EntryKind::Core)
        );
        assert_eq!(
            resolve_entry("lobster_*", &catalog()),
            (set(&["lobster_run", "lobster_status"]), EntryKind::Plugin)
        );
        assert_eq!(resolve_entry("*", &catalog()).0.len(), 28 + 3);
    }

    #[test]
    fn resolves_mcp_servers_globs_and_the_mcp_group() {
        let c = Catalog::new(
            &[
                crate::tools::mcp_tool("github", "create_issue"),
                crate::tools::mcp_tool("github", "list_prs"),
                crate::tools::mcp_tool("slack", "post"),
                PluginTool {
                    plugin_id: "lobster".into(),
                    name: "lobster_run".into(),
                },
            ],
            &mut Warnings::default(),
        );
        assert_eq!(
            resolve_entry("mcp__github", &c),
            (
                set(&["mcp__github__create_issue", "mcp__github__list_prs"]),
                EntryKind::Plugin
            )
        );
        assert_eq!(
            resolve_entry("mcp__github__*", &c).0,
            set(&["mcp__github__create_issue", "mcp__github__list_prs"])
        );
        assert_eq!(
            resolve_entry("group:mcp", &c).0,
            set(&[
                "mcp__github__create_issue",
                "mcp__github__list_prs",
                "mcp__slack__post"
            ])
        );
        assert_eq!(resolve_entry("group:plugins", &c).0.len(), 4);
        assert_eq!(resolve_entry("group:mcp", &catalog()).1, EntryKind::Unknown);
    }

    #[test]
    fn matches_a_tool_outside_the_catalog_as_the_catalog_would() {
        let entries: Vec<String> = ["read", "MCP__GitHub", "mcp__*__delete_*"]
            .map(str::to_owned)
            .to_vec();
        let github = Some("mcp__github");
        assert_eq!(
            first_entry_denoting(&entries, "mcp__github__x", github),
            Some(&entries[1])
        );
        assert_eq!(
            first_entry_denoting(&entries, "mcp__slack__delete_all", Some("mcp__slack")),
            Some(&entries[2])
        );
        assert_eq!(
            first_entry_denoting(&entries, "mcp__slack__post", Some("mcp__slack")),
            None
        );
        assert_eq!(
            first_entry_denoting(&entries, "read", None),
            Some(&entries[0])
        );
    }

    #[test]
    fn unknown_entries_denote_nothing() {
        assert_eq!(
            resolve_entry("group:nope", &catalog()),
            (set(&[]), EntryKind::Unknown)
        );
        assert_eq!(
            resolve_entry("nope_*", &catalog()),
            (set(&[]), EntryKind::Unknown)
        );
        assert_eq!(
            resolve_entry("nope", &catalog()),
            (set(&[]), EntryKind::Unknown)
        );
    }

    #[test]
    fn a_list_is_plugin_only_when_every_entry_names_plugins() {
        let c = catalog();
        let mut w = Warnings::default();
        let list = |entries: &[&str], w: &mut Warnings| {
            let owned: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
            resolve_list(&owned, "x.allow", &c, w)
        };
        assert!(list(&["lobster", "voice_call"], &mut w).plugin_only);
        assert!(!list(&["lobster", "read"], &mut w).plugin_only);
        assert!(!list(&["lobster", "*"], &mut w).plugin_only);
        assert!(!list(&["lobster", "typo"], &mut w).plugin_only);
        assert!(!list(&[], &mut w).plugin_only);
        assert!(list(&[" "], &mut w).is_empty);
        assert_eq!(
            w.into_vec(),
            vec![
                "tools: x.allow entry \"typo\" matches no known tool, group or plugin".to_owned(),
                "tools: x.allow has a blank entry; it is ignored".to_owned(),
            ]
        );
    }
}
