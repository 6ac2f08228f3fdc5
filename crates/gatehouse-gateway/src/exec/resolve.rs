//! Which file `argv[0]` names, resolved the way `execvp` would, so the gateway spawns and binds
//! that exact file. The policy's segments are not used for this: for `sh -c '…'` they describe
//! the unwrapped inner command, not the program that is started.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// The executable `program` runs: a path (relative to `cwd`) when it contains `/`, else the
/// first executable file on the request's `PATH` (or the gateway's). Relative `PATH` entries
/// count, relative to `cwd`, as they do for the child started there and for the policy: the
/// file bound and spawned must be the file the policy judged. Empty entries are skipped, as
/// the policy skips them.
pub(crate) fn resolve_program(
    program: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        return Some(cwd.join(program)).filter(|path| is_executable(path));
    }
    let path_var = env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok())?;
    path_var
        .split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| cwd.join(dir).join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_bare_names_on_path_and_paths_against_the_cwd() {
        let env = BTreeMap::from([("PATH".to_owned(), "::relative:/bin:/usr/bin".to_owned())]);
        let sh = resolve_program("sh", Path::new("/"), &env).unwrap();
        assert!(sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(
            resolve_program("./sh", Path::new("/bin"), &env),
            Some(PathBuf::from("/bin/./sh"))
        );
        assert_eq!(
            resolve_program("no-such-program-here", Path::new("/"), &env),
            None
        );
        assert_eq!(resolve_program("", Path::new("/"), &env), None);
    }

    #[test]
    fn a_relative_path_entry_is_searched_from_the_cwd_in_its_place() {
        use std::os::unix::fs::PermissionsExt as _;
        let work = tempfile::tempdir().unwrap();
        let tools = work.path().join("tools");
        std::fs::create_dir(&tools).unwrap();
        let tool = tools.join("sh");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = BTreeMap::from([("PATH".to_owned(), "tools:/bin:/usr/bin".to_owned())]);
        assert_eq!(resolve_program("sh", work.path(), &env), Some(tool));
        let later = BTreeMap::from([("PATH".to_owned(), "/bin:tools".to_owned())]);
        assert_ne!(
            resolve_program("sh", work.path(), &later),
            Some(work.path().join("tools/sh"))
        );
    }
}
