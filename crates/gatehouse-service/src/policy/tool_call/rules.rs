//! One agent's rules for the tool-call gate, compiled from the config: file rules (with the
//! gateway's own files protected), the URL rules of `web_fetch` and of the browser, and the
//! always-ask lists. A part that cannot be built keeps the sentence why, which the refusal of
//! every call needing it carries.

use std::path::{Path, PathBuf};

use gatehouse_config::{Config, UrlTool};
use gatehouse_policy::files::{FileRules, ProtectedPath};
use gatehouse_policy::tool_call::AskList;
use gatehouse_policy::urls::UrlRules;

/// The compiled rules of one agent.
#[derive(Debug)]
pub struct AgentRules {
    /// The file rules, or why there are none (no workspace, a workspace that does not exist).
    pub files: Result<FileRules, String>,
    /// `tools.web.fetch`.
    pub fetch: Result<UrlRules, String>,
    /// `browser.ssrfPolicy`.
    pub browser: Result<UrlRules, String>,
    /// `tools.alwaysAsk` and the agent's own list.
    pub always_ask: Vec<AskList>,
    /// The configured workspace, where `exec` runs when a call names no `cwd`.
    pub workspace: Option<PathBuf>,
}

impl AgentRules {
    /// Compiles `agent_id`'s rules; `home` expands `~/`, `protected` are the gateway's own
    /// files (config, data directory, tokens), never readable or writable by a tool.
    pub fn build(
        config: &Config,
        agent_id: &str,
        home: Option<&Path>,
        protected: &[ProtectedPath],
    ) -> Self {
        let files = config.file_rules(agent_id, home).and_then(|mut rules| {
            rules.protected.extend(protected.iter().cloned());
            FileRules::new(rules).map_err(|error| error.to_string())
        });
        let urls = |tool| {
            UrlRules::new(config.url_rules(agent_id, tool)).map_err(|error| error.to_string())
        };
        AgentRules {
            files,
            fetch: urls(UrlTool::WebFetch),
            browser: urls(UrlTool::Browser),
            always_ask: config.always_ask(agent_id),
            workspace: config.workspace(agent_id, home).map(|(path, _)| path),
        }
    }
}
