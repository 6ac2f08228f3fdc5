//! The session key a client's commands are asked under. Approvers see it (the Control UI's
//! Session field, `exec.approval.get`, the audit log), so by default it names the MCP client
//! as it introduced itself in `initialize`; the random part keeps two servers (two
//! conversations) apart and is never reused, so a session key's stored `/elevated` level or
//! chat binding cannot pass to a later process the way a recycled pid could.

use std::fmt::Write as _;

use rand::Rng as _;
use rmcp::model::Implementation;

/// Whether `c` may appear in a key as it is: what session filters and people can read without
/// escaping; anything else becomes `-`.
fn kept_as_is(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// The longest client name and version kept in a key.
const MAX_NAME_CHARS: usize = 48;
const MAX_VERSION_CHARS: usize = 24;

/// One server process's random part of the default session key (48 bits, as hex).
#[derive(Debug, Clone)]
pub(super) struct SessionSuffix(String);

impl SessionSuffix {
    pub(super) fn new() -> Self {
        let bytes: [u8; 6] = rand::rng().random();
        let mut hex = String::with_capacity(12);
        for byte in bytes {
            let _ = write!(hex, "{byte:02x}");
        }
        SessionSuffix(hex)
    }
}

/// `mcp:<name>@<version>:<suffix>` for the client that sent `client` in `initialize`
/// (`mcp:unknown-client:<suffix>` before it has, which a conforming client never lets happen).
pub(super) fn default_session_key(
    client: Option<&Implementation>,
    suffix: &SessionSuffix,
) -> String {
    match client {
        Some(client) => format!(
            "mcp:{}@{}:{}",
            readable(&client.name, MAX_NAME_CHARS, "client"),
            readable(&client.version, MAX_VERSION_CHARS, "unknown"),
            suffix.0
        ),
        None => format!("mcp:unknown-client:{}", suffix.0),
    }
}

/// `text` with characters not [`kept_as_is`] as `-`, cut to `max` characters, or `empty`
/// when nothing readable is left.
fn readable(text: &str, max: usize, empty: &str) -> String {
    let kept: String = text
        .trim()
        .chars()
        .take(max)
        .map(|c| if kept_as_is(c) { c } else { '-' })
        .collect();
    if kept.chars().all(|c| c == '-') {
        empty.to_owned()
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, version: &str) -> String {
        let suffix = SessionSuffix("0123456789ab".to_owned());
        default_session_key(Some(&Implementation::new(name, version)), &suffix)
    }

    #[test]
    fn names_the_client_and_its_version() {
        assert_eq!(
            key("claude-ai", "0.1.0"),
            "mcp:claude-ai@0.1.0:0123456789ab"
        );
    }

    #[test]
    fn a_client_name_cannot_reshape_the_key() {
        // Separators, spaces, control characters and non-ASCII letters are all replaced, so a
        // name cannot pose as another key's parts or hide in an approver's view.
        assert_eq!(
            key("Cursor: evil\n", "1.0 (beta)"),
            "mcp:Cursor--evil@1.0--beta-:0123456789ab"
        );
        assert_eq!(key("ünï", ""), "mcp:-n-@unknown:0123456789ab");
        assert_eq!(key("::", "x"), "mcp:client@x:0123456789ab");
        assert_eq!(
            key(&"a".repeat(100), "1").len(),
            "mcp:@1:0123456789ab".len() + 48
        );
    }

    #[test]
    fn each_process_gets_its_own_suffix() {
        let (one, two) = (SessionSuffix::new(), SessionSuffix::new());
        assert_eq!(one.0.len(), 12);
        assert_ne!(one.0, two.0);
    }
}
