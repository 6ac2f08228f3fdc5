//! Which file `argv[0]` names, resolved the way `execvp` would, so the gateway spawns and binds
//! that exact file (the policy's segments are not used for this: for `sh -c '…'` they describe
//! the unwrapped inner command, not the program that is started), and whether the programs the
//! policy looked through may run at all.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use gatehouse_policy::exec::{ExecEvaluation, is_in_trusted_dir};

/// The executable `program` runs, found exactly as the policy found the file it judged, so
/// that the file bound and spawned is that file: a leading `~` or `~/` is the request's `HOME`
/// (or the gateway's), as node hosts expand it (`~user` resolves to nothing); a path with `/`
/// is relative to `cwd`; a bare name is the first executable file on the request's `PATH` (or
/// the gateway's). Relative `PATH` entries count, relative to `cwd`, as they would for the
/// child started there; an empty entry is `cwd`, as the policy reads it.
pub(crate) fn resolve_program(
    program: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if let Some(after_tilde) = program.strip_prefix('~') {
        let home = cwd.join(request_var(env, "HOME").filter(|home| !home.is_empty())?);
        let path = match after_tilde {
            "" => home,
            _ => home.join(after_tilde.strip_prefix('/')?),
        };
        return Some(path).filter(|path| is_executable(path));
    }
    if program.contains('/') {
        return Some(cwd.join(program)).filter(|path| is_executable(path));
    }
    // As the policy searches: an empty entry (or `.`) is the working directory itself, and
    // the search stops at an entry starting with `~`, which shells read differently.
    request_var(env, "PATH")?
        .split(':')
        .take_while(|dir| !dir.starts_with('~'))
        .map(|dir| {
            if dir.is_empty() || Path::new(dir) == Path::new(".") {
                cwd.to_path_buf()
            } else {
                cwd.join(dir)
            }
        })
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

/// [`resolve_program`] for the program of an argv request the policy has just evaluated: a
/// bare name the evaluation found on `PATH` is that file, without a second search (a path
/// lookup per `PATH` entry, on every request).
pub(crate) fn spawned_program(
    program: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    evaluation: &ExecEvaluation,
) -> Option<PathBuf> {
    let bare = !program.contains('/') && !program.starts_with('~');
    match &evaluation.program_on_path {
        Some(found) if bare => Some(found.clone()),
        _ => resolve_program(program, cwd, env),
    }
}

/// Why a run may not start although the policy let it through, or `None`.
///
/// The policy looks through wrappers (`env`, `nice`, `timeout`, …), shells running a script or
/// a payload, and package runners by name, as OpenClaw does, and judges what they start. That
/// is sound only if each of them is the system's own tool: an agent's `./env`, or an `env` in
/// a `PATH` entry it prepended, would run unjudged while the allowlist (or the person asked)
/// saw only the program behind it. So every program looked through, in every segment of a
/// shell string as in an argv, must resolve to a real path in a trusted directory (`/bin`,
/// `/usr/bin` and `safeBinTrustedDirs`), the rule safe bins already follow. `spawned`, the
/// file an argv request starts, must besides be the program judged or such a file, so a
/// difference between the policy's lookup and the spawn's cannot start something unjudged.
pub(crate) fn unjudged_wrapper(
    spawned: Option<&Path>,
    evaluation: &ExecEvaluation,
    trusted_dirs: &[PathBuf],
) -> Option<String> {
    let real = |path: &Path| std::fs::canonicalize(path).ok();
    let trusted =
        |path: &Path| real(path).is_some_and(|real| is_in_trusted_dir(&real, trusted_dirs));
    if let Some(executable) = spawned {
        let judged_itself = matches!(evaluation.segments.as_slice(), [only]
            if only.resolved_path.is_some() && only.resolved_path == real(executable));
        if !judged_itself && !trusted(executable) {
            return Some(untrusted(executable));
        }
    }
    let wrapper = evaluation
        .segments
        .iter()
        .flat_map(|segment| &segment.looked_through)
        .find(|wrapper| !wrapper.resolved_path.as_deref().is_some_and(trusted))?;
    Some(match &wrapper.resolved_path {
        Some(path) => untrusted(path),
        None => format!(
            "`{}` was looked through to judge the program it starts, but it does not resolve \
             to a file here, so what would run is unknown",
            wrapper.word
        ),
    })
}

fn untrusted(program: &Path) -> String {
    format!(
        "`{}` was looked through to judge the program it starts, but it is not a system \
         binary in a trusted directory (/bin, /usr/bin or safeBinTrustedDirs), so it could be \
         anything",
        program.display()
    )
}

/// `key` from the request's environment overrides, else from the gateway's own.
fn request_var(env: &BTreeMap<String, String>, key: &str) -> Option<String> {
    env.get(key).cloned().or_else(|| std::env::var(key).ok())
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

    /// Probe report: empty entries were skipped, though `execvp` reads them as the cwd.
    #[test]
    fn reads_an_empty_path_entry_as_the_cwd_and_stops_at_a_tilde_entry() {
        let env = BTreeMap::from([("PATH".to_owned(), ":/usr/bin".to_owned())]);
        assert_eq!(
            resolve_program("sh", Path::new("/bin"), &env),
            Some(PathBuf::from("/bin/sh"))
        );
        let tilde = BTreeMap::from([("PATH".to_owned(), "~/bin:/bin:/usr/bin".to_owned())]);
        assert_eq!(resolve_program("sh", Path::new("/"), &tilde), None);
    }

    #[test]
    fn a_leading_tilde_is_home_as_the_policy_reads_it() {
        let env = BTreeMap::from([("HOME".to_owned(), "/".to_owned())]);
        assert_eq!(
            resolve_program("~/bin/sh", Path::new("/tmp"), &env),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(resolve_program("~root/bin/sh", Path::new("/"), &env), None);
        assert_eq!(
            resolve_program("~", Path::new("/"), &env),
            None,
            "a directory"
        );
        let no_home = BTreeMap::from([("HOME".to_owned(), String::new())]);
        assert_eq!(resolve_program("~/bin/sh", Path::new("/"), &no_home), None);
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

    /// The file the policy found on `PATH` stands in for the search only if it is the file the
    /// search finds: for every kind of entry, the two must name it the same way.
    #[test]
    fn takes_the_policys_path_hit_only_where_it_is_the_searched_file() {
        use gatehouse_policy::exec::{ExecPolicy, ExecRequest, evaluate};
        use std::os::unix::fs::{PermissionsExt as _, symlink};

        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        let tool = |dir: &str, name: &str, mode: u32| {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            let path = root.join(dir).join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        tool("cwd", "in-cwd", 0o755);
        tool("relative", "in-relative", 0o755);
        tool("plain", "shadowed", 0o644);
        tool("real", "shadowed", 0o755);
        tool("real", "target", 0o755);
        symlink(root.join("real"), root.join("linked")).unwrap();
        symlink(root.join("real/target"), root.join("plain/via-link")).unwrap();
        let path = format!(
            ":../relative:{0}/plain:{0}/linked:/usr/bin:/bin",
            root.display()
        );
        let env = BTreeMap::from([("PATH".to_owned(), path)]);
        let cwd = root.join("cwd");
        let dot = BTreeMap::from([("PATH".to_owned(), "./:/usr/bin:/bin".to_owned())]);
        let cases = [
            "in-cwd",
            "in-relative",
            "shadowed",
            "target",
            "via-link",
            "sh",
        ]
        .map(|program| (program, &env))
        .into_iter()
        .chain([("in-cwd", &dot)]);
        for (program, env) in cases {
            let request = ExecRequest::argv([program, "x"], &cwd).with_env("PATH", &env["PATH"]);
            let evaluation = evaluate(&request, &ExecPolicy::default());
            let searched = resolve_program(program, &cwd, env);
            assert!(searched.is_some(), "{program}");
            // Compared as bytes: `Path`'s equality skips `.` components, the binding does not.
            let bytes = |path: &Option<PathBuf>| path.as_ref().map(|p| p.as_os_str().to_owned());
            assert_eq!(
                bytes(&evaluation.program_on_path),
                bytes(&searched),
                "{program}: the policy's hit against the search"
            );
            assert_eq!(spawned_program(program, &cwd, env, &evaluation), searched);
        }
    }
}
