//! A tool call's JSON parameters, in the reference's names, as the policy's typed
//! [`ToolParams`], and the few of them approvers are shown.
//!
//! Fail closed: a file, URL or exec tool with a parameter it does not know, a missing one or
//! one of the wrong type is refused with a sentence naming it. A parameter the gate does not
//! judge could be one the tool host acts on (a second path, a `security` override), so it is
//! never ignored. Tools without typed parameters (MCP and plugin tools, browser actions that
//! navigate nowhere) may send anything; every argument that is a URL is checked as one.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gatehouse_policy::tool_call::ToolParams;
use gatehouse_policy::tools::parse_mcp_tool_name;
use serde_json::{Map, Value};

/// How deep into nested arguments URLs are looked for, and how many strings at most: an
/// argument nested deeper, or past the count, refuses the call rather than go unchecked.
const MAX_DEPTH: usize = 32;
const MAX_STRINGS: usize = 10_000;

/// Longest parameter value shown to approvers; the Control UI and the audit log have the call.
const MAX_SHOWN_CHARS: usize = 2_000;

/// Browser actions that load a page.
const NAVIGATING_ACTIONS: [&str; 2] = ["open", "navigate"];

/// Exec parameters the gate judges or that cannot widen what it judged. `security`, `ask`,
/// `elevated`, `host` and `node` are refused: honoured by the host, they would run the
/// command under other rules than the ones checked.
const EXEC_PARAMS: [&str; 8] = [
    "command",
    "cwd",
    "workdir",
    "env",
    "timeout",
    "yieldMs",
    "background",
    "pty",
];

/// A tool call's parameters as the gate judges them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Every tool but `exec`.
    Params(ToolParams),
    /// `exec`: judged by the exec policy, which needs the agent's settings first.
    Exec(ExecParams),
}

/// `exec {command, cwd | workdir, env}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecParams {
    /// The shell string.
    pub command: String,
    /// Its working directory, when sent; the agent's workspace otherwise.
    pub cwd: Option<PathBuf>,
    /// Environment overrides.
    pub env: BTreeMap<String, String>,
}

/// Reads `params` for `tool` (canonical). `Err` is the sentence the refusal carries.
pub fn parse_params(tool: &str, params: &Value) -> Result<Parsed, String> {
    let empty = Map::new();
    let fields = match params {
        Value::Object(fields) => fields,
        Value::Null => &empty,
        other => return Err(format!("`params` must be an object, not {}", kind(other))),
    };
    let args = Args { tool, fields };
    let typed = match tool {
        "read" => {
            args.only(&["path", "offset", "limit"])?;
            ToolParams::Read {
                path: args.string("path")?,
            }
        }
        "write" => {
            args.only(&["path", "content"])?;
            let content = args.string("content")?;
            ToolParams::Write {
                path: args.string("path")?,
                len: u64::try_from(content.len()).unwrap_or(u64::MAX),
            }
        }
        "edit" => {
            args.only(&["path", "edits", "oldText", "newText"])?;
            ToolParams::Edit {
                path: args.string("path")?,
            }
        }
        "apply_patch" => {
            args.only(&["input", "patch"])?;
            let text = match (fields.get("input"), fields.get("patch")) {
                (Some(_), Some(_)) => {
                    return Err("apply_patch takes `input` or `patch`, not both".to_owned());
                }
                (Some(_), None) => args.string("input")?,
                (None, _) => args.string("patch")?,
            };
            ToolParams::ApplyPatch { text }
        }
        "web_fetch" => {
            args.only(&["url", "extractMode", "maxChars"])?;
            ToolParams::WebFetch {
                url: args.string("url")?,
            }
        }
        "browser" => browser(&args)?,
        "exec" => return exec(&args).map(Parsed::Exec),
        _ => {
            let urls = urls_in(params)?;
            match parse_mcp_tool_name(tool) {
                Some((server, name)) => ToolParams::Mcp {
                    server: server.to_owned(),
                    tool: name.to_owned(),
                    urls,
                },
                None => ToolParams::Other { urls },
            }
        }
    };
    Ok(Parsed::Params(typed))
}

/// The browser: `open` and `navigate` load `targetUrl` (or `url`); any other action's URL
/// arguments are checked like `web_fetch`'s.
fn browser(args: &Args<'_>) -> Result<ToolParams, String> {
    let action = args.optional_string("action")?;
    let navigates = action
        .as_deref()
        .is_some_and(|a| NAVIGATING_ACTIONS.contains(&a.trim().to_ascii_lowercase().as_str()));
    if !navigates {
        return Ok(ToolParams::Other {
            urls: urls_in(&Value::Object(args.fields.clone()))?,
        });
    }
    let url = match (
        args.optional_string("targetUrl")?,
        args.optional_string("url")?,
    ) {
        (Some(a), Some(b)) if a != b => {
            return Err("browser got both `targetUrl` and `url`, and they differ".to_owned());
        }
        (Some(url), _) | (None, Some(url)) => url,
        (None, None) => return Err("browser navigation needs `targetUrl`".to_owned()),
    };
    // Anything else the action carries that is a URL is checked too.
    let mut rest = args.fields.clone();
    rest.remove("targetUrl");
    rest.remove("url");
    if !urls_in(&Value::Object(rest))?.is_empty() {
        return Err("browser navigation carries a URL besides `targetUrl`".to_owned());
    }
    Ok(ToolParams::Browser { url })
}

fn exec(args: &Args<'_>) -> Result<ExecParams, String> {
    args.only(&EXEC_PARAMS)?;
    let command = args.string("command")?;
    if command.trim().is_empty() {
        return Err("exec `command` is empty".to_owned());
    }
    let cwd = match (
        args.optional_string("cwd")?,
        args.optional_string("workdir")?,
    ) {
        (Some(a), Some(b)) if a != b => {
            return Err("exec got both `cwd` and `workdir`, and they differ".to_owned());
        }
        (Some(dir), _) | (None, Some(dir)) => Some(PathBuf::from(dir)),
        (None, None) => None,
    };
    let env = match args.fields.get("env") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(vars)) => vars
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), text.clone())),
                other => Err(format!(
                    "exec `env.{key}` must be a string, not {}",
                    kind(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("exec `env` must be an object, not {}", kind(other))),
    };
    Ok(ExecParams { command, cwd, env })
}

/// The parameters of one call, named for the messages.
struct Args<'a> {
    tool: &'a str,
    fields: &'a Map<String, Value>,
}

impl Args<'_> {
    /// Refuses a parameter outside `known`, listing the known ones.
    fn only(&self, known: &[&str]) -> Result<(), String> {
        match self
            .fields
            .keys()
            .find(|key| !known.contains(&key.as_str()))
        {
            None => Ok(()),
            Some(key) => Err(format!(
                "{} does not take parameter `{key}` (it takes {})",
                self.tool,
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    fn string(&self, name: &str) -> Result<String, String> {
        self.optional_string(name)?
            .ok_or_else(|| format!("{} needs parameter `{name}`", self.tool))
    }

    fn optional_string(&self, name: &str) -> Result<Option<String>, String> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!(
                "{} parameter `{name}` must be a string, not {}",
                self.tool,
                kind(other)
            )),
        }
    }
}

/// Every argument that is a URL: a string of the form `scheme://…` or `file:…`, and any string
/// under a key naming one (`url`, `uri`, `href`, `…Url`, `…_url`).
pub fn urls_in(value: &Value) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let mut strings = 0;
    walk(value, false, 0, &mut strings, &mut found)?;
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(
    value: &Value,
    url_key: bool,
    depth: usize,
    strings: &mut usize,
    found: &mut Vec<String>,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the arguments nest deeper than {MAX_DEPTH} levels, past what is checked for URLs"
        ));
    }
    match value {
        Value::String(text) => {
            *strings += 1;
            if *strings > MAX_STRINGS {
                return Err(format!(
                    "the arguments hold more than {MAX_STRINGS} strings, past what is checked \
                     for URLs"
                ));
            }
            if url_key || looks_like_url(text) {
                found.push(text.trim().to_owned());
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, url_key, depth + 1, strings, found)?;
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                walk(item, names_a_url(key), depth + 1, strings, found)?;
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
    Ok(())
}

fn names_a_url(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    matches!(lower.as_str(), "url" | "uri" | "href" | "targeturl")
        || lower.ends_with("_url")
        || lower.ends_with("_uri")
        || key.ends_with("Url")
        || key.ends_with("Uri")
}

/// `scheme://…` with no space in it, or `file:`: text that a fetcher would follow.
fn looks_like_url(text: &str) -> bool {
    let text = text.trim();
    if text.chars().any(char::is_whitespace) {
        return false;
    }
    if text
        .get(..5)
        .is_some_and(|head| head.eq_ignore_ascii_case("file:"))
    {
        return true;
    }
    let Some((scheme, _)) = text.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What approvers read about a call: its salient parameters in order, each `(name, value)`,
/// values cut to 2,000 characters (the surfaces make them visible before showing them).
pub fn salient(tool: &str, params: &Value) -> Vec<(String, String)> {
    let field = |name: &str| -> Option<String> {
        match params.get(name)? {
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    let mut shown: Vec<(String, String)> = Vec::new();
    let mut push = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            shown.push((name.to_owned(), value));
        }
    };
    match tool {
        "read" | "edit" => push("path", field("path")),
        "write" => {
            push("path", field("path"));
            push(
                "content",
                params
                    .get("content")
                    .and_then(Value::as_str)
                    .map(|c| format!("{} bytes", c.len())),
            );
        }
        "apply_patch" => push("patch", field("input").or_else(|| field("patch"))),
        "web_fetch" => push("url", field("url")),
        "exec" => {
            push("command", field("command"));
            push("cwd", field("cwd").or_else(|| field("workdir")));
        }
        "browser" => {
            push("action", field("action"));
            push("url", field("targetUrl").or_else(|| field("url")));
        }
        _ => {
            if params.as_object().is_some_and(|fields| !fields.is_empty()) {
                push("arguments", Some(params.to_string()));
            }
        }
    }
    shown
        .into_iter()
        .map(|(name, value)| (name, cut(&value)))
        .collect()
}

/// One line naming the call, for surfaces that show a single text (`command` of the stored
/// approval): `write /ws/notes.md`, `web_fetch https://…`, `mcp__github__create_issue {…}`.
pub fn summary(tool: &str, shown: &[(String, String)]) -> String {
    let first = shown
        .iter()
        .find(|(name, _)| name != "content" && name != "cwd")
        .map(|(_, value)| value.as_str());
    match first {
        Some(value) => format!("{tool} {}", cut(value)),
        None => tool.to_owned(),
    }
}

fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_SHOWN_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_SHOWN_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refusal(tool: &str, params: Value) -> String {
        parse_params(tool, &params).unwrap_err()
    }

    #[test]
    fn reads_each_file_and_url_tool_in_the_references_names() {
        let read = parse_params("read", &json!({"path": "a.md", "offset": 3})).unwrap();
        assert_eq!(
            read,
            Parsed::Params(ToolParams::Read {
                path: "a.md".into()
            })
        );
        let write = parse_params("write", &json!({"path": "a", "content": "héllo"})).unwrap();
        assert_eq!(
            write,
            Parsed::Params(ToolParams::Write {
                path: "a".into(),
                len: 6
            })
        );
        let patch = parse_params("apply_patch", &json!({"patch": "*** Begin Patch"})).unwrap();
        assert_eq!(
            patch,
            Parsed::Params(ToolParams::ApplyPatch {
                text: "*** Begin Patch".into()
            })
        );
        let nav = parse_params(
            "browser",
            &json!({"action": "open", "targetUrl": "http://x/"}),
        );
        assert_eq!(
            nav.unwrap(),
            Parsed::Params(ToolParams::Browser {
                url: "http://x/".into()
            })
        );
        let exec = parse_params("exec", &json!({"command": "ls", "workdir": "/ws"})).unwrap();
        assert_eq!(
            exec,
            Parsed::Exec(ExecParams {
                command: "ls".into(),
                cwd: Some("/ws".into()),
                env: BTreeMap::new()
            })
        );
    }

    #[test]
    fn refuses_unknown_missing_and_mistyped_parameters_naming_them() {
        assert_eq!(
            refusal("read", json!({"path": "a", "file_path": "/etc/shadow"})),
            "read does not take parameter `file_path` (it takes `path`, `offset`, `limit`)"
        );
        assert_eq!(
            refusal("write", json!({"path": "a"})),
            "write needs parameter `content`"
        );
        assert_eq!(
            refusal("web_fetch", json!({"url": 5})),
            "web_fetch parameter `url` must be a string, not a number"
        );
        assert_eq!(
            refusal("read", json!([1])),
            "`params` must be an object, not an array"
        );
        assert!(refusal("exec", json!({"command": "ls", "security": "full"})).contains("security"));
        assert!(refusal("apply_patch", json!({"input": "a", "patch": "b"})).contains("not both"));
        assert!(
            refusal(
                "exec",
                json!({"command": "ls", "cwd": "/a", "workdir": "/b"})
            )
            .contains("differ")
        );
        assert!(refusal("browser", json!({"action": "navigate"})).contains("targetUrl"));
        assert!(
            refusal(
                "browser",
                json!({"action": "open", "targetUrl": "https://a/", "url": "http://169.254.169.254/"})
            )
            .contains("differ")
        );
    }

    #[test]
    fn finds_every_url_argument_of_an_untyped_tool_however_deep() {
        let args = json!({
            "title": "see https://example.com/a for details",
            "link": "http://10.0.0.1/admin",
            "nested": [{"targetUrl": "metadata.google.internal/x"}, {"file": "file:///etc/passwd"}],
            "image_url": "data:image/png;base64,AAAA",
            "count": 3
        });
        let parsed = parse_params("mcp__github__create_issue", &args).unwrap();
        let Parsed::Params(ToolParams::Mcp { server, tool, urls }) = parsed else {
            panic!("an MCP call");
        };
        assert_eq!((server.as_str(), tool.as_str()), ("github", "create_issue"));
        assert_eq!(
            urls,
            [
                "data:image/png;base64,AAAA",
                "file:///etc/passwd",
                "http://10.0.0.1/admin",
                "metadata.google.internal/x"
            ]
        );
        let mut deep = json!("http://x/");
        for _ in 0..40 {
            deep = json!([deep]);
        }
        assert!(urls_in(&deep).is_err());
    }

    #[test]
    fn shows_approvers_the_salient_parameters_and_one_line() {
        let shown = salient("write", &json!({"path": "/ws/a.md", "content": "abc"}));
        assert_eq!(
            shown,
            [
                ("path".to_owned(), "/ws/a.md".to_owned()),
                ("content".to_owned(), "3 bytes".to_owned())
            ]
        );
        assert_eq!(summary("write", &shown), "write /ws/a.md");
        let mcp = salient("mcp__github__create_issue", &json!({"title": "x"}));
        assert_eq!(
            summary("mcp__github__create_issue", &mcp),
            r#"mcp__github__create_issue {"title":"x"}"#
        );
        assert_eq!(
            summary("session_status", &salient("session_status", &json!({}))),
            "session_status"
        );
    }
}
