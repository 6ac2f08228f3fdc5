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
