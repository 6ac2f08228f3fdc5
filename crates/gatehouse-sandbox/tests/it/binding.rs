//! The binding is checked on host paths; the sandbox must see those same files (the same
//! inode, through the bind mount) at those same paths, or the run is refused.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use gatehouse_policy::binding::{Binding, BindingField, BindingInput};
use gatehouse_sandbox::{Isolation, PlanError};

use crate::support::{Fixture, output, resolve};

/// `device inode` of `path` as the sandbox's `stat` sees it.
fn identity_inside(fixture: &Fixture, isolation: Isolation, path: &Path) -> String {
    let script = format!("stat -L -c '%d %i' '{}'", path.display());
    fixture
        .sh_ok(&fixture.settings(isolation), &script)
        .trim()
        .to_owned()
}

fn identity_on_host(path: &Path) -> String {
    let meta = std::fs::metadata(path).unwrap();
    format!("{} {}", meta.dev(), meta.ino())
}

#[test]
fn the_sandbox_sees_the_workspace_file_the_binding_checked_at_its_path() {
    let fixture = Fixture::new();
    let script = fixture.workspace.join("deploy.sh");
    std::fs::write(&script, "echo deploy\n").unwrap();
    for isolation in [
        Isolation::Home,
        Isolation::AutodocsRead,
        Isolation::Ephemeral,
    ] {
        let planned = fixture
            .plan(&fixture.settings(isolation), &["true"], &BTreeMap::new())
            .unwrap();
        assert!(planned.layout().sees_at_same_path(&script));
        assert_eq!(
            planned.layout().to_sandbox(&script).as_deref(),
            Some(script.as_path())
        );
        assert_eq!(
            identity_inside(&fixture, isolation, &script),
            identity_on_host(&script),
            "{isolation}"
        );
    }
    // The program too: the same file the runner resolved and bound.
    let sh = resolve("sh");
    assert_eq!(
        identity_inside(&fixture, Isolation::Ephemeral, &sh),
        identity_on_host(&sh)
    );
}

#[test]
fn the_isolated_home_maps_to_its_backing_directory_and_back() {
    let fixture = Fixture::new();
    let settings = fixture.settings(Isolation::Home);
    fixture.sh_ok(&settings, "echo 'echo mine' > ~/tool.sh");
    let planned = fixture
        .plan(&settings, &["true"], &BTreeMap::new())
        .unwrap();
    let inside = fixture.home.join("tool.sh");
    let backing = fixture.data.join("sandbox/main/home/tool.sh");
    assert_eq!(
        planned.layout().to_host(&inside).as_deref(),
        Some(backing.as_path())
    );
    assert_eq!(
        planned.layout().to_sandbox(&backing).as_deref(),
        Some(inside.as_path())
    );
    assert_eq!(
        identity_inside(&fixture, Isolation::Home, &inside),
        identity_on_host(&backing)
    );
    // The host's file at that path is another one, which the sandbox does not see.
    assert!(!planned.layout().sees_at_same_path(&inside));
    assert_eq!(
        planned
            .layout()
            .to_sandbox(&fixture.home.join(".ssh/id_ed25519")),
        None
    );
}

#[test]
fn a_program_or_directory_the_sandbox_sees_elsewhere_is_refused() {
    let fixture = Fixture::new();
    let settings = fixture.settings(Isolation::Home);
    // A program in the real home: the sandbox has the agent's own home at that path.
    let tool = fixture.home.join("Documents/tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    let error = fixture
        .plan(&settings, &[tool.to_str().unwrap()], &BTreeMap::new())
        .unwrap_err();
    assert_eq!(
        error,
        PlanError::NotVisible {
            what: "program",
            path: tool.clone()
        }
    );
    assert!(
        error
            .to_string()
            .contains("cannot be bound to what it would execute")
    );
    let error = fixture
        .plan_in(&settings, &["true"], &BTreeMap::new(), &fixture.outside)
        .unwrap_err();
    assert_eq!(
        error,
        PlanError::NotVisible {
            what: "working directory",
            path: fixture.outside.clone()
        }
    );
}

/// `sh ~/deploy.sh` under isolation `home`: the approval binds the real home's script, the
/// sandbox would run the agent's own; the runner's check of each program file refuses it.
#[test]
fn a_program_file_the_sandbox_sees_elsewhere_is_refused() {
    let fixture = Fixture::new();
    let real = fixture.home.join("deploy.sh");
    std::fs::write(&real, "echo approved\n").unwrap();
    let settings = fixture.settings(Isolation::Home);
    fixture.sh_ok(&settings, "echo 'echo the agents own' > ~/deploy.sh");
    let argv = ["sh", real.to_str().unwrap()];
    let planned = fixture.plan(&settings, &argv, &BTreeMap::new()).unwrap();
    assert_eq!(
        planned.require_same_file(&real),
        Err(PlanError::NotVisible {
            what: "program file",
            path: real.clone()
        })
    );
    // What it would have run instead:
    let run = output(&planned);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "the agents own\n");
    let in_workspace = fixture.workspace.join("deploy.sh");
    std::fs::write(&in_workspace, "echo approved\n").unwrap();
    assert_eq!(planned.require_same_file(&in_workspace), Ok(()));
    assert!(
        planned.require_same_file(Path::new("deploy.sh")).is_err(),
        "relative"
    );
}

/// A script approved on the host and then edited from inside a sandbox, through the
/// workspace mount: the binding taken on the host path sees the edit, so the next run of it
/// is refused as a mismatch.
#[test]
fn an_edit_made_through_the_mount_is_a_binding_mismatch_on_the_host() {
    let fixture = Fixture::new();
    let script = fixture.workspace.join("deploy.sh");
    std::fs::write(&script, "echo deploy\n").unwrap();
    let argv = vec!["sh".to_owned(), "deploy.sh".to_owned()];
    let env = BTreeMap::new();
    let sh = resolve("sh");
    let input = BindingInput {
        cwd: &fixture.workspace,
        argv: &argv,
        env: &env,
        agent_id: "main",
        session_key: "agent:main:telegram:group:1",
        resolved_executable: &sh,
    };
    let approved = Binding::compute(&input).unwrap();
    approved.verify(&input).unwrap();
    fixture.sh_ok(
        &fixture.settings(Isolation::Ephemeral),
        "echo 'echo edited' >> deploy.sh",
    );
    let mismatch = approved.verify(&input).unwrap_err();
    assert_eq!(mismatch.field, BindingField::Script);
    // And the run itself executes the edited file: the sandbox and the host share it.
    let planned = fixture
        .plan(
            &fixture.settings(Isolation::Ephemeral),
            &["sh", "deploy.sh"],
            &env,
        )
        .unwrap();
    let run = output(&planned);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "deploy\nedited\n");
}
