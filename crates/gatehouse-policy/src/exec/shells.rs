//! Which programs are shells, and which of their flags introduce inline code.

/// POSIX-style shells whose `-c` payload is shell code we can parse.
const POSIX_SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash"];

/// Whether a program basename is a shell that runs `-c` payloads.
pub(crate) fn is_posix_shell(basename: &str) -> bool {
    POSIX_SHELLS.contains(&basename.to_ascii_lowercase().as_str())
}

/// Whether a shell flag makes the next word inline code (`-c`, `-lc`, `-ic`, `--command`).
pub(crate) fn is_command_flag(flag: &str) -> bool {
    if flag == "--command" {
        return true;
    }
    match flag.strip_prefix('-') {
        Some(cluster) if !cluster.starts_with('-') && !cluster.is_empty() => {
            cluster.contains('c') && cluster.chars().all(|c| c.is_ascii_alphabetic())
        }
        _ => false,
    }
}

/// Shells whose inline code the bash grammar reads faithfully. zsh, fish and ksh have
/// constructs bash lacks (`=(cmd)`, `(cmd)`, `${ cmd; }`) that run commands, so their payloads
/// are never analyzed, only approved as exact commands.
const BASH_COMPATIBLE: &[&str] = &["sh", "bash", "dash", "ash"];

/// Whether a shell's `-c` payload may be analyzed with the bash grammar.
pub(crate) fn is_bash_compatible(basename: &str) -> bool {
    BASH_COMPATIBLE.contains(&basename.to_ascii_lowercase().as_str())
}
