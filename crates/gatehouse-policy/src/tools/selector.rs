//! Resolves list entries (names, aliases, globs, `group:<name>`, plugin ids) to the catalog
//! tools they denote.

use std::collections::BTreeSet;

use super::catalog::{Catalog, core_group, is_core_tool};
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

/// Resolves one entry.
pub(crate) fn resolve_entry(entry: &str, catalog: &Catalog) -> (BTreeSet<String>, EntryKind) {
    let entry = normalize_tool_name(entry);
    let names = catalog.tools().iter();
    let tools: BTreeSet<String> = if entry == "*" {
        return (names.map(|t| t.name.clone()).collect(), EntryKind::Wildcard);
    } else if entry == "group:plugins" {
        let tools: BTreeSet<String> = names
            .filter(|t| t.plugin.is_some())
            .map(|t| t.name.clone())
            .collect();
        let kind = if tools.is_empty() {
            EntryKind::Unknown
        } else {
            EntryKind::Plugin
        };
        return (tools, kind);
    } else if let Some(group) = entry.strip_prefix("group:") {
        core_group(group)
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned)
            .collect()
    } else if is_glob(&entry) {
        names
            .filter(|t| glob_matches(&entry, &t.name))
            .map(|t| t.name.clone())
            .collect()
    } else {
        // A bare plugin id denotes that plugin's tools; a tool of the same name is included too,
        // so a deny entry can never be read more narrowly than written.
        names
            .filter(|t| t.name == entry || t.plugin.as_deref() == Some(entry.as_str()))
            .map(|t| t.name.clone())
            .collect()
    };
    let kind = if tools.iter().any(|t| is_core_tool(t)) {
        EntryKind::Core
    } else if tools.is_empty() {
        EntryKind::Unknown
    } else {
        EntryKind::Plugin
    };
    (tools, kind)
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
