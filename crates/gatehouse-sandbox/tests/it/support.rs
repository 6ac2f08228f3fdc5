//! A host to sandbox: a home with visible and hidden directories, a workspace, a directory
//! outside both, and the gateway's data directory, all under one temporary root, run through
//! the real bubblewrap.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;

use gatehouse_sandbox::{
    Bubblewrap, BwrapBinary, HostContext, Isolation, Plan, PlanError, RunRequest, SandboxMode,
    SandboxSettings, plan, probe,
};

/// bubblewrap, located once; the tests need one that works and say why when it does not.
pub(crate) fn bwrap() -> &'static Bubblewrap {
    static BWRAP: OnceLock<Bubblewrap> = OnceLock::new();
    BWRAP.get_or_init(|| {
        let path = std::env::var_os("PATH");
        let report = probe(&BwrapBinary::OnPath, path.as_deref());
        assert!(
            report.is_ok(),
            "these tests run the real bubblewrap (.ci/run installs it): {report}"
        );
        report.bubblewrap.unwrap()
    })
}

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) workspace: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) data: PathBuf,
    pub(crate) host: HostContext,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let workspace = root.join("work");
        let outside = root.join("outside");
        let data = root.join("data");
        for sub in [
            "home/Documents",
            "home/Projects",
            "home/.ssh",
            "home/.secret-dir",
            "work",
            "outside",
            "data",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(home.join("Documents/readme.txt"), "visible\n").unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE\n").unwrap();
        std::fs::write(home.join(".profile"), "hidden file\n").unwrap();
        std::fs::write(outside.join("file"), "outside\n").unwrap();
        symlink(&outside, home.join("LinkToOutside")).unwrap();
        let host = HostContext {
            home: home.clone(),
            user: "ann".into(),
            data_dir: data.clone(),
            protected: vec![],
        };
        Fixture {
            _dir: dir,
            root,
            home,
            workspace,
            outside,
            data,
            host,
        }
    }

    /// Sandboxed settings with this fixture's workspace, allowing mounts from its root.
    pub(crate) fn settings(&self, isolation: Isolation) -> SandboxSettings {
        SandboxSettings {
            mode: SandboxMode::All,
            isolation,
            workspace: Some(self.workspace.display().to_string()),
            allowed_roots: vec![self.root.display().to_string()],
            volumes: vec!["~/.cache".into()],
            ..SandboxSettings::default()
        }
    }

    /// Plans `argv` in the workspace, its program resolved as the runner resolves it.
    pub(crate) fn plan(
        &self,
        settings: &SandboxSettings,
        argv: &[&str],
        env: &BTreeMap<String, String>,
    ) -> Result<Plan, PlanError> {
        self.plan_in(settings, argv, env, &self.workspace)
    }

    pub(crate) fn plan_in(
        &self,
        settings: &SandboxSettings,
        argv: &[&str],
        env: &BTreeMap<String, String>,
        cwd: &Path,
    ) -> Result<Plan, PlanError> {
        let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
        let program = resolve(&argv[0]);
        plan(
            settings,
            &self.host,
            bwrap(),
            &RunRequest {
                agent_id: "main",
                executable: &program,
                argv: &argv,
                cwd,
                env,
            },
        )
    }

    /// Runs `script` under `sh -c` in the sandbox and returns its output.
    pub(crate) fn sh(&self, settings: &SandboxSettings, script: &str) -> Output {
        let planned = self
            .plan(settings, &["sh", "-c", script], &BTreeMap::new())
            .unwrap();
        output(&planned)
    }

    /// [`Fixture::sh`], requiring success, returning stdout.
    pub(crate) fn sh_ok(&self, settings: &SandboxSettings, script: &str) -> String {
        let output = self.sh(settings, script);
        assert!(
            output.status.success(),
            "{script}: {}\nstderr: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }
}

/// A program's real path: `PATH` lookup for a bare name, then every link resolved, as the
/// runner spawns it.
pub(crate) fn resolve(program: &str) -> PathBuf {
    let found = if program.contains('/') {
        PathBuf::from(program)
    } else {
        ["/usr/bin", "/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(program))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("{program} is not installed"))
    };
    std::fs::canonicalize(found).unwrap()
}

/// Runs a plan to completion, capturing its output.
pub(crate) fn output(planned: &Plan) -> Output {
    planned
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}
