//! Tool-name normalization and glob matching, so `Bash`, `bash` and `exec` are one tool.

/// Aliases accepted in any list or call, mapped to the canonical name.
const ALIASES: [(&str, &str); 2] = [("bash", "exec"), ("apply-patch", "apply_patch")];

/// The canonical form of a tool name or list entry: trimmed, lower-case, aliases resolved.
pub fn normalize_tool_name(name: &str) -> String {
    let lowered = name.trim().to_lowercase();
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == lowered)
        .map_or(lowered, |(_, canonical)| (*canonical).to_owned())
}

/// The prefix of MCP tool names, as Claude Code and other MCP clients spell them:
/// `mcp__<server>__<tool>`.
pub const MCP_PREFIX: &str = "mcp__";

/// The canonical name of tool `tool` of MCP server `server`.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    normalize_tool_name(&format!("{MCP_PREFIX}{server}__{tool}"))
}

/// Splits a normalized `mcp__<server>__<tool>` name into server and tool; the server ends at
/// the first `__`, so it never contains one. `None` unless both parts are non-empty.
pub fn parse_mcp_tool_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(MCP_PREFIX)?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// The plugin id MCP tools of `server` are registered under: `mcp__<server>`, so the entry
/// `mcp__github` in any list denotes every tool of that server.
pub fn mcp_server_id(server: &str) -> String {
    normalize_tool_name(&format!("{MCP_PREFIX}{server}"))
}

/// Whether an entry is a glob (`*` any run of characters, `?` exactly one).
pub(crate) fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?'])
}

/// Matches `name` against a glob; both are expected normalized.
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative matcher with one backtrack point: linear in practice and no recursion on
    // operator-controlled input.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(c) if *c == '?' || *c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_case_whitespace_and_aliases() {
        assert_eq!(normalize_tool_name("  Bash "), "exec");
        assert_eq!(normalize_tool_name("APPLY-PATCH"), "apply_patch");
        assert_eq!(normalize_tool_name("Web_Search"), "web_search");
        assert_eq!(normalize_tool_name("exec"), "exec");
    }

    #[test]
    fn matches_star_and_question_globs() {
        assert!(glob_matches("*", "exec"));
        assert!(glob_matches("sessions_*", "sessions_spawn"));
        assert!(glob_matches("*_search", "memory_search"));
        assert!(glob_matches("memory_?et", "memory_get"));
        assert!(glob_matches("s*s*n", "sessions_spawn"));
        assert!(!glob_matches("sessions_*", "session_status"));
        assert!(!glob_matches("memory_?", "memory_get"));
        assert!(!glob_matches("exec?", "exec"));
    }

    #[test]
    fn parses_mcp_names_at_the_first_separator() {
        assert_eq!(
            parse_mcp_tool_name("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(parse_mcp_tool_name("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(parse_mcp_tool_name("mcp__github"), None);
        assert_eq!(parse_mcp_tool_name("mcp____x"), None);
        assert_eq!(parse_mcp_tool_name("mcp__x__"), None);
        assert_eq!(parse_mcp_tool_name("github__x"), None);
        assert_eq!(
            mcp_tool_name("GitHub", "Create_Issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(mcp_server_id("GitHub"), "mcp__github");
    }

    #[test]
    fn detects_globs() {
        assert!(is_glob("web_*"));
        assert!(is_glob("imag?"));
        assert!(!is_glob("group:fs"));
    }
}
