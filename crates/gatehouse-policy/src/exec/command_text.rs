//! The canonical text of a node `system.run` argv, and whether a claimed `rawCommand` matches it.
//!
//! The approval prompt shows this text, so it must show what will really run: a `rawCommand`
//! that hides part of the argv (an env prelude, positional carriers after `sh -c`) is invalid.

/// The display text of an argv and whether the caller's `rawCommand` is consistent with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCommandText {
    /// `rawCommand` is absent or describes exactly this argv.
    pub valid: bool,
    /// The canonical text shown for approval: the whole argv, quoted where needed.
    pub display_command: String,
}

/// Checks a `system.run` argv against the `rawCommand` the caller claims it is.
pub fn node_command_text(argv: &[String], raw_command: Option<&str>) -> NodeCommandText {
    let display_command = display_argv(argv);
    let valid = match raw_command.map(str::trim) {
        None | Some("") => !argv.is_empty(),
        Some(raw) => {
            raw == display_command
                || raw == display_command.trim()
                || is_sole_shell_payload(argv, raw)
        }
    };
    NodeCommandText {
        valid,
        display_command,
    }
}

/// Joins an argv into one line, double-quoting every word a shell would split or expand.
pub fn display_argv(argv: &[String]) -> String {
    let words: Vec<String> = argv.iter().map(|word| quote_word(word)).collect();
    words.join(" ")
}

fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=:@,+%^~".contains(c));
    if plain {
        return word.to_owned();
    }
    let mut quoted = String::with_capacity(word.len() + 2);
    quoted.push('"');
    for c in word.chars() {
        if matches!(c, '"' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// `sh -c PAYLOAD` with nothing after the payload may be described by the payload alone; any
/// positional argument after it ($0, $1…) changes what runs, so then only the full text counts.
fn is_sole_shell_payload(argv: &[String], raw: &str) -> bool {
    let [shell, flag, payload] = argv else {
        return false;
    };
    let name = shell.rsplit('/').next().unwrap_or(shell);
    super::shells::is_posix_shell(name)
        && super::shells::is_command_flag(flag)
        && payload.trim() == raw
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn quotes_words_a_shell_would_split() {
        assert_eq!(display_argv(&argv(&["echo", "  hi  "])), "echo \"  hi  \"");
        assert_eq!(
            display_argv(&argv(&["sh", "-c", "$0 \"$1\""])),
            "sh -c \"$0 \\\"$1\\\"\""
        );
        assert_eq!(display_argv(&argv(&["ls", ""])), "ls \"\"");
        assert_eq!(display_argv(&argv(&["env", "A=/x/y.sh"])), "env A=/x/y.sh");
    }

    #[test]
    fn accepts_raw_command_only_when_it_shows_everything() {
        let shell = argv(&["/bin/sh", "-lc", "echo hi"]);
        assert!(node_command_text(&shell, Some("echo hi")).valid);
        assert!(node_command_text(&shell, Some("/bin/sh -lc \"echo hi\"")).valid);
        assert!(!node_command_text(&shell, Some("echo bye")).valid);
        let carrier = argv(&["/bin/sh", "-lc", "$0", "/usr/bin/touch"]);
        assert!(!node_command_text(&carrier, Some("$0")).valid);
        let prelude = argv(&["env", "X=1", "sh", "-c", "id"]);
        assert!(!node_command_text(&prelude, Some("id")).valid);
        assert!(!node_command_text(&[], None).valid);
    }
}
