//! The one operation every step performs: remove tools, remembering which config key did it.

use std::collections::BTreeSet;

use super::catalog::Catalog;
use super::inputs::ToolRules;
use super::selector::resolve_list;
use super::warnings::Warnings;

/// One removal rule of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Filter {
    /// Removes the listed tools.
    Deny {
        tools: BTreeSet<String>,
        config_path: String,
    },
    /// Removes every tool not listed.
    Keep {
        tools: BTreeSet<String>,
        config_path: String,
    },
}

impl Filter {
    /// The config path to report if this filter removes `name`, or `None` if it keeps it.
    pub(crate) fn removes(&self, name: &str) -> Option<&str> {
        match self {
            Filter::Deny { tools, config_path } => tools.contains(name).then_some(config_path),
            Filter::Keep { tools, config_path } => (!tools.contains(name)).then_some(config_path),
        }
        .map(String::as_str)
    }
}

/// Whether a plugin-only allow list is ignored (with a warning) instead of applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PluginOnlyAllow {
    /// Apply it: everything but the named plugin tools is removed.
    Apply,
    /// Ignore it so core tools stay available; operators should use `alsoAllow` instead.
    Strip,
}

/// A keep-filter for an allow list; `exec` in it implies `apply_patch`.
pub(crate) fn keep(mut tools: BTreeSet<String>, config_path: String) -> Filter {
    if tools.contains("exec") {
        tools.insert("apply_patch".to_owned());
    }
    Filter::Keep { tools, config_path }
}

/// The filters of one allow/alsoAllow/deny triple: deny first (it wins), then the allow list
/// widened by `alsoAllow`. An absent or empty allow list filters nothing, even with `alsoAllow`.
pub(crate) fn rules_filters(
    rules: &ToolRules,
    plugin_only: PluginOnlyAllow,
    catalog: &Catalog,
    warnings: &mut Warnings,
) -> Vec<Filter> {
    let mut filters = Vec::new();
    if let Some(deny) = &rules.deny {
        let path = format!("{}.deny", rules.path);
        let resolved = resolve_list(deny, &path, catalog, warnings);
        if !resolved.is_empty {
            filters.push(Filter::Deny {
                tools: resolved.tools,
                config_path: path,
            });
        }
    }
    // Resolved even when it has no effect here, so its typos are reported.
    let also_allow = resolve_list(
        rules.also_allow.iter().flatten(),
        &format!("{}.alsoAllow", rules.path),
        catalog,
        warnings,
    );
    let path = format!("{}.allow", rules.path);
    let mut resolved = resolve_list(rules.allow.iter().flatten(), &path, catalog, warnings);
    if resolved.is_empty {
        return filters;
    }
    let plugin_only_entries =
        resolved.plugin_only && (also_allow.plugin_only || also_allow.is_empty);
    if plugin_only_entries && plugin_only == PluginOnlyAllow::Strip {
        warnings.push(format!(
            "tools: {path} names only plugin tools; ignoring it so core tools remain available \
             (use alsoAllow to add plugin tools)"
        ));
        return filters;
    }
    resolved.tools.extend(also_allow.tools);
    filters.push(keep(resolved.tools, path));
    filters
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::inputs::PluginTool;

    fn catalog() -> Catalog {
        let plugins = [PluginTool {
            plugin_id: "lobster".into(),
            name: "lobster_run".into(),
        }];
        Catalog::new(&plugins, &mut Warnings::default())
    }

    fn strings(items: &[&str]) -> Option<Vec<String>> {
        Some(items.iter().map(|s| (*s).to_owned()).collect())
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn rules(
        allow: Option<Vec<String>>,
        also: Option<Vec<String>>,
        deny: Option<Vec<String>>,
    ) -> ToolRules {
        ToolRules {
            path: "tools".into(),
            allow,
            also_allow: also,
            deny,
        }
    }

    fn filters(r: &ToolRules, mode: PluginOnlyAllow) -> (Vec<Filter>, Vec<String>) {
        let mut w = Warnings::default();
        let f = rules_filters(r, mode, &catalog(), &mut w);
        (f, w.into_vec())
    }

    #[test]
    fn absent_or_empty_allow_filters_nothing() {
        assert_eq!(
            filters(&rules(None, None, None), PluginOnlyAllow::Apply).0,
            vec![]
        );
        assert_eq!(
            filters(&rules(strings(&[]), None, None), PluginOnlyAllow::Apply).0,
            vec![]
        );
    }

    #[test]
    fn also_allow_without_allow_filters_nothing() {
        let r = rules(None, strings(&["browser"]), None);
        assert_eq!(filters(&r, PluginOnlyAllow::Apply).0, vec![]);
    }

    #[test]
    fn also_allow_widens_allow() {
        let r = rules(strings(&["read"]), strings(&["browser"]), None);
        assert_eq!(
            filters(&r, PluginOnlyAllow::Apply).0,
            vec![keep(set(&["read", "browser"]), "tools.allow".into())]
        );
    }

    #[test]
    fn deny_comes_before_allow() {
        let r = rules(strings(&["group:runtime"]), None, strings(&["process"]));
        assert_eq!(
            filters(&r, PluginOnlyAllow::Apply).0,
            vec![
                Filter::Deny {
                    tools: set(&["process"]),
                    config_path: "tools.deny".into()
                },
                Filter::Keep {
                    tools: set(&["exec", "process", "apply_patch"]),
                    config_path: "tools.allow".into()
                },
            ]
        );
    }

    #[test]
    fn exec_in_allow_implies_apply_patch() {
        let f = keep(set(&["exec"]), "p".into());
        assert_eq!(f.removes("apply_patch"), None);
        assert_eq!(f.removes("read"), Some("p"));
    }

    #[test]
    fn strips_plugin_only_allow_with_a_warning_when_asked() {
        let r = rules(strings(&["lobster"]), None, None);
        let (f, w) = filters(&r, PluginOnlyAllow::Strip);
        assert_eq!(f, vec![]);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("tools.allow names only plugin tools"),
            "{w:?}"
        );
    }

    #[test]
    fn applies_plugin_only_allow_when_not_stripping() {
        let r = rules(strings(&["lobster"]), None, None);
        let (f, w) = filters(&r, PluginOnlyAllow::Apply);
        assert_eq!(f, vec![keep(set(&["lobster_run"]), "tools.allow".into())]);
        assert_eq!(w, Vec::<String>::new());
    }

    #[test]
    fn warns_about_also_allow_typos_even_without_allow() {
        let r = rules(None, strings(&["brwoser"]), None);
        let (f, w) = filters(&r, PluginOnlyAllow::Apply);
        assert_eq!(f, vec![]);
        assert_eq!(
            w,
            vec!["tools: tools.alsoAllow entry \"brwoser\" matches no known tool, group or plugin"]
        );
    }

    #[test]
    fn an_allow_list_of_unknown_names_keeps_nothing() {
        let r = rules(strings(&["tpyo"]), None, None);
        let (f, w) = filters(&r, PluginOnlyAllow::Strip);
        assert_eq!(f, vec![keep(set(&[]), "tools.allow".into())]);
        assert_eq!(w.len(), 1);
    }
}
