//! The canonical text of a node `system.run` argv, and whether a claimed `rawCommand` matches it.
//!
//! The approval prompt shows this text, so it must show what will really run: a `rawCommand`
//! that hides part of the argv (an env prelude, positional carriers after `sh -c`) is invalid.

/// The display text of an argv and whether the caller's `rawCommand` is consistent with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCommandText {
    /// `rawCommand` is absent or describes exactly this argv (OpenClaw's rule: the payload of
    /// `sh -c PAYLOAD` alone counts too).
    pub valid: bool,
    /// The canonical text shown for approval: the whole argv, quoted where needed.
    pub display_command: String,
    /// `valid`, and the text shows what runs: a payload-only `rawCommand` counts only when the
    /// analysis reads that payload as the command (`sh -c PAYLOAD`, the shell named bare and
    /// given nothing else). Naming only the payload of a shell the analysis treats as opaque
    /// (a login shell, a shell named by path, zsh or fish, an option beside `-c`) hides what
    /// runs first (profile scripts, another shell's syntax), so `exec.approval.request` and
    /// `system.run` refuse it.
    pub shows_what_runs: bool,
}

/// Checks a `system.run` argv against the `rawCommand` the caller claims it is.
pub fn node_command_text(argv: &[String], raw_command: Option<&str>) -> NodeCommandText {
    let display_command = display_argv(argv);
    let (valid, payload_only) = match raw_command.map(str::trim) {
        None | Some("") => (!argv.is_empty(), false),
        Some(raw) if raw == display_command || raw == display_command.trim() => (true, false),
        Some(raw) => {
            let payload = is_sole_shell_payload(argv, raw);
            (payload, payload)
        }
    };
    let shows_what_runs = valid && (!payload_only || payload_is_analysed(argv));
    NodeCommandText {
        valid,
        display_command,
        shows_what_runs,
    }
}

/// Whether the analysis reads `argv`'s shell payload as the command itself: the argv unwraps to
/// an inline shell whose payload is the last word, with nothing looked through before it.
fn payload_is_analysed(argv: &[String]) -> bool {
    let words = super::parse::Word::direct_argv(argv);
    let unwrapped = super::unwrap::unwrap(&words);
    matches!(
        unwrapped.target,
        super::unwrap::Target::InlineShell { shell: 0, payload } if payload + 1 == argv.len()
    )
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

    /// Issue 29: a payload-only text stands for the argv only when the analysis reads that
    /// payload as the command.
    #[test]
    fn denies_payload_only_text_for_opaque_shells() {
        let shows = |words: &[&str], raw: &str| node_command_text(&argv(words), Some(raw));
        assert!(shows(&["sh", "-c", "echo hi"], "echo hi").shows_what_runs);
        assert!(shows(&["bash", "-ec", "echo hi"], "echo hi").shows_what_runs);
        for words in [
            &["/bin/sh", "-lc", "echo hi"][..],
            &["/bin/sh", "-c", "echo hi"],
            &["bash", "-lc", "echo hi"],
            &["zsh", "-c", "echo hi"],
        ] {
            let text = shows(words, "echo hi");
            assert!(text.valid, "{words:?}: OpenClaw's rule still accepts it");
            assert!(!text.shows_what_runs, "{words:?}");
            let full = node_command_text(&argv(words), Some(&text.display_command));
            assert!(full.shows_what_runs, "{words:?}: the full text is fine");
        }
        assert!(!shows(&["bash", "-xc", "echo hi"], "echo hi").shows_what_runs);
    }
}
