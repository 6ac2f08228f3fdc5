//! What a sandbox costs a run: `/bin/true` started under bubblewrap (isolations `ephemeral`
//! and `home`, planning included) against the same `/bin/true` started on the host with the
//! host runner's built environment, measured in the same run, so the figure holds as a ratio
//! on a noisy shared machine. Planning alone (validation, the layout, the environment) and
//! bubblewrap's floor (a user namespace and `/usr`, nothing else) are measured too, to show
//! what of the cost is ours and what is bubblewrap's. (The floor assumes a merged-`/usr`
//! host, as Debian's.)
//!
//! Besides criterion's report the bench prints the median and p90 of single runs from
//! criterion's measurement phase and their ratio to the host run; figures go to
//! `docs/performance.md` ("Sandboxed run").
//!
//! Run: `cargo bench -p gatehouse-sandbox --bench spawn -- --warm-up-time 1 --measurement-time 5`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use gatehouse_sandbox::{
    BaseEnv, Bubblewrap, BwrapBinary, EnvLimits, HostContext, Isolation, RunRequest, SandboxMode,
    SandboxSettings, build_env, plan,
};

/// Samples criterion takes; the last this many batches are its measurement phase.
const SAMPLES: usize = 20;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    workspace: PathBuf,
    host: HostContext,
    bwrap: Bubblewrap,
    program: PathBuf,
    argv: Vec<String>,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for sub in ["home/Documents", "work", "data"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let host = HostContext {
            home: root.join("home"),
            user: "bench".into(),
            data_dir: root.join("data"),
            protected: vec![],
        };
        let path = std::env::var_os("PATH");
        let bwrap = Bubblewrap::locate(&BwrapBinary::OnPath, path.as_deref()).unwrap();
        Fixture {
            _dir: dir,
            program: std::fs::canonicalize("/bin/true").unwrap(),
            argv: vec!["true".to_owned()],
            workspace: root.join("work"),
            root,
            host,
            bwrap,
        }
    }

    fn settings(&self, isolation: Isolation) -> SandboxSettings {
        SandboxSettings {
            mode: SandboxMode::All,
            isolation,
            workspace: Some(self.workspace.display().to_string()),
            allowed_roots: vec![self.root.display().to_string()],
            ..SandboxSettings::default()
        }
    }

    fn request(&self) -> RunRequest<'_> {
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        RunRequest {
            agent_id: "main",
            executable: &self.program,
            argv: &self.argv,
            cwd: &self.workspace,
            env: &EMPTY,
        }
    }

    /// One sandboxed run, planned and started, to its exit.
    fn sandboxed(&self, settings: &SandboxSettings) -> Duration {
        let started = Instant::now();
        let planned = plan(settings, &self.host, &self.bwrap, &self.request()).unwrap();
        run_to_exit(started, planned.command())
    }

    /// The same run on the host, as the host runner will start it.
    fn on_host(&self) -> Duration {
        let started = Instant::now();
        let env = build_env(
            &BaseEnv::host(std::env::vars_os()),
            &BTreeMap::new(),
            &EnvLimits::default(),
        )
        .unwrap();
        let mut command = Command::new(&self.program);
        env.apply(&mut command);
        command.current_dir(&self.workspace);
        run_to_exit(started, command)
    }

    /// bubblewrap's floor here: a user namespace and `/usr` only, no plan.
    fn bare_bwrap(&self) -> Duration {
        let started = Instant::now();
        let mut command = Command::new(&self.bwrap.path);
        command
            .args(["--unshare-user", "--ro-bind", "/usr", "/usr"])
            .args([
                "--symlink",
                "usr/lib",
                "/lib",
                "--symlink",
                "usr/lib64",
                "/lib64",
            ])
            .arg(&self.program)
            .env_clear();
        run_to_exit(started, command)
    }

    /// Planning only.
    fn planning(&self, settings: &SandboxSettings) -> Duration {
        let started = Instant::now();
        let planned = plan(settings, &self.host, &self.bwrap, &self.request()).unwrap();
        let elapsed = started.elapsed();
        std::hint::black_box(planned);
        elapsed
    }
}

/// Runs `command` with no input or output and returns the time since `started` when it has
/// exited, successfully.
fn run_to_exit(started: Instant, mut command: Command) -> Duration {
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(status.success());
    elapsed
}

/// One measured thing: a closure timing one run.
type Scenario<'a> = Box<dyn Fn() -> Duration + 'a>;

/// Median and p90 of single runs in criterion's measurement phase.
struct Figures {
    median: Duration,
    p90: Duration,
}

impl Figures {
    fn of(batches: &[Vec<Duration>]) -> Option<Self> {
        let skip = batches.len().saturating_sub(SAMPLES);
        let mut all: Vec<Duration> = batches[skip..].iter().flatten().copied().collect();
        if all.is_empty() {
            return None;
        }
        all.sort_unstable();
        let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
        Some(Figures {
            median: at(0.5),
            p90: at(0.9),
        })
    }
}

fn bench_spawn(c: &mut Criterion) {
    let fixture = Fixture::new();
    let ephemeral = fixture.settings(Isolation::Ephemeral);
    let home = fixture.settings(Isolation::Home);
    let scenarios: Vec<(&str, Scenario<'_>)> = vec![
        ("host: /bin/true", Box::new(|| fixture.on_host())),
        (
            "bare bwrap: userns + /usr",
            Box::new(|| fixture.bare_bwrap()),
        ),
        (
            "sandbox ephemeral: /bin/true",
            Box::new(|| fixture.sandboxed(&ephemeral)),
        ),
        (
            "sandbox home: /bin/true",
            Box::new(|| fixture.sandboxed(&home)),
        ),
        (
            "planning only (ephemeral)",
            Box::new(|| fixture.planning(&ephemeral)),
        ),
    ];
    let mut group = c.benchmark_group("spawn");
    group.sample_size(SAMPLES);
    let mut results = Vec::new();
    for (name, run) in &scenarios {
        run();
        let mut batches: Vec<Vec<Duration>> = Vec::new();
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let batch: Vec<Duration> = (0..iters).map(|_| run()).collect();
                let total = batch.iter().sum();
                batches.push(batch);
                total
            })
        });
        results.push((*name, Figures::of(&batches)));
    }
    group.finish();
    report(&results);
}

/// Prints median, p90 and the ratio to the host run.
fn report(results: &[(&str, Option<Figures>)]) {
    let baseline = results
        .first()
        .and_then(|(_, figures)| figures.as_ref().map(|f| f.median));
    println!(
        "\n{:<32} {:>10} {:>10} {:>8}",
        "scenario", "median", "p90", "× host"
    );
    for (name, figures) in results {
        let Some(figures) = figures else { continue };
        let ratio = baseline.map_or_else(
            || "n/a".to_owned(),
            |b| format!("{:.2}", figures.median.as_secs_f64() / b.as_secs_f64()),
        );
        println!(
            "{name:<32} {:>10.3?} {:>10.3?} {ratio:>8}",
            figures.median, figures.p90
        );
    }
}

criterion_group!(benches, bench_spawn);
criterion_main!(benches);
