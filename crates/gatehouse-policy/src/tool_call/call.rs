//! What a tool call asks for: the tool's name and its parameters, typed by the service from
//! the JSON the agent host sent.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::exec::ExecRequest;
use crate::tools::{mcp_tool_name, parse_mcp_tool_name};

/// One tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's name as the agent host sent it (`read`, `Bash`, `mcp__github__create_issue`).
    pub tool: String,
    /// Its parameters.
    pub params: ToolParams,
    /// Addresses the caller resolved for host names of this call's URLs (all A and AAAA
    /// records of each), filled in answer to [`super::ToolCallOutcome::NeedsResolution`].
    pub resolved: BTreeMap<String, Vec<IpAddr>>,
}

impl ToolCall {
    /// A call with nothing resolved yet.
    pub fn new(tool: impl Into<String>, params: ToolParams) -> Self {
        ToolCall {
            tool: tool.into(),
            params,
            resolved: BTreeMap::new(),
        }
    }

    /// The same call with `host` resolved to `addresses`.
    pub fn with_resolved(mut self, host: impl Into<String>, addresses: Vec<IpAddr>) -> Self {
        self.resolved.insert(host.into(), addresses);
        self
    }
}

/// The parameters the policy judges, per tool. The service builds them from the reference's
/// parameter names: `path` (and the content's length) for `read`, `write` and `edit`, `input`
/// for `apply_patch`, `url` for `web_fetch` and the browser's navigation, `command` for `exec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolParams {
    /// `read {path}`.
    Read {
        /// `path`.
        path: String,
    },
    /// `write {path, content}`.
    Write {
        /// `path`.
        path: String,
        /// The content's length in bytes.
        len: u64,
    },
    /// `edit {path, …}`.
    Edit {
        /// `path`.
        path: String,
    },
    /// `apply_patch {input}`.
    ApplyPatch {
        /// The patch text.
        text: String,
    },
    /// `web_fetch {url}`.
    WebFetch {
        /// `url`.
        url: String,
    },
    /// `browser` navigating (`open`, `navigate`) to `url`.
    Browser {
        /// The target URL.
        url: String,
    },
    /// A tool of an MCP server.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name on that server.
        tool: String,
        /// Its arguments that are URLs, each checked like `web_fetch`'s: a server that fetches
        /// what it is given is a way around the URL rules otherwise.
        urls: Vec<String>,
    },
    /// `exec`, judged by the exec policy.
    Exec(Box<ExecRequest>),
    /// Any other tool (a browser action that navigates nowhere, a plugin tool); `urls` are
    /// the parameters that are URLs, each checked like `web_fetch`'s.
    Other {
        /// URL parameters.
        urls: Vec<String>,
    },
}

/// The parameter kinds a canonical tool name must come with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    Read,
    Write,
    Edit,
    ApplyPatch,
    WebFetch,
    Browser,
    Mcp,
    Exec,
    Other,
}

impl Expected {
    /// What parameters `tool` (canonical) takes.
    pub(crate) fn of(tool: &str) -> Self {
        match tool {
            "read" => Expected::Read,
            "write" => Expected::Write,
            "edit" => Expected::Edit,
            "apply_patch" => Expected::ApplyPatch,
            "web_fetch" => Expected::WebFetch,
            "browser" => Expected::Browser,
            "exec" => Expected::Exec,
            _ if parse_mcp_tool_name(tool).is_some() => Expected::Mcp,
            _ => Expected::Other,
        }
    }

    /// Whether `params` are what the tool takes; the browser also takes `Other` for actions
    /// that navigate nowhere. A file, URL or exec tool with untyped parameters would skip its
    /// checks, so it is refused.
    pub(crate) fn accepts(self, tool: &str, params: &ToolParams) -> bool {
        match (self, params) {
            (Expected::Read, ToolParams::Read { .. })
            | (Expected::Write, ToolParams::Write { .. })
            | (Expected::Edit, ToolParams::Edit { .. })
            | (Expected::ApplyPatch, ToolParams::ApplyPatch { .. })
            | (Expected::WebFetch, ToolParams::WebFetch { .. })
            | (Expected::Browser, ToolParams::Browser { .. } | ToolParams::Other { .. })
            | (Expected::Exec, ToolParams::Exec(_))
            | (Expected::Other, ToolParams::Other { .. }) => true,
            (
                Expected::Mcp,
                ToolParams::Mcp {
                    server, tool: name, ..
                },
            ) => mcp_tool_name(server, name) == tool,
            _ => false,
        }
    }
}
