//! The bubblewrap binary: where it is, which version, which options it has, and the argument
//! list a plan becomes.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::env::ChildEnv;
use crate::layout::{Layout, MountKind};
use crate::settings::BwrapBinary;

/// Options of newer bubblewrap releases a plan uses when they are there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Features {
    /// `--disable-userns` (0.8): the run cannot create user namespaces of its own, which
    /// would give it capabilities over new mounts and namespaces inside.
    pub disable_userns: bool,
    /// `--argv0`: the program sees the bound `argv[0]` rather than its absolute path.
    pub argv0: bool,
}

/// A located bubblewrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bubblewrap {
    /// The binary.
    pub path: PathBuf,
    /// `bwrap --version`'s version (`0.8.0`).
    pub version: String,
    /// What its `--help` offers.
    pub features: Features,
}

/// Why bubblewrap could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BwrapError {
    /// Not on `PATH`.
    #[error(
        "bubblewrap (`bwrap`) is not on PATH ({searched}){}: install it (Debian: `apt-get \
         install bubblewrap`) or set `sandbox.bwrapPath`",
        skipped.iter().map(|s| format!("; skipped {s}")).collect::<String>()
    )]
    NotFound {
        /// The `PATH` searched.
        searched: String,
        /// Candidates passed over, each with why.
        skipped: Vec<String>,
    },
    /// `bwrapPath` is relative: it would be looked up from whatever directory the gateway
    /// runs in.
    #[error("`sandbox.bwrapPath` {} is not an absolute path", path.display())]
    Relative {
        /// The configured path.
        path: PathBuf,
    },
    /// `bwrapPath` is not an executable file.
    #[error("`sandbox.bwrapPath` {} is not an executable file", path.display())]
    NotExecutable {
        /// The configured path.
        path: PathBuf,
    },
    /// Running it failed or it did not answer like bubblewrap.
    #[error("{} does not answer like bubblewrap: {detail}", path.display())]
    Unexpected {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}

impl Bubblewrap {
    /// Finds the binary (`bwrapPath`, or `bwrap` on `search_path`, the gateway's `PATH`;
    /// relative entries are skipped) and asks it for its version and options: two short
    /// runs, done once when the gateway starts.
    pub fn locate(binary: &BwrapBinary, search_path: Option<&OsStr>) -> Result<Self, BwrapError> {
        let path = match binary {
            BwrapBinary::At(path) if !path.is_absolute() => {
                return Err(BwrapError::Relative { path: path.clone() });
            }
            BwrapBinary::At(path) if is_executable(path) => path.clone(),
            BwrapBinary::At(path) => {
                return Err(BwrapError::NotExecutable { path: path.clone() });
            }
            BwrapBinary::OnPath => find_on_path(search_path)?,
        };
        let version = answer(&path, "--version")?;
        let version = version
            .trim()
            .strip_prefix("bubblewrap ")
            .map(str::to_owned)
            .ok_or_else(|| BwrapError::Unexpected {
                path: path.clone(),
                detail: format!("`--version` printed {:?}", version.trim()),
            })?;
        let help = answer(&path, "--help")?;
        Ok(Bubblewrap {
            path,
            version,
            features: features_of(&help),
        })
    }
}

/// The first `bwrap` on `search_path` that only root can replace. The gateway runs it on the
/// host with the run's whole layout in its hands, so a `bwrap` a user could have written (in
/// `~/.local/bin`, first on many `PATH`s, where a command run on the host could put one) is
/// passed over; `sandbox.bwrapPath` names any other deliberately.
fn find_on_path(search_path: Option<&OsStr>) -> Result<PathBuf, BwrapError> {
    let dirs = search_path.map(std::env::split_paths).into_iter().flatten();
    let mut skipped = Vec::new();
    for candidate in dirs
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bwrap"))
    {
        if !is_executable(&candidate) {
            continue;
        }
        match only_root_can_replace(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(why) => skipped.push(format!("{} ({why})", candidate.display())),
        }
    }
    Err(BwrapError::NotFound {
        searched: search_path
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "unset".to_owned()),
        skipped,
    })
}

/// Whether the file `path` leads to, and every directory above it, is owned by root and
/// writable by no one else.
fn only_root_can_replace(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let real = std::fs::canonicalize(path).map_err(|error| error.to_string())?;
    for at in real.ancestors() {
        let meta = std::fs::metadata(at).map_err(|error| format!("{}: {error}", at.display()))?;
        if meta.uid() != 0 {
            return Err(format!("{} is not owned by root", at.display()));
        }
        // Group or others may write; the sticky bit (/tmp) does not protect a file's name.
        if meta.mode() & 0o022 != 0 {
            return Err(format!("{} is writable by others than root", at.display()));
        }
    }
    Ok(())
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Stdout of `bwrap <flag>`, which must succeed.
fn answer(path: &Path, flag: &str) -> Result<String, BwrapError> {
    let output = Command::new(path)
        .arg(flag)
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|error| BwrapError::Unexpected {
            path: path.to_path_buf(),
            detail: format!("cannot run it: {error}"),
        })?;
    if !output.status.success() {
        return Err(BwrapError::Unexpected {
            path: path.to_path_buf(),
            detail: format!(
                "`{flag}` failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Which optional options `--help` lists.
pub(crate) fn features_of(help: &str) -> Features {
    let has = |option: &str| help.split_whitespace().any(|word| word == option);
    Features {
        disable_userns: has("--disable-userns"),
        argv0: has("--argv0"),
    }
}

/// What to run inside, and how.
pub(crate) struct Invocation<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) network: bool,
    pub(crate) features: Features,
    /// The working directory, a path the sandbox sees.
    pub(crate) cwd: &'a Path,
    /// The absolute path of the program, as the sandbox sees it.
    pub(crate) program: &'a Path,
    /// The bound argv; `argv[0]` is passed with `--argv0` when bubblewrap has it.
    pub(crate) argv: &'a [String],
    /// The run's environment.
    pub(crate) env: &'a ChildEnv,
}

/// bubblewrap's arguments for one run: namespaces, then the mounts in order (the root made
/// read-only after them), then the program.
///
/// The namespaces are new: user (no capabilities, and none to gain: `--cap-drop ALL` matters
/// when the gateway runs as root, where bubblewrap would keep them), PID, IPC (the host's
/// shared memory segments and message queues) and network unless allowed. The UTS and cgroup
/// namespaces are the host's: changing the host name needs a capability the run does not
/// have, no cgroup file system is mounted, and each namespace costs every run time. `--die-with-parent` kills the run with
/// bubblewrap and bubblewrap with the gateway; `--new-session` detaches it from any terminal,
/// so it cannot push input into one (`TIOCSTI`). The run's environment is set with
/// `--clearenv` and `--setenv` while bubblewrap itself starts with none: bubblewrap runs on the
/// host before any namespace exists, and a request's `LD_PRELOAD` or `GLIBC_TUNABLES` in its
/// own environment would act on its loader there.
pub(crate) fn arguments(run: &Invocation<'_>) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    if !run.network {
        args.push("--unshare-net".into());
    }
    if run.features.disable_userns {
        args.push("--disable-userns".into());
    }
    args.push("--clearenv".into());
    for (name, value) in run.env.vars() {
        args.extend(["--setenv".into(), name.into(), value.into()]);
    }
    for mount in run.layout.mounts() {
        match &mount.kind {
            MountKind::Bind { source, writable } => {
                args.push(if *writable { "--bind" } else { "--ro-bind" }.into());
                args.push(source.into());
            }
            MountKind::Tmpfs => args.push("--tmpfs".into()),
            MountKind::Proc => args.push("--proc".into()),
            MountKind::Dev => args.push("--dev".into()),
            MountKind::Symlink { target } => {
                args.push("--symlink".into());
                args.push(target.into());
            }
        }
        args.push(mount.dest.clone().into());
    }
    // bubblewrap's root is a writable tmpfs holding the mount points; nothing but the mounts
    // that say so may be written.
    args.push("--remount-ro".into());
    args.push("/".into());
    args.push("--chdir".into());
    args.push(run.cwd.into());
    if run.features.argv0
        && let Some(argv0) = run.argv.first()
    {
        args.push("--argv0".into());
        args.push(argv0.into());
    }
    args.push("--".into());
    args.push(run.program.into());
    args.extend(run.argv.iter().skip(1).map(OsString::from));
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_optional_options_from_the_help_text() {
        let old = "    --unshare-pid   Create new pid namespace\n    --cap-drop CAP  Drop cap";
        assert_eq!(features_of(old), Features::default());
        let new =
            "    --disable-userns             Disable further use\n    --argv0 VALUE   Set argv[0]";
        assert_eq!(
            features_of(new),
            Features {
                disable_userns: true,
                argv0: true
            }
        );
        // `--disable-userns` is not `--disable-userns-try` or a mention in prose.
        assert!(!features_of("--assert-userns-disabled").disable_userns);
    }

    #[test]
    fn a_missing_or_unusable_binary_is_named() {
        let empty = tempfile::tempdir().unwrap();
        let error =
            Bubblewrap::locate(&BwrapBinary::OnPath, Some(empty.path().as_os_str())).unwrap_err();
        assert!(matches!(error, BwrapError::NotFound { .. }), "{error}");
        assert!(error.to_string().contains("apt-get install bubblewrap"));
        let error =
            Bubblewrap::locate(&BwrapBinary::At(empty.path().join("bwrap")), None).unwrap_err();
        assert!(matches!(error, BwrapError::NotExecutable { .. }), "{error}");
        let error = Bubblewrap::locate(&BwrapBinary::At("bin/bwrap".into()), None).unwrap_err();
        assert!(matches!(error, BwrapError::Relative { .. }), "{error}");
        let error = Bubblewrap::locate(&BwrapBinary::At("/bin/true".into()), None).unwrap_err();
        assert!(matches!(error, BwrapError::Unexpected { .. }), "{error}");
        // A `bwrap` a user could have written is passed over, with the reason.
        let planted = tempfile::tempdir().unwrap();
        let fake = planted.path().join("bwrap");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let search = format!("{}:/nonexistent", planted.path().display());
        let error =
            Bubblewrap::locate(&BwrapBinary::OnPath, Some(OsStr::new(&search))).unwrap_err();
        let BwrapError::NotFound { skipped, .. } = &error else {
            panic!("{error}");
        };
        assert_eq!(skipped.len(), 1, "{error}");
        assert!(error.to_string().contains("; skipped "), "{error}");
        // A relative `PATH` entry is not searched, even if it holds a `bwrap`.
        let error =
            Bubblewrap::locate(&BwrapBinary::OnPath, Some(OsStr::new("relative/dir"))).unwrap_err();
        assert!(matches!(error, BwrapError::NotFound { .. }), "{error}");
    }
}
