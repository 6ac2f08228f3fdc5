//! Allow-always grants: what an approval stores, and whether a later call is covered by it.
//!
//! A grant is scoped as tightly as the approved call allows: the tool and the exact canonical
//! paths it touched, or the tool and the hosts it fetched, or (for tools with neither) the tool
//! alone. It only ever turns an *ask* into an allow; a refusal stays a refusal.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::files::ResolvedFile;
use crate::urls::ApprovedUrl;

/// An allow-always grant: the service stores it per agent, lists and revokes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Grant {
    /// The canonical tool name (`write`, `web_fetch`, `mcp__github__create_issue`).
    pub tool: String,
    /// What of the tool's use it covers.
    pub scope: GrantScope,
}

/// What a grant covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GrantScope {
    /// Calls of the tool that touch no path and fetch no URL (MCP tools, a browser action that
    /// navigates nowhere); never a call that does.
    Tool,
    /// Calls whose every path lies at or under one of these canonical paths (component-wise:
    /// `/ws/src` covers `/ws/src/a.rs`, not `/ws/srcx`).
    Paths(BTreeSet<PathBuf>),
    /// Calls whose every URL's host is one of these normalized hosts (exact, no subdomains).
    Hosts(BTreeSet<String>),
}

impl Grant {
    /// The grant an allow-always answer to this call would store: its paths, else its hosts,
    /// else the tool.
    pub fn for_call(tool: &str, files: &[ResolvedFile], urls: &[ApprovedUrl]) -> Self {
        let scope = if !files.is_empty() {
            GrantScope::Paths(files.iter().map(|f| f.path.clone()).collect())
        } else if !urls.is_empty() {
            GrantScope::Hosts(urls.iter().map(|u| u.host.clone()).collect())
        } else {
            GrantScope::Tool
        };
        Grant {
            tool: tool.to_owned(),
            scope,
        }
    }

    /// Whether a call of `tool` that touches `files` and fetches `urls` is covered.
    pub fn covers(&self, tool: &str, files: &[ResolvedFile], urls: &[ApprovedUrl]) -> bool {
        if self.tool != tool {
            return false;
        }
        match &self.scope {
            GrantScope::Tool => files.is_empty() && urls.is_empty(),
            GrantScope::Paths(prefixes) => {
                !files.is_empty()
                    && urls.is_empty()
                    && files
                        .iter()
                        .all(|f| prefixes.iter().any(|p| f.path.starts_with(p)))
            }
            GrantScope::Hosts(hosts) => {
                !urls.is_empty() && files.is_empty() && urls.iter().all(|u| hosts.contains(&u.host))
            }
        }
    }
}
