//! Files no tool touches, even inside the workspace: credentials, keys, and (for writes) files
//! that make other programs run code.
//!
//! The lists are matched folded (NFKC, spaces, case) against both the path as requested and
//! the canonical path, so neither a fullwidth `．ｅｎｖ` nor a symlink `notes.txt → .env`
//! slips past. Name entries match any component, so `.ssh` refuses everything under any `.ssh`
//! directory, not only `~/.ssh`.

use std::path::Path;
use std::sync::LazyLock;

use super::globs::{ListKind, PathGlobs};

/// Credential stores, keys and cloud credentials: refused for every file tool.
pub const DENIED_FILES: &[&str] = &[
    // Environment files: `.env`, `.env.local`, `.env.production`, `.envrc` (direnv), and the
    // `.env.example` templates too, since real values end up there as often as not.
    ".env*",
    // Credential stores read by curl, git, psql, npm, pip/twine.
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    // SSH and GPG.
    ".ssh",
    ".gnupg",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    // Key and certificate containers: a private key is as likely as a certificate.
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    // Cloud and cluster credentials.
    ".aws",
    ".azure",
    "**/.config/gcloud",
    "**/.kube/config",
    "**/.docker/config.json",
    "**/.config/gh/hosts.yml",
    ".password-store",
    // The approvals file of any OpenClaw-compatible gateway, wherever it lives.
    "exec-approvals.json",
];

/// Files whose content other programs execute or obey: refused for `write`, `edit`,
/// `apply_patch` (reading them is fine). An allowlisted `git commit` would otherwise run a hook
/// the agent wrote, and a shell would source an agent-written rc file.
pub const WRITE_DENIED_FILES: &[&str] = &[
    ".git",
    ".gitconfig",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
];

/// Pseudo-filesystems: `/proc/self/environ` holds a process's secrets, `/dev` and `/sys` are
/// devices and kernel switches, not files.
pub const SYSTEM_DIRS: &[&str] = &["/proc", "/sys", "/dev"];

/// The built-in lists, compiled once per process.
#[derive(Debug)]
pub(crate) struct BuiltinDenied {
    pub(crate) all: PathGlobs,
    pub(crate) writes: PathGlobs,
}

static BUILTIN: LazyLock<Option<BuiltinDenied>> = LazyLock::new(|| {
    let compile = |entries: &[&str], key: &str| {
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        PathGlobs::new(&entries, ListKind::Deny, key, Path::new("/"), None).ok()
    };
    Some(BuiltinDenied {
        all: compile(DENIED_FILES, "(built-in)")?,
        writes: compile(WRITE_DENIED_FILES, "(built-in, writes)")?,
    })
});

/// The compiled built-in lists; `None` only if a constant above failed to compile, which the
/// unit test below rules out (callers then refuse every path).
pub(crate) fn builtin() -> Option<&'static BuiltinDenied> {
    BUILTIN.as_ref()
}

/// Whether a canonical path lies in a system pseudo-filesystem.
pub(crate) fn in_system_dir(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|dir| path.starts_with(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_compile() {
        assert!(builtin().is_some());
    }

    #[test]
    fn denies_credentials_anywhere_and_in_any_case_or_width() {
        let all = &builtin().unwrap().all;
        for path in [
            "/ws/.env",
            "/ws/app/.env.production",
            "/ws/.ENV",
            "/ws/．ｅｎｖ",
            "/home/u/.ssh/config",
            "/ws/.ssh/authorized_keys",
            "/home/u/.aws/credentials",
            "/home/u/.config/gcloud/application_default_credentials.json",
            "/home/u/.kube/config",
            "/home/u/.docker/config.json",
            "/ws/deploy/server.KEY",
            "/ws/certs/tls.pem",
            "/ws/id_ed25519",
            "/home/u/.openclaw/exec-approvals.json",
        ] {
            assert!(all.matching(path).is_some(), "{path}");
        }
        for path in [
            "/ws/src/environment.rs",
            "/ws/.kube/cache/x",
            "/ws/docs/keys.md",
            "/ws/id_utils.py",
        ] {
            assert_eq!(all.matching(path), None, "{path}");
        }
    }

    #[test]
    fn denies_writes_to_files_other_programs_run() {
        let writes = &builtin().unwrap().writes;
        for path in [
            "/ws/.git/hooks/pre-commit",
            "/ws/.git/config",
            "/home/u/.bashrc",
        ] {
            assert!(writes.matching(path).is_some(), "{path}");
        }
        assert_eq!(writes.matching("/ws/.gitignore"), None);
    }
}
