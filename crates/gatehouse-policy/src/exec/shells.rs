//! Which programs are shells, and which of their flags introduce inline code.

/// POSIX-style shells whose `-c` payload is shell code we can parse.
const POSIX_SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash"];

/// Whether a program basename is a shell that runs `-c` payloads.
pub(crate) fn is_posix_shell(basename: &str) -> bool {
    POSIX_SHELLS.contains(&basename.to_ascii_lowercase().as_str())
}

/// Letters a `-c` cluster may carry besides `c`. Each was checked for effects that run code:
/// `-e` (errexit) and `-u` (nounset) only stop the payload early, `-v` prints its text as read
/// (no expansion), `-f` turns globbing off (a glob the analysis treated as unknown stays
/// literal). `l` (login) is recognised here and made opaque by the caller. Everything else can
/// change what the payload runs: `-x` expands `PS4`, command substitutions included, before
/// every command (bash imports `PS4` from the environment unless it runs as root), `-k` moves
/// `NAME=value` words into the environment, `-i` reads `~/.bashrc` and expands aliases, `-s`
/// reads stdin, `-o`/`-O` take an option from the next word, `-a` exports every assignment and
/// `-T`/`-E` pass traps into functions; so a cluster holding one is not a plain command flag.
/// `tests/it/shell_oracle.rs` runs every letter under bash and dash with a hostile
/// environment and checks that only these leave the payload's programs unchanged.
const COMMAND_CLUSTER_LETTERS: &[char] = &['c', 'e', 'u', 'v', 'f', 'l'];

/// Whether a shell flag makes the next word inline code (`-c`, `-lc`, `-ec`, `--command`).
/// A cluster with a letter outside [`COMMAND_CLUSTER_LETTERS`] is not one: see
/// [`unsafe_command_letter`].
pub(crate) fn is_command_flag(flag: &str) -> bool {
    if flag == "--command" {
        return true;
    }
    match flag.strip_prefix('-') {
        Some(cluster) if !cluster.starts_with('-') && !cluster.is_empty() => {
            cluster.contains('c')
                && cluster
                    .chars()
                    .all(|c| COMMAND_CLUSTER_LETTERS.contains(&c))
        }
        _ => false,
    }
}

/// For a `-…c…` cluster, the first letter that may change what the inline code runs, with
/// why, so the refusal can name it (`bash -kc …`: `-k`).
pub(crate) fn unsafe_command_letter(flag: &str) -> Option<(char, &'static str)> {
    let cluster = flag.strip_prefix('-')?;
    if cluster.starts_with('-') || !cluster.contains('c') {
        return None;
    }
    let letter = cluster
        .chars()
        .find(|c| !COMMAND_CLUSTER_LETTERS.contains(c))?;
    let why = match letter {
        'k' => "puts every NAME=value word into the command's environment",
        'x' => "traces every command, expanding PS4 (command substitutions included) first",
        'i' => "makes the shell interactive: it reads ~/.bashrc and expands aliases",
        's' => "makes the shell read commands from stdin",
        'o' | 'O' => "sets a shell option named by the next word",
        'p' => "runs in privileged mode, keeping an inherited environment",
        _ => "is not a shell option known to leave the inline code unchanged",
    };
    Some((letter, why))
}

/// Whether a shell (or a multiplexer's shell applet: `busybox sh -c …`) is given inline code
/// in its options, however they are spelled (`-c`, `-lc`, `-xc`, `--command`), so that an
/// opaque shell still counts as running inline code for `strictInlineEval`.
pub(crate) fn runs_inline_code(program: &str, args: &[String]) -> bool {
    let name = program
        .rsplit('/')
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    let args = match args.split_first() {
        Some((applet, rest)) if matches!(name.as_str(), "busybox" | "toybox") => {
            if !is_posix_shell(applet.rsplit('/').next().unwrap_or(applet)) {
                return false;
            }
            rest
        }
        _ if is_posix_shell(&name) => args,
        _ => return false,
    };
    args.iter()
        .take_while(|arg| arg.starts_with(['-', '+']) && *arg != "--")
        .any(|arg| arg == "--command" || (!arg.starts_with("--") && arg[1..].contains('c')))
}

/// Shells whose inline code the bash grammar reads faithfully. zsh, fish and ksh have
/// constructs bash lacks (`=(cmd)`, `(cmd)`, `${ cmd; }`) that run commands, so their payloads
/// are never analyzed, only approved as exact commands.
const BASH_COMPATIBLE: &[&str] = &["sh", "bash", "dash", "ash"];

/// Whether a shell's `-c` payload may be analyzed with the bash grammar.
pub(crate) fn is_bash_compatible(basename: &str) -> bool {
    BASH_COMPATIBLE.contains(&basename.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_harmless_letters_beside_c() {
        for flag in ["-c", "-lc", "-ec", "-euc", "-cv", "-fc", "--command"] {
            assert!(is_command_flag(flag), "{flag}");
            assert_eq!(unsafe_command_letter(flag), None, "{flag}");
        }
        for (flag, letter) in [
            ("-kc", 'k'),
            ("-ic", 'i'),
            ("-sc", 's'),
            ("-ceO", 'O'),
            ("-xc", 'x'),
            ("-euxc", 'x'),
        ] {
            assert!(!is_command_flag(flag), "{flag}");
            assert_eq!(unsafe_command_letter(flag).map(|(l, _)| l), Some(letter));
        }
        assert_eq!(
            unsafe_command_letter("-k"),
            None,
            "no c: not a command cluster"
        );
        assert_eq!(unsafe_command_letter("--rcfile"), None);
    }
}
