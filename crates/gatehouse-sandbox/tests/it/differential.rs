//! The layout against the real thing: for random modes, workspaces and links left in the
//! directories a sandbox mounts, either the plan is refused or every mount is, inside the
//! sandbox, exactly where the layout says and is the host file it says (same device and
//! inode). This is the test that finds a mount landing elsewhere through a link.

use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, symlink};
use std::path::{Path, PathBuf};

use gatehouse_sandbox::{Isolation, MountKind, MountRefusal, PlanError, SandboxSettings};
use proptest::prelude::*;

use crate::support::{Fixture, output};

/// Where a link is left, on the workspace's way.
#[derive(Debug, Clone, Copy)]
enum LinkAt {
    /// In the agent's persistent home (isolation `home`): the first directory below the home
    /// on the workspace's path.
    AgentsHome,
    /// In the real home: the workspace's parent directory.
    RealHome,
}

fn workspace_of(fixture: &Fixture, choice: usize) -> PathBuf {
    match choice {
        0 => fixture.workspace.clone(),
        1 => fixture.home.join("Projects/ws"),
        _ => fixture.home.join("Documents/deep/ws"),
    }
}

fn target_of(fixture: &Fixture, choice: usize) -> PathBuf {
    match choice {
        0 => PathBuf::from("/tmp"),
        1 => PathBuf::from("/usr"),
        _ => fixture.outside.clone(),
    }
}

/// Leaves a link at `at` pointing to `target`, replacing whatever is there.
fn leave_link(fixture: &Fixture, workspace: &Path, at: LinkAt, target: &Path) {
    let Ok(below) = workspace.strip_prefix(&fixture.home) else {
        return; // Not in the home: no directory of the home is on its way.
    };
    let path = match at {
        LinkAt::AgentsHome => {
            let first = below.components().next().unwrap();
            fixture.data.join("sandbox/main/home").join(first)
        }
        LinkAt::RealHome => workspace.parent().unwrap().to_path_buf(),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path.parent().unwrap())
        .unwrap();
    if path.exists() {
        std::fs::rename(&path, path.with_extension("moved")).unwrap();
    }
    symlink(target, &path).unwrap();
}

fn identity(path: &Path) -> String {
    let meta = std::fs::metadata(path).unwrap();
    format!("{} {}", meta.dev(), meta.ino())
}

/// Prints, for each path, `realpath|device inode` as the sandbox sees it.
const WHERE: &str = r#"for p in "$@"; do echo "$(realpath "$p")|$(stat -L -c '%d %i' "$p")"; done"#;

fn check(isolation: Isolation, workspace: usize, link: Option<(LinkAt, usize)>) {
    let fixture = Fixture::new();
    let workspace = workspace_of(&fixture, workspace);
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("file"), "").unwrap();
    if let Some((at, target)) = link {
        leave_link(&fixture, &workspace, at, &target_of(&fixture, target));
    }
    let settings = SandboxSettings {
        workspace: Some(workspace.display().to_string()),
        ..fixture.settings(isolation)
    };
    let probe = fixture.plan_in(&settings, &["true"], &BTreeMap::new(), &workspace);
    let planned = match probe {
        Ok(planned) => planned,
        Err(error) => {
            assert!(link.is_some(), "refused without a link: {error}");
            assert!(
                matches!(
                    error,
                    PlanError::MountPointLink { .. }
                        | PlanError::Workspace(
                            MountRefusal::Symlink { .. } | MountRefusal::Missing { .. }
                        )
                ),
                "{error:?}"
            );
            return;
        }
    };
    let binds: Vec<(PathBuf, PathBuf)> = planned
        .layout()
        .mounts()
        .iter()
        .filter_map(|mount| match &mount.kind {
            MountKind::Bind { source, .. } => Some((mount.dest.clone(), source.clone())),
            _ => None,
        })
        .collect();
    let mut argv = vec!["sh", "-c", WHERE, "sh"];
    let dests: Vec<String> = binds.iter().map(|(d, _)| d.display().to_string()).collect();
    argv.extend(dests.iter().map(String::as_str));
    let run = output(
        &fixture
            .plan_in(&settings, &argv, &BTreeMap::new(), &workspace)
            .unwrap(),
    );
    assert!(
        run.status.success(),
        "{isolation} {link:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen: Vec<String> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let expected: Vec<String> = binds
        .iter()
        .map(|(dest, source)| format!("{}|{}", dest.display(), identity(source)))
        .collect();
    assert_eq!(seen, expected, "{isolation}, link {link:?}");
}

fn link_at() -> impl Strategy<Value = LinkAt> {
    prop_oneof![Just(LinkAt::AgentsHome), Just(LinkAt::RealHome)]
}

proptest! {
    // Each case starts two sandboxes; 64 cases cover the links on the way to a workspace in
    // the agent's home with odds above 0.9.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_mount_is_where_the_layout_says_or_the_plan_is_refused(
        isolation in prop::sample::select(Isolation::ALL.to_vec()),
        workspace in 0usize..3,
        link in prop::option::weighted(0.75, (link_at(), 0usize..3)),
    ) {
        check(isolation, workspace, link);
    }
}

/// The case that found the mount-point check missing, kept as a named regression.
#[test]
fn a_link_in_the_persistent_home_does_not_move_the_workspace() {
    check(Isolation::Home, 1, Some((LinkAt::AgentsHome, 0)));
}
