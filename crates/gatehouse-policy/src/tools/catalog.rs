//! The tools that exist in this run: the built-in core tools plus whatever plugins registered,
//! and the named groups over them.

use super::inputs::PluginTool;
use super::names::{
    MCP_PREFIX, is_glob, mcp_server_id, mcp_tool_name, normalize_tool_name, parse_mcp_tool_name,
};
use super::warnings::Warnings;

/// Every core tool, in display order.
pub const CORE_TOOLS: [&str; 28] = [
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "web_search",
    "web_fetch",
    "memory_search",
    "memory_get",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "session_status",
    "browser",
    "canvas",
    "message",
    "cron",
    "gateway",
    "nodes",
    "agents_list",
    "image",
    "image_generate",
    "tts",
    "whatsapp_login",
];

/// Tools that act on the deployment itself; only owners see or call them.
pub const OWNER_ONLY_TOOLS: [&str; 4] = ["whatsapp_login", "cron", "gateway", "nodes"];

/// Core groups usable as `group:<name>`; `group:openclaw` and `group:plugins` are computed.
const CORE_GROUPS: [(&str, &[&str]); 11] = [
    ("fs", &["read", "write", "edit", "apply_patch"]),
    ("runtime", &["exec", "process"]),
    ("web", &["web_search", "web_fetch"]),
    ("memory", &["memory_search", "memory_get"]),
    (
        "sessions",
        &[
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "sessions_yield",
            "subagents",
            "session_status",
        ],
    ),
    ("ui", &["browser", "canvas"]),
    ("messaging", &["message"]),
    ("automation", &["cron", "gateway"]),
    ("nodes", &["nodes"]),
    ("agents", &["agents_list"]),
    ("media", &["image", "image_generate", "tts"]),
];

/// The registration of tool `tool` of MCP server `server`: named `mcp__<server>__<tool>`,
/// under the plugin id `mcp__<server>`.
pub fn mcp_tool(server: &str, tool: &str) -> PluginTool {
    PluginTool {
        plugin_id: mcp_server_id(server),
        name: mcp_tool_name(server, tool),
    }
}

/// Whether a plugin id is an MCP server's (`mcp__<server>`).
pub(crate) fn is_mcp_server_id(plugin: &str) -> bool {
    plugin.starts_with(MCP_PREFIX)
}

/// Why a registration's MCP name and plugin id disagree: an `mcp__` name must come from its
/// own server's id and an `mcp__` id may only register its own server's tools, so no plugin
/// can pose as an MCP server (or one server as another) and escape a rule written for it.
fn mcp_mismatch(plugin: &str, name: &str) -> Option<&'static str> {
    let server_of_name = parse_mcp_tool_name(name).map(|(server, _)| mcp_server_id(server));
    match (server_of_name, is_mcp_server_id(plugin)) {
        (Some(server), _) if server != plugin => {
            Some("an MCP tool name must come from its own server")
        }
        (None, true) => Some("an MCP server may only register mcp__<server>__<tool> names"),
        _ if name.starts_with(MCP_PREFIX) && parse_mcp_tool_name(name).is_none() => {
            Some("its name is a malformed mcp__<server>__<tool> name")
        }
        _ => None,
    }
}

/// Whether a canonical name is a core tool.
pub fn is_core_tool(name: &str) -> bool {
    CORE_TOOLS.contains(&name)
}

/// Whether a canonical name is an owner-only tool.
pub fn is_owner_only(name: &str) -> bool {
    OWNER_ONLY_TOOLS.contains(&name)
}

/// Members of a named group (`fs`, `openclaw`, …) other than `plugins`; `None` if unknown.
pub(crate) fn core_group(name: &str) -> Option<Vec<&'static str>> {
    if name == "openclaw" {
        let excluded = ["read", "write", "edit", "apply_patch", "exec", "process"];
        return Some(
            CORE_TOOLS
                .into_iter()
                .filter(|t| !excluded.contains(t))
                .collect(),
        );
    }
    CORE_GROUPS
        .iter()
        .find(|(group, _)| *group == name)
        .map(|(_, members)| members.to_vec())
}

/// One tool of the run's catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogTool {
    /// Canonical name.
    pub(crate) name: String,
    /// Lower-cased plugin id; `None` for core tools.
    pub(crate) plugin: Option<String>,
}

/// The core tools plus the plugin tools accepted for this run.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    tools: Vec<CatalogTool>,
}

impl Catalog {
    /// Builds the catalog, refusing plugin tools that would shadow or blur another tool.
    pub(crate) fn new(plugin_tools: &[PluginTool], warnings: &mut Warnings) -> Self {
        let mut tools: Vec<CatalogTool> = CORE_TOOLS
            .iter()
            .map(|name| CatalogTool {
                name: (*name).to_owned(),
                plugin: None,
            })
            .collect();
        for tool in plugin_tools {
            let plugin = tool.plugin_id.trim().to_lowercase();
            let name = normalize_tool_name(&tool.name);
            let problem = if plugin.is_empty() || plugin.starts_with("group:") || is_glob(&plugin) {
                Some("its plugin id is empty or reserved")
            } else if name.is_empty() || name.starts_with("group:") || is_glob(&name) {
                Some("its name is empty or reserved")
            } else if let Some(reason) = mcp_mismatch(&plugin, &name) {
                Some(reason)
            } else if is_core_tool(&name) {
                Some("it would shadow a core tool")
            } else if tools.iter().any(|t| t.name == name) {
                Some("another plugin already registered that name")
            } else {
                None
            };
            match problem {
                Some(reason) => warnings.push(format!(
                    "tools: ignoring plugin tool {:?} from plugin {:?}: {reason}",
                    tool.name, tool.plugin_id
                )),
                None => tools.push(CatalogTool {
                    name,
                    plugin: Some(plugin),
                }),
            }
        }
        Self { tools }
    }

    /// All tools in display order.
    pub(crate) fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(id: &str, name: &str) -> PluginTool {
        PluginTool {
            plugin_id: id.to_owned(),
            name: name.to_owned(),
        }
    }

    #[test]
    fn openclaw_group_is_every_core_tool_except_files_and_runtime() {
        let group = core_group("openclaw").unwrap();
        assert_eq!(group.len(), CORE_TOOLS.len() - 6);
        assert!(group.contains(&"whatsapp_login"));
        assert!(!group.contains(&"exec"));
        assert!(!group.contains(&"apply_patch"));
    }

    #[test]
    fn sessions_group_includes_yield_subagents_and_status() {
        let group = core_group("sessions").unwrap();
        for tool in ["sessions_yield", "subagents", "session_status"] {
            assert!(group.contains(&tool), "{tool}");
        }
    }

    #[test]
    fn unknown_group_is_none() {
        assert_eq!(core_group("plugins"), None);
        assert_eq!(core_group("nope"), None);
    }

    /// The plugin tools a catalog accepts from `registrations`, and how many it warned about.
    fn accepted(registrations: &[PluginTool]) -> (Vec<(String, String)>, usize) {
        let mut warnings = Warnings::default();
        let catalog = Catalog::new(registrations, &mut warnings);
        let plugins = catalog
            .tools()
            .iter()
            .filter_map(|t| t.plugin.clone().map(|p| (t.name.clone(), p)))
            .collect();
        (plugins, warnings.into_vec().len())
    }

    #[test]
    fn denies_plugin_tools_that_shadow_core_or_each_other() {
        assert_eq!(
            accepted(&[
                plugin("Lobster", "Lobster_Run"),
                plugin("evil", "Bash"),
                plugin("other", "lobster_run"),
                plugin("", "x"),
                plugin("globby", "a*"),
            ]),
            (vec![("lobster_run".into(), "lobster".into())], 4)
        );
    }

    #[test]
    fn denies_mcp_names_from_the_wrong_plugin_or_server() {
        assert_eq!(
            accepted(&[
                mcp_tool("GitHub", "create_issue"),
                plugin("lobster", "mcp__github__delete_repo"),
                plugin("mcp__github", "mcp__gitlab__x"),
                plugin("mcp__github", "plain_name"),
                plugin("mcp__x", "mcp__x"),
            ]),
            (
                vec![("mcp__github__create_issue".into(), "mcp__github".into())],
                4
            )
        );
    }
}
