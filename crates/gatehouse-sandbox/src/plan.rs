//! One sandboxed run, planned: the mounts its isolation mode calls for (each configured source
//! validated), its environment, and the bubblewrap command that starts exactly the bound argv.
//!
//! Planning prepares the agent's persistent directories (`<data_dir>/sandbox/<agentId>/home`
//! for isolation `home`, `.../volumes/<path>` for `volumes`), mode 0700, and otherwise only
//! reads. What a mode mounts:
//!
//! | isolation | home directory | also |
//! |---|---|---|
//! | `home` | the agent's persistent home, read-write | |
//! | `autodocs-read` | a tmpfs | the real home's top-level, non-hidden, non-link directories, read-only |
//! | `autodocs-write` | a tmpfs | the same, read-write |
//! | `volumes` | a tmpfs | each volume, backed by its own persistent directory, read-write |
//! | `ephemeral` | a tmpfs | |
//!
//! Every mode adds the system directories read-only, a private `/proc`, `/dev` and `/tmp`, the
//! extra paths read-only and the workspace read-write, at their host paths; the home is at the
//! real home's path, so `~` means the same path inside and out.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::bwrap::{Bubblewrap, Invocation, arguments};
use crate::env::{BaseEnv, ChildEnv, EnvLimits, build_env};
use crate::error::PlanError;
use crate::layout::{Layout, Mount, MountKind, MountRole};
use crate::paths::{Walk, depth, expand, walk};
use crate::session::is_plain_agent_id;
use crate::settings::{HostContext, Isolation, SandboxSettings};
use crate::system::{SYSTEM_PATH, is_system_visible, system_mounts};
use crate::validate::{AllowedRoots, DenyList, MountRefusal, check_plain_source, check_source};

/// What one run asks for, as the runner has fixed and bound it.
#[derive(Debug, Clone, Copy)]
pub struct RunRequest<'a> {
    /// The requesting agent.
    pub agent_id: &'a str,
    /// The program, absolute and resolved (the runner's canonical path, which the binding
    /// checked).
    pub executable: &'a Path,
    /// The bound argv, `argv[0]` included.
    pub argv: &'a [String],
    /// The working directory, absolute and resolved.
    pub cwd: &'a Path,
    /// The request's own environment variables.
    pub env: &'a BTreeMap<String, String>,
}

/// A home directory entry autodocs did not mount, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The directory.
    pub path: PathBuf,
    /// Why it is not mounted.
    pub refusal: MountRefusal,
}

/// A planned sandboxed run.
#[derive(Debug, Clone)]
pub struct Plan {
    bwrap: PathBuf,
    args: Vec<OsString>,
    env: ChildEnv,
    layout: Layout,
    skipped: Vec<Skipped>,
}

impl Plan {
    /// The command that starts the run: bubblewrap with the plan's arguments (the run's
    /// environment among them), no environment of its own, stdin from `/dev/null`, in a
    /// process group of its own (so the runner can kill whatever is left of it at once). The
    /// runner pipes stdout and stderr, applies its timeout and output bounds, and must not add
    /// environment variables: they would reach bubblewrap's own loader on the host. When it
    /// kills bubblewrap, the sandbox dies with it (`--die-with-parent`), however the run
    /// detached.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.bwrap);
        command
            .args(&self.args)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .process_group(0);
        command
    }

    /// Refuses a file the binding read on the host (a script, `sed -f`'s file, a makefile:
    /// absolute and resolved) unless the sandbox sees that same file at that same path. The
    /// plan checks the program and the working directory itself; the runner checks each
    /// program file with this, since `sh ~/deploy.sh` under isolation `home` would otherwise
    /// run the agent's own `~/deploy.sh` while the approval bound the host's.
    pub fn require_same_file(&self, path: &Path) -> Result<(), PlanError> {
        if path.is_absolute() && self.layout.sees_at_same_path(path) {
            Ok(())
        } else {
            Err(PlanError::NotVisible {
                what: "program file",
                path: path.to_path_buf(),
            })
        }
    }

    /// The mounts, in order.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The environment the run starts with.
    pub fn env(&self) -> &ChildEnv {
        &self.env
    }

    /// bubblewrap's arguments.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// Home directories autodocs left out, with why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }
}

/// Plans one sandboxed run of `run` under `settings`.
pub fn plan(
    settings: &SandboxSettings,
    host: &HostContext,
    bwrap: &Bubblewrap,
    run: &RunRequest<'_>,
) -> Result<Plan, PlanError> {
    if !is_plain_agent_id(run.agent_id) {
        return Err(PlanError::AgentId {
            id: run.agent_id.to_owned(),
        });
    }
    let home = host.home.as_path();
    let deny = DenyList::new(host);
    let roots =
        AllowedRoots::new(&settings.allowed_roots, home).map_err(PlanError::AllowedRoots)?;
    let raw_workspace = settings
        .workspace
        .as_deref()
        .ok_or_else(|| PlanError::NoWorkspace {
            agent: run.agent_id.to_owned(),
        })?;
    let workspace =
        check_source(raw_workspace, home, &deny, Some(&roots)).map_err(PlanError::Workspace)?;
    if !workspace.is_dir() {
        return Err(PlanError::WorkspaceNotDirectory { path: workspace });
    }

    let mut skipped = Vec::new();
    let mut user = home_mounts(settings, host, run.agent_id, &deny, &mut skipped)?;
    user.extend(extra_paths(settings, home, &deny, &roots)?);
    let search_path = search_path(settings, home);
    user.push(bind(&workspace, &workspace, true, MountRole::Workspace));
    // Shallowest first, so a deeper mount (the workspace inside an autodocs directory) lands
    // on top; equal depths keep the order above, which puts the workspace last.
    user.sort_by_key(|mount| depth(&mount.dest));
    let mut mounts = system_mounts();
    mounts.extend(user);
    check_mount_points(&mounts)?;
    let layout = Layout::new(mounts);

    for (what, path) in [("working directory", run.cwd), ("program", run.executable)] {
        if !path.is_absolute() || !layout.sees_at_same_path(path) {
            return Err(PlanError::NotVisible {
                what,
                path: path.to_path_buf(),
            });
        }
    }
    let base = BaseEnv::sandbox(home, &host.user, &search_path);
    let mut env = build_env(&base, run.env, &EnvLimits::default())?;
    // What a shell started there would see; bubblewrap sets it to the directory it changes
    // to as well.
    env.set("PWD", run.cwd.to_string_lossy().into_owned());
    let args = arguments(&Invocation {
        layout: &layout,
        network: settings.network,
        features: bwrap.features,
        cwd: run.cwd,
        program: run.executable,
        argv: run.argv,
        env: &env,
    });
    Ok(Plan {
        bwrap: bwrap.path.clone(),
        args,
        env,
        layout,
        skipped,
    })
}

/// bubblewrap creates each mount point and mounts on it following links, as `mount(2)`
/// does. A mount point inside an earlier bind (the workspace inside the agent's persistent
/// home) is therefore reached through a host directory: if anything there is a link (one a
/// sandboxed run left in its home), the mount would land elsewhere, over `/usr/bin` say, and
/// the program bound on the host would not be the one run. Each such path is walked on the
/// host: what exists of it must be plain directories; what is missing bubblewrap creates.
fn check_mount_points(mounts: &[Mount]) -> Result<(), PlanError> {
    for (index, mount) in mounts.iter().enumerate() {
        let parent = mounts
            .get(..index)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|earlier| mount.dest.starts_with(&earlier.dest) && mount.dest != earlier.dest);
        let Some(Mount {
            dest: parent_dest,
            kind: MountKind::Bind { source, .. },
            ..
        }) = parent
        else {
            continue;
        };
        let below = mount
            .dest
            .strip_prefix(parent_dest)
            .unwrap_or(Path::new(""));
        let mut at = source.clone();
        for component in below.components() {
            at.push(component);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(PlanError::MountPointLink {
                        dest: mount.dest.clone(),
                        link: at,
                    });
                }
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => break,
                Err(error) => return Err(state_error(&at, &error.to_string())),
            }
        }
    }
    Ok(())
}

/// Every problem of an agent's `settings` (its mode not `off`) that would refuse each of its
/// sandboxed runs, found without running or creating anything: for `gatehouse doctor` and for
/// `serve` to report at start, each with its key (`workspace`, `allowedRoots`, `extraPaths[i]`,
/// `volumes[i]`). The first refused extra path hides later ones, as in a run.
pub fn check_settings(
    settings: &SandboxSettings,
    host: &HostContext,
    agent_id: &str,
) -> Vec<PlanError> {
    let home = host.home.as_path();
    let deny = DenyList::new(host);
    let mut problems = Vec::new();
    if !is_plain_agent_id(agent_id) {
        problems.push(PlanError::AgentId {
            id: agent_id.to_owned(),
        });
    }
    let roots = match AllowedRoots::new(&settings.allowed_roots, home) {
        Ok(roots) => roots,
        Err(refusal) => {
            problems.push(PlanError::AllowedRoots(refusal));
            return problems;
        }
    };
    match &settings.workspace {
        None => problems.push(PlanError::NoWorkspace {
            agent: agent_id.to_owned(),
        }),
        Some(raw) => match check_source(raw, home, &deny, Some(&roots)) {
            Ok(path) if !path.is_dir() => {
                problems.push(PlanError::WorkspaceNotDirectory { path });
            }
            Ok(_) => {}
            Err(refusal) => problems.push(PlanError::Workspace(refusal)),
        },
    }
    if let Err(problem) = extra_paths(settings, home, &deny, &roots) {
        problems.push(problem);
    }
    if settings.isolation == Isolation::Volumes {
        for (index, raw) in settings.volumes.iter().enumerate() {
            if let Err(refusal) = volume_path(raw, home) {
                problems.push(PlanError::Volume { index, refusal });
            }
        }
    }
    problems
}

/// What the isolation mode puts at the home path, and below it.
fn home_mounts(
    settings: &SandboxSettings,
    host: &HostContext,
    agent_id: &str,
    deny: &DenyList,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<Mount>, PlanError> {
    let home = host.home.as_path();
    let mut mounts = Vec::new();
    match settings.isolation {
        Isolation::Home => {
            let backing = StateDir::new(&host.data_dir, agent_id)?.dir(&["home"])?;
            mounts.push(bind(home, &backing, true, MountRole::Home));
        }
        Isolation::AutodocsRead | Isolation::AutodocsWrite => {
            mounts.push(tmpfs(home));
            let writable = settings.isolation == Isolation::AutodocsWrite;
            for dir in autodocs_dirs(home, deny, skipped) {
                mounts.push(bind(&dir, &dir, writable, MountRole::Autodocs));
            }
        }
        Isolation::Volumes => {
            mounts.push(tmpfs(home));
            let state = StateDir::new(&host.data_dir, agent_id)?;
            for (index, raw) in settings.volumes.iter().enumerate() {
                let volume = volume_path(raw, home)
                    .map_err(|refusal| PlanError::Volume { index, refusal })?;
                let below = volume.strip_prefix(home).unwrap_or(&volume);
                let backing = state.dir(&["volumes", &volume_name(below)])?;
                mounts.push(bind(&volume, &backing, true, MountRole::Volume));
            }
        }
        Isolation::Ephemeral => mounts.push(tmpfs(home)),
    }
    Ok(mounts)
}

/// The `PATH` a sandboxed run under `settings` starts with: the system directories, then each
/// of `extraPaths` in order (a `~/…` one in the sandbox's own home). The runner judges a
/// sandboxed command with this `PATH`, so the policy resolves bare names where the sandbox
/// will; an entry [`plan`] would refuse is left out (the run is refused anyway).
pub fn search_path(settings: &SandboxSettings, home: &Path) -> String {
    let mut search_path = SYSTEM_PATH.to_owned();
    for dir in settings
        .extra_paths
        .iter()
        .filter_map(|raw| expand(raw, home).ok())
    {
        search_path.push(':');
        search_path.push_str(&dir.to_string_lossy());
    }
    search_path
}

/// The extra paths' mounts. A `~/…` entry is in the sandbox's own home and one below `/usr`
/// is mounted already: nothing of the host to add for them. Any other is a host directory to
/// check and mount read-only.
fn extra_paths(
    settings: &SandboxSettings,
    home: &Path,
    deny: &DenyList,
    roots: &AllowedRoots,
) -> Result<Vec<Mount>, PlanError> {
    let mut mounts = Vec::new();
    for (index, raw) in settings.extra_paths.iter().enumerate() {
        let refused = |refusal| PlanError::ExtraPath { index, refusal };
        let dir = expand(raw, home).map_err(refused)?;
        if !raw.starts_with('~') && !is_system_visible(&dir) {
            check_plain_source(&dir, deny, Some(roots)).map_err(refused)?;
            mounts.push(bind(&dir, &dir, false, MountRole::ExtraPath));
        }
    }
    Ok(mounts)
}

fn bind(dest: &Path, source: &Path, writable: bool, role: MountRole) -> Mount {
    Mount {
        dest: dest.to_path_buf(),
        kind: MountKind::Bind {
            source: source.to_path_buf(),
            writable,
        },
        role,
    }
}

fn tmpfs(dest: &Path) -> Mount {
    Mount {
        dest: dest.to_path_buf(),
        kind: MountKind::Tmpfs,
        role: MountRole::Home,
    }
}

/// The real home's top-level directories that are not hidden, not links and pass the mount
/// checks; the others that are directories go to `skipped` with their reason.
fn autodocs_dirs(home: &Path, deny: &DenyList, skipped: &mut Vec<Skipped>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        // The entry's own type: a link to a directory is not a directory here.
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    dirs.sort();
    dirs.retain(|dir| match check_plain_source(dir, deny, None) {
        Ok(()) => true,
        Err(refusal) => {
            skipped.push(Skipped {
                path: dir.clone(),
                refusal,
            });
            false
        }
    });
    dirs
}

/// A volume's path: inside the home, not the home itself.
fn volume_path(raw: &str, home: &Path) -> Result<PathBuf, MountRefusal> {
    let path = expand(raw, home)?;
    if path == home || !path.starts_with(home) {
        return Err(MountRefusal::VolumeOutsideHome {
            path,
            home: home.to_path_buf(),
        });
    }
    Ok(path)
}

/// One directory name per volume, so no volume's backing directory lies inside another's
/// (where the sandbox, writing the outer one, could swap the inner one for a link): `%` and
/// `/` are escaped, which keeps distinct paths distinct.
fn volume_name(below_home: &Path) -> String {
    below_home
        .to_string_lossy()
        .replace('%', "%25")
        .replace('/', "%2F")
}

/// `<data_dir>/sandbox/<agentId>`, where an agent's persistent directories live.
struct StateDir {
    root: PathBuf,
}

impl StateDir {
    fn new(data_dir: &Path, agent_id: &str) -> Result<Self, PlanError> {
        let failed = |path: &Path, error: std::io::Error| PlanError::State {
            path: path.to_path_buf(),
            detail: error.to_string(),
        };
        create_private(data_dir).map_err(|error| failed(data_dir, error))?;
        let data = std::fs::canonicalize(data_dir).map_err(|error| failed(data_dir, error))?;
        Ok(StateDir {
            root: data.join("sandbox").join(agent_id),
        })
    }

    /// Creates (0700) and checks the directory at `parts` below the agent's root: it must be
    /// a directory reached through no link.
    fn dir(&self, parts: &[&str]) -> Result<PathBuf, PlanError> {
        let dir = parts
            .iter()
            .fold(self.root.clone(), |dir, part| dir.join(part));
        create_private(&dir).map_err(|error| PlanError::State {
            path: dir.clone(),
            detail: error.to_string(),
        })?;
        match walk(&dir) {
            Walk::Plain(meta) if meta.is_dir() => Ok(dir),
            Walk::Plain(_) => Err(state_error(&dir, "it is not a directory")),
            Walk::Link(link) => Err(state_error(
                &dir,
                &format!("{} is a symbolic link", link.display()),
            )),
            Walk::Missing(missing) => Err(state_error(
                &dir,
                &format!("{} is missing", missing.display()),
            )),
            Walk::Unreadable(at, error) => {
                Err(state_error(&dir, &format!("{}: {error}", at.display())))
            }
        }
    }
}

fn state_error(path: &Path, detail: &str) -> PlanError {
    PlanError::State {
        path: path.to_path_buf(),
        detail: detail.to_owned(),
    }
}

fn create_private(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_names_are_flat_and_distinct() {
        assert_eq!(volume_name(Path::new(".local/bin")), ".local%2Fbin");
        assert_eq!(volume_name(Path::new(".local%2Fbin")), ".local%252Fbin");
        assert_eq!(volume_name(Path::new(".cache")), ".cache");
    }

    #[test]
    fn a_volume_must_be_below_the_home() {
        let home = Path::new("/home/ann");
        assert_eq!(volume_path("~/.cache", home), Ok("/home/ann/.cache".into()));
        for raw in ["~", "/opt/cache", "/home/annex/x"] {
            assert!(
                matches!(
                    volume_path(raw, home),
                    Err(MountRefusal::VolumeOutsideHome { .. })
                ),
                "{raw}"
            );
        }
    }
}
