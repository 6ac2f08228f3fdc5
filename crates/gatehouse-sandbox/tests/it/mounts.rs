//! Mount sources refused with their reason, and the ones allowed doing what they say.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gatehouse_sandbox::{Isolation, MountRefusal, MountRole, PlanError, Relation, SandboxSettings};

use crate::support::Fixture;

fn plan_error(fixture: &Fixture, settings: &SandboxSettings) -> PlanError {
    fixture
        .plan(settings, &["true"], &BTreeMap::new())
        .unwrap_err()
}

fn with_extra_path(fixture: &Fixture, path: &Path) -> SandboxSettings {
    let mut settings = fixture.settings(Isolation::Ephemeral);
    settings.extra_paths = vec!["/usr/local/bin".into(), path.display().to_string()];
    settings
}

fn with_workspace(fixture: &Fixture, path: &Path) -> SandboxSettings {
    let mut settings = fixture.settings(Isolation::Ephemeral);
    settings.workspace = Some(path.display().to_string());
    settings
}

fn denied(error: &PlanError) -> (&Path, Relation) {
    let refusal = match error {
        PlanError::ExtraPath { refusal, .. } | PlanError::Workspace(refusal) => refusal,
        other => panic!("{other:?}"),
    };
    match refusal {
        MountRefusal::Denied {
            denied, relation, ..
        } => (denied.as_path(), *relation),
        other => panic!("{other:?}"),
    }
}

#[test]
fn refuses_system_directories_and_runtime_sockets_as_extra_paths() {
    let fixture = Fixture::new();
    let error = plan_error(&fixture, &with_extra_path(&fixture, Path::new("/etc")));
    assert!(
        matches!(error, PlanError::ExtraPath { index: 1, .. }),
        "{error:?}"
    );
    assert_eq!(denied(&error), (Path::new("/etc"), Relation::Is));
    assert!(
        error
            .to_string()
            .starts_with("extraPaths[1]: /etc is /etc, a system directory")
    );
    for (path, expected) in [
        ("/var/run/docker.sock", "/var/run/docker.sock"),
        ("/run/containerd", "/run/containerd"),
        ("/run/dbus/system_bus_socket", "/run/dbus"),
        ("/proc/self", "/proc"),
    ] {
        let error = plan_error(&fixture, &with_extra_path(&fixture, Path::new(path)));
        assert_eq!(denied(&error).0, Path::new(expected), "{path}");
    }
}

#[test]
fn refuses_credentials_the_gateways_state_and_the_home_itself_as_workspace() {
    let fixture = Fixture::new();
    let ssh = fixture.home.join(".ssh");
    let error = plan_error(&fixture, &with_workspace(&fixture, &ssh));
    assert_eq!(denied(&error), (ssh.as_path(), Relation::Is));
    assert_eq!(
        error.to_string(),
        format!(
            "workspace: {0} is {0}, where keys, tokens and cloud credentials are kept",
            ssh.display()
        )
    );
    let error = plan_error(&fixture, &with_workspace(&fixture, &fixture.home));
    assert_eq!(denied(&error), (ssh.as_path(), Relation::Contains));
    let error = plan_error(&fixture, &with_workspace(&fixture, &fixture.data));
    assert_eq!(denied(&error), (fixture.data.as_path(), Relation::Is));
    let error = plan_error(&fixture, &with_workspace(&fixture, &fixture.root));
    assert_eq!(denied(&error).1, Relation::Contains);
    let error = plan_error(&fixture, &with_workspace(&fixture, Path::new("/")));
    assert_eq!(error, PlanError::Workspace(MountRefusal::Root));
}

#[test]
fn refuses_a_symlinked_source_and_one_outside_the_allowed_roots() {
    let fixture = Fixture::new();
    let link = fixture.home.join("LinkToOutside");
    let error = plan_error(&fixture, &with_extra_path(&fixture, &link.join("sub")));
    let PlanError::ExtraPath {
        refusal: MountRefusal::Symlink { link: at, real, .. },
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(at, &link);
    assert_eq!(real, &None, "sub does not exist behind the link");
    assert!(error.to_string().contains("is a symbolic link"), "{error}");

    let mut settings = with_workspace(&fixture, &fixture.outside);
    settings.allowed_roots = vec![fixture.workspace.display().to_string()];
    let error = plan_error(&fixture, &settings);
    assert!(
        matches!(&error, PlanError::Workspace(MountRefusal::OutsideAllowedRoots { path, .. }) if *path == fixture.outside),
        "{error:?}"
    );
    // The defaults do not include the temporary directory the fixture lives in.
    let mut defaults = with_workspace(&fixture, &fixture.workspace);
    defaults.allowed_roots = gatehouse_sandbox::DEFAULT_ALLOWED_ROOTS
        .map(String::from)
        .to_vec();
    assert!(matches!(
        plan_error(&fixture, &defaults),
        PlanError::Workspace(MountRefusal::OutsideAllowedRoots { .. })
    ));
}

#[test]
fn refuses_a_volume_outside_the_home_and_a_missing_workspace() {
    let fixture = Fixture::new();
    let mut settings = fixture.settings(Isolation::Volumes);
    settings.volumes = vec!["~/.cache".into(), "/opt/cache".into()];
    let error = plan_error(&fixture, &settings);
    assert!(
        matches!(
            error,
            PlanError::Volume {
                index: 1,
                refusal: MountRefusal::VolumeOutsideHome { .. }
            }
        ),
        "{error:?}"
    );
    let mut settings = fixture.settings(Isolation::Home);
    settings.workspace = None;
    assert_eq!(
        plan_error(&fixture, &settings).to_string(),
        "agent \"main\" runs sandboxed but has no workspace: set `agents.list[].workspace` or \
         `agents.defaults.workspace`"
    );
    let missing = fixture.root.join("gone");
    assert!(matches!(
        plan_error(&fixture, &with_workspace(&fixture, &missing)),
        PlanError::Workspace(MountRefusal::Missing { .. })
    ));
}

#[test]
fn an_extra_path_is_read_only_and_on_path() {
    let fixture = Fixture::new();
    let tools = fixture.outside.join("bin");
    std::fs::create_dir(&tools).unwrap();
    let tool = tools.join("hello-tool");
    std::fs::write(&tool, "#!/bin/sh\necho hello from the tool\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = with_extra_path(&fixture, &tools);
    let seen = fixture.sh_ok(
        &settings,
        "hello-tool; if touch \"$(command -v hello-tool)\" 2>/dev/null; then echo writable; fi",
    );
    assert_eq!(seen, "hello from the tool\n");
    let planned = fixture
        .plan(&settings, &["true"], &BTreeMap::new())
        .unwrap();
    let path = &planned.env().vars()["PATH"];
    assert!(
        path.ends_with(&format!(":/usr/local/bin:{}", tools.display())),
        "{path}"
    );
    let roles: Vec<(PathBuf, MountRole)> = planned
        .layout()
        .mounts()
        .iter()
        .filter(|mount| mount.role == MountRole::ExtraPath)
        .map(|mount| (mount.dest.clone(), mount.role))
        .collect();
    assert_eq!(
        roles,
        [(tools, MountRole::ExtraPath)],
        "/usr/local/bin needs no mount"
    );
}

#[test]
fn autodocs_leaves_out_what_it_must_not_mount_and_says_why() {
    let fixture = Fixture::new();
    // A data directory kept in a visible home directory is still the gateway's.
    let mut host = fixture.host.clone();
    host.data_dir = fixture.home.join("Projects");
    let settings = fixture.settings(Isolation::AutodocsRead);
    let argv = vec!["true".to_owned()];
    let planned = gatehouse_sandbox::plan(
        &settings,
        &host,
        crate::support::bwrap(),
        &gatehouse_sandbox::RunRequest {
            agent_id: "main",
            executable: &crate::support::resolve("true"),
            argv: &argv,
            cwd: &fixture.workspace,
            env: &BTreeMap::new(),
        },
    )
    .unwrap();
    let skipped: Vec<&Path> = planned.skipped().iter().map(|s| s.path.as_path()).collect();
    assert_eq!(skipped, [fixture.home.join("Projects").as_path()]);
    assert!(matches!(
        planned.skipped()[0].refusal,
        MountRefusal::Denied {
            relation: Relation::Is,
            ..
        }
    ));
    let autodocs: Vec<&Path> = planned
        .layout()
        .mounts()
        .iter()
        .filter(|mount| mount.role == MountRole::Autodocs)
        .map(|mount| mount.dest.as_path())
        .collect();
    // Not `.ssh` (hidden), not `LinkToOutside` (a link), not `Projects` (the data directory).
    assert_eq!(autodocs, [fixture.home.join("Documents").as_path()]);
}

#[test]
fn refuses_an_agent_id_that_cannot_name_a_directory() {
    let fixture = Fixture::new();
    let argv = vec!["true".to_owned()];
    for id in ["../main", "a/b", "", ".hidden"] {
        let error = gatehouse_sandbox::plan(
            &fixture.settings(Isolation::Home),
            &fixture.host,
            crate::support::bwrap(),
            &gatehouse_sandbox::RunRequest {
                agent_id: id,
                executable: &crate::support::resolve("true"),
                argv: &argv,
                cwd: &fixture.workspace,
                env: &BTreeMap::new(),
            },
        )
        .unwrap_err();
        assert_eq!(error, PlanError::AgentId { id: id.to_owned() });
    }
    assert!(!fixture.data.join("sandbox").exists());
}

/// The workspace inside the real home, under isolation `home`: the sandbox sees it at its
/// path, inside the agent's own home.
#[test]
fn a_workspace_inside_the_home_is_mounted_into_the_agents_own_home() {
    let fixture = Fixture::new();
    let workspace = fixture.home.join("Projects/ws");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("file"), "in the workspace\n").unwrap();
    let settings = with_workspace_in(&fixture, Isolation::Home, &workspace);
    let planned = fixture
        .plan_in(&settings, &["cat", "file"], &BTreeMap::new(), &workspace)
        .unwrap();
    let run = crate::support::output(&planned);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "in the workspace\n");
    // bubblewrap made the mount point in the agent's home, not in the real one.
    assert!(fixture.data.join("sandbox/main/home/Projects/ws").is_dir());
}

/// Security review: a sandboxed run could leave a link in its persistent home where a later
/// run mounts the workspace (`~/Projects -> /usr`), and bubblewrap, mounting through it, would
/// put the workspace elsewhere (over a directory of programs the binding trusts).
#[test]
fn a_link_a_run_left_where_the_workspace_is_mounted_is_refused() {
    let fixture = Fixture::new();
    let workspace = fixture.home.join("Projects/ws");
    std::fs::create_dir(&workspace).unwrap();
    let settings = with_workspace_in(&fixture, Isolation::Home, &workspace);
    let planned = fixture
        .plan_in(
            &settings,
            &[
                "sh",
                "-c",
                "cd / && mv ~/Projects ~/Moved && ln -s /usr ~/Projects",
            ],
            &BTreeMap::new(),
            &workspace,
        )
        .unwrap();
    let run = crate::support::output(&planned);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let link = fixture.data.join("sandbox/main/home/Projects");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let error = fixture
        .plan_in(&settings, &["true"], &BTreeMap::new(), &workspace)
        .unwrap_err();
    assert_eq!(
        error,
        PlanError::MountPointLink {
            dest: workspace.clone(),
            link
        }
    );
}

fn with_workspace_in(fixture: &Fixture, isolation: Isolation, path: &Path) -> SandboxSettings {
    let mut settings = fixture.settings(isolation);
    settings.workspace = Some(path.display().to_string());
    settings
}

/// `gatehouse doctor`'s review: every problem at once, nothing created.
#[test]
fn checking_settings_lists_every_problem_without_creating_anything() {
    let fixture = Fixture::new();
    let mut settings = fixture.settings(Isolation::Volumes);
    assert_eq!(
        gatehouse_sandbox::check_settings(&settings, &fixture.host, "main"),
        []
    );
    settings.workspace = Some(fixture.home.display().to_string());
    settings.extra_paths = vec!["/etc".into()];
    settings.volumes = vec!["~/.cache".into(), "/opt/cache".into()];
    let problems = gatehouse_sandbox::check_settings(&settings, &fixture.host, "a/b");
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 4, "{shown:#?}");
    assert!(
        shown[0].starts_with("agent id \"a/b\" cannot name"),
        "{}",
        shown[0]
    );
    assert!(shown[1].starts_with("workspace: "), "{}", shown[1]);
    assert!(
        shown[2].starts_with("extraPaths[0]: /etc is /etc"),
        "{}",
        shown[2]
    );
    assert!(
        shown[3].starts_with("volumes[1]: volume /opt/cache"),
        "{}",
        shown[3]
    );
    settings.workspace = None;
    assert_eq!(
        gatehouse_sandbox::check_settings(&settings, &fixture.host, "main")[0],
        PlanError::NoWorkspace {
            agent: "main".into()
        }
    );
    assert!(!fixture.data.join("sandbox").exists());
}
