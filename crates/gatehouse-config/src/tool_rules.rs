//! From the config model to the inputs of the tool-call gate (`gatehouse_policy::tool_call`):
//! each agent's file rules, URL rules and always-ask lists, and the tool policy of the
//! conversation a call comes from. Each keeps the key it came from, so a refusal names the
//! setting an operator would edit.

use std::path::{Path, PathBuf};

use gatehouse_policy::files::{FileRulesConfig, PathAccessConfig};
use gatehouse_policy::tool_call::AskList;
use gatehouse_policy::tools::ToolRules;
use gatehouse_policy::urls::{SsrfPolicyConfig, UrlRulesConfig};

use crate::model::{
    AgentConfig, Config, PathAccessSection, SsrfPolicySection, ToolsConfig, WebFetchConfig,
};

/// Which tool's URL rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlTool {
    /// `web_fetch` and the URL parameters of every tool but the browser: `tools.web.fetch`.
    WebFetch,
    /// Browser navigation: `browser.ssrfPolicy`.
    Browser,
}

impl Config {
    /// The agent's workspace as configured (`agents.list[i].workspace`, else
    /// `agents.defaults.workspace`), with `~/` expanded from `home`, and the key it came from.
    pub fn workspace(&self, agent_id: &str, home: Option<&Path>) -> Option<(PathBuf, String)> {
        let (text, key) = self.workspace_as_written(agent_id)?;
        let path = match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(text),
        };
        Some((path, key))
    }

    /// The agent's workspace as the config writes it (`~/work` unexpanded: the sandbox expands
    /// it from the gateway user's real home) and the key it came from.
    pub fn workspace_as_written(&self, agent_id: &str) -> Option<(&str, String)> {
        let own = self.agent_entry(agent_id).and_then(|(index, agent)| {
            let path = agent.workspace.as_deref()?;
            Some((path, format!("agents.list[{index}].workspace")))
        });
        own.or_else(|| {
            let path = self.agents.defaults.as_ref()?.workspace.as_deref()?;
            Some((path, "agents.defaults.workspace".to_owned()))
        })
    }

    /// The file rules of `agent_id`, before the service adds the gateway's own files: its
    /// workspace, `tools.fs`, `tools.exec.applyPatch.workspaceOnly`, `tools.read` and
    /// `tools.write`, each the agent's setting over the global one (deny lists add up: an agent
    /// cannot lift a global refusal). `Err` says why there are none: no workspace is set.
    pub fn file_rules(
        &self,
        agent_id: &str,
        home: Option<&Path>,
    ) -> Result<FileRulesConfig, String> {
        let Some((workspace, _)) = self.workspace(agent_id, home) else {
            return Err(format!(
                "agent {agent_id:?} has no workspace: set agents.defaults.workspace or the \
                 agent's agents.list[].workspace"
            ));
        };
        Ok(self.file_rules_in(agent_id, workspace, home))
    }

    /// [`Config::file_rules`] with the workspace given: the config's own check compiles every
    /// agent's globs against `/`, whether or not a workspace is set.
    pub(crate) fn file_rules_in(
        &self,
        agent_id: &str,
        workspace: PathBuf,
        home: Option<&Path>,
    ) -> FileRulesConfig {
        let global = &self.tools;
        let agent = self.agent_entry(agent_id);
        let local = agent.and_then(|(_, a)| a.tools.as_ref());
        let local_path = agent.map(|(index, _)| format!("agents.list[{index}].tools"));
        let pick = |field: fn(&ToolsConfig) -> Option<bool>| {
            local.and_then(field).or_else(|| field(global))
        };
        let mut rules = FileRulesConfig::new(workspace);
        rules.home = home.map(Path::to_path_buf);
        rules.workspace_only =
            pick(|t| t.fs.as_ref()?.workspace_only).unwrap_or(rules.workspace_only);
        rules.apply_patch_workspace_only =
            pick(|t| t.exec.as_ref()?.apply_patch.as_ref()?.workspace_only)
                .unwrap_or(rules.apply_patch_workspace_only);
        rules.deny_paths = [Some(global), local]
            .into_iter()
            .flatten()
            .flat_map(|t| t.fs.iter().flat_map(|fs| fs.deny_paths.iter().flatten()))
            .cloned()
            .collect();
        let section = |name: &str, field: fn(&ToolsConfig) -> Option<&PathAccessSection>| {
            access(
                name,
                field(global),
                local.and_then(field),
                local_path.as_deref(),
            )
        };
        rules.read = section("read", |t| t.read.as_ref());
        rules.write = section("write", |t| t.write.as_ref());
        rules
    }

    /// The URL rules of `tool` for `agent_id`: `tools.web.fetch` (the agent's section replacing
    /// the global one key by key) or `browser.ssrfPolicy`.
    pub fn url_rules(&self, agent_id: &str, tool: UrlTool) -> UrlRulesConfig {
        match tool {
            UrlTool::Browser => {
                let mut rules = UrlRulesConfig::new("browser");
                if let Some(ssrf) = self.browser.as_ref().and_then(|b| b.ssrf_policy.as_ref()) {
                    rules.ssrf_policy = ssrf_policy(Some(ssrf), None);
                }
                rules
            }
            UrlTool::WebFetch => {
                let fetch = |tools: &ToolsConfig| tools.web.as_ref()?.fetch.clone();
                let global = fetch(&self.tools);
                let agent = self.agent_entry(agent_id);
                let local = agent.and_then(|(_, a)| a.tools.as_ref()).and_then(fetch);
                let key = match (&local, agent) {
                    (Some(_), Some((index, _))) => format!("agents.list[{index}].tools.web.fetch"),
                    _ => "tools.web.fetch".to_owned(),
                };
                let layered = |field: fn(&WebFetchConfig) -> Option<Vec<String>>| {
                    local
                        .as_ref()
                        .and_then(field)
                        .or_else(|| global.as_ref().and_then(field))
                };
                let mut rules = UrlRulesConfig::new(key);
                rules.allowed_domains = layered(|f| f.allowed_domains.clone());
                rules.denied_domains = layered(|f| f.denied_domains.clone()).unwrap_or_default();
                rules.ssrf_policy = ssrf_policy(
                    local.as_ref().and_then(|f| f.ssrf_policy.as_ref()),
                    global.as_ref().and_then(|f| f.ssrf_policy.as_ref()),
                );
                rules
            }
        }
    }

    /// `tools.alwaysAsk` and the agent's own list; the two add up.
    pub fn always_ask(&self, agent_id: &str) -> Vec<AskList> {
        let mut lists = Vec::new();
        if let Some(entries) = &self.tools.always_ask {
            lists.push(AskList {
                key: "tools.alwaysAsk".to_owned(),
                entries: entries.clone(),
            });
        }
        if let Some((index, agent)) = self.agent_entry(agent_id)
            && let Some(entries) = agent.tools.as_ref().and_then(|t| t.always_ask.as_ref())
        {
            lists.push(AskList {
                key: format!("agents.list[{index}].tools.alwaysAsk"),
                entries: entries.clone(),
            });
        }
        lists
    }

    /// The tool policy of the conversation a call comes from (the pipeline's `group` step), if
    /// `channels.<channel>` configures one for `id` (or for `"*"`).
    pub fn conversation_rules(&self, channel: &str, id: &str) -> Option<ToolRules> {
        let found = self.channels.conversation_tools(channel, id)?;
        let path = found.path.trim_end_matches(".tools").to_owned();
        Some(ToolRules {
            path: format!("{path}.tools"),
            allow: found.tools.allow.clone(),
            also_allow: found.tools.also_allow.clone(),
            deny: found.tools.deny.clone(),
        })
    }

    fn agent_entry(&self, agent_id: &str) -> Option<(usize, &AgentConfig)> {
        self.agents
            .list
            .iter()
            .enumerate()
            .find(|(_, agent)| agent.id == agent_id)
    }
}

/// One `tools.read`/`tools.write` section: the agent's over the global one (`allow` and
/// `maxSizeBytes` replaced, `deny` added up), named by the agent's key when it has one.
fn access(
    name: &str,
    global: Option<&PathAccessSection>,
    local: Option<&PathAccessSection>,
    local_tools_path: Option<&str>,
) -> PathAccessConfig {
    let key = match (local, local_tools_path) {
        (Some(_), Some(path)) => format!("{path}.{name}"),
        _ => format!("tools.{name}"),
    };
    let mut config = PathAccessConfig::new(key);
    config.allow = local
        .and_then(|l| l.allow.clone())
        .or_else(|| global.and_then(|g| g.allow.clone()));
    config.deny = [global, local]
        .into_iter()
        .flatten()
        .flat_map(|section| section.deny.iter().flatten())
        .cloned()
        .collect();
    config.max_size_bytes = local
        .and_then(|l| l.max_size_bytes)
        .or_else(|| global.and_then(|g| g.max_size_bytes));
    config
}

/// OpenClaw's `ssrfPolicy`, the first section's keys over the second's; the legacy
/// `allowPrivateNetwork` counts when `dangerouslyAllowPrivateNetwork` is unset.
fn ssrf_policy(
    first: Option<&SsrfPolicySection>,
    second: Option<&SsrfPolicySection>,
) -> SsrfPolicyConfig {
    let flag = |field: fn(&SsrfPolicySection) -> Option<bool>| {
        first.and_then(field).or_else(|| second.and_then(field))
    };
    let list = |field: fn(&SsrfPolicySection) -> Option<Vec<String>>| {
        first.and_then(field).or_else(|| second.and_then(field))
    };
    SsrfPolicyConfig {
        dangerously_allow_private_network: flag(|s| {
            s.dangerously_allow_private_network
                .or(s.allow_private_network)
        })
        .unwrap_or(false),
        allowed_hostnames: list(|s| s.allowed_hostnames.clone()).unwrap_or_default(),
        hostname_allowlist: list(|s| s.hostname_allowlist.clone()),
        allow_rfc2544_benchmark_range: flag(|s| s.allow_rfc2544_benchmark_range).unwrap_or(false),
        allow_ipv6_unique_local_range: flag(|s| s.allow_ipv6_unique_local_range).unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn load(text: &str) -> Config {
        crate::load_str(text, Path::new("gatehouse.json5"))
            .unwrap()
            .config
    }

    #[test]
    fn layers_the_agents_file_settings_over_the_global_ones_and_adds_up_denials() {
        let config = load(
            "{ agents: { defaults: { workspace: '~/ws' },
                         list: [{ id: 'dev', workspace: '/srv/dev',
                                  tools: { fs: { workspaceOnly: true, denyPaths: ['b'] },
                                           write: { deny: ['y'], maxSizeBytes: 5 } } }] },
               tools: { fs: { denyPaths: ['a'] }, exec: { applyPatch: { workspaceOnly: false } },
                        read: { allow: ['src/**'] }, write: { allow: ['x'], deny: ['z'] } } }",
        );
        let home = Path::new("/home/op");
        let main = config.file_rules("main", Some(home)).unwrap();
        assert_eq!(main.workspace, Path::new("/home/op/ws"));
        assert!(!main.workspace_only);
        assert!(!main.apply_patch_workspace_only);
        assert_eq!(main.read.key, "tools.read");
        assert_eq!(main.read.allow, Some(vec!["src/**".to_owned()]));
        let dev = config.file_rules("dev", Some(home)).unwrap();
        assert_eq!(dev.workspace, Path::new("/srv/dev"));
        assert!(dev.workspace_only);
        assert_eq!(dev.deny_paths, ["a", "b"]);
        assert_eq!(dev.write.key, "agents.list[0].tools.write");
        assert_eq!(dev.write.allow, Some(vec!["x".to_owned()]));
        assert_eq!(dev.write.deny, ["z", "y"]);
        assert_eq!(dev.write.max_size_bytes, Some(5));
        let none = load("{}").file_rules("main", None).unwrap_err();
        assert!(none.contains("agents.defaults.workspace"), "{none}");
    }

    #[test]
    fn reads_url_rules_per_tool_and_agent_and_the_legacy_private_network_switch() {
        let config = load(
            "{ tools: { web: { fetch: { deniedDomains: ['*.evil.test'],
                                       ssrfPolicy: { allowPrivateNetwork: true } } } },
               browser: { ssrfPolicy: { allowedHostnames: ['localhost'] }, headless: true },
               agents: { list: [{ id: 'dev', tools: { web: { fetch: {
                   allowedDomains: ['docs.rs'], ssrfPolicy: { dangerouslyAllowPrivateNetwork: false } } } } }] } }",
        );
        let main = config.url_rules("main", UrlTool::WebFetch);
        assert_eq!(main.key, "tools.web.fetch");
        assert!(main.ssrf_policy.dangerously_allow_private_network);
        let dev = config.url_rules("dev", UrlTool::WebFetch);
        assert_eq!(dev.key, "agents.list[0].tools.web.fetch");
        assert_eq!(dev.allowed_domains, Some(vec!["docs.rs".to_owned()]));
        assert_eq!(dev.denied_domains, ["*.evil.test"]);
        assert!(!dev.ssrf_policy.dangerously_allow_private_network);
        let browser = config.url_rules("dev", UrlTool::Browser);
        assert_eq!(browser.ssrf_policy.allowed_hostnames, ["localhost"]);
    }

    #[test]
    fn finds_a_conversations_tool_policy_or_its_platforms_default() {
        let config = load(
            "{ channels: { telegram: { groups: { '-100': { tools: { deny: ['exec'] },
                                                          requireMention: true },
                                                 '*': { tools: { deny: ['write'] } } } },
                           discord: { guilds: { '42': { tools: { allow: ['read'] },
                                                        channels: { general: { requireMention: false } } } } } },
               tools: { alwaysAsk: ['browser'] },
               agents: { list: [{ id: 'dev', tools: { alwaysAsk: ['mcp__github'] } }] } }",
        );
        let group = config.conversation_rules("telegram", "-100").unwrap();
        assert_eq!(group.path, "channels.telegram.groups.-100.tools");
        assert_eq!(group.deny, Some(vec!["exec".to_owned()]));
        let fallback = config.conversation_rules("telegram", "-7").unwrap();
        assert_eq!(fallback.path, "channels.telegram.groups.*.tools");
        let guild = config.conversation_rules("discord", "42").unwrap();
        assert_eq!(guild.allow, Some(vec!["read".to_owned()]));
        assert!(config.conversation_rules("discord", "43").is_none());
        assert!(config.conversation_rules("slack", "C1").is_none());
        let lists = config.always_ask("dev");
        assert_eq!(
            lists.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(),
            ["tools.alwaysAsk", "agents.list[0].tools.alwaysAsk"]
        );
    }
}
