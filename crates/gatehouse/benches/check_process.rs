//! Start-to-exit wall time of a whole `gatehouse check` process, the cost an agent host pays
//! when it runs the binary as a per-call hook (issue 2's budget: under 5 ms median). Spawning
//! `/bin/true` in the same run is the baseline: what creating any process costs here, so the
//! figures hold as ratios even on a noisy shared machine.
//!
//! Cargo builds the release binary for this bench (`CARGO_BIN_EXE_gatehouse`), so it measures
//! what ships. Besides criterion's report, the bench prints the median and p90 of single
//! spawns in criterion's measurement phase and their ratio to the baseline; figures go to
//! `docs/performance.md` ("`gatehouse check` process").
//!
//! Run: `cargo bench -p gatehouse --bench check_process -- --warm-up-time 1 --measurement-time 5`

// Setup failures are bench failures; a panic says exactly where.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

/// The binary under test, built by Cargo with the bench's (release) profile.
const GATEHOUSE: &str = env!("CARGO_BIN_EXE_gatehouse");
/// Process creation alone: the floor under every other figure.
const BASELINE: &str = "/bin/true";
/// Samples criterion takes; the last this many batches of spawns are its measurement phase.
const SAMPLES: usize = 20;
/// Lines of the large `--jsonl` batch; a one-line batch is measured too, and the difference
/// divided by the extra lines is the cost of one more line.
const BATCH_LINES: usize = 200;

/// Exit statuses of `gatehouse check` (issue 2's interface).
const EXIT_ALLOW: i32 = 0;
const EXIT_ASK: i32 = 10;
const EXIT_DENY: i32 = 20;

/// A deployment-sized config: exec settings, an unattended agent that may not ask, and the
/// sections `check` does not use but must still parse and validate.
const CONFIG: &str = r#"{
  tools: {
    profile: "coding",
    deny: ["gateway", "nodes"],
    exec: {
      security: "allowlist",
      ask: "on-miss",
      askFallback: "deny",
      safeBins: ["jq", "head", "tail", "wc", "cut", "tr", "uniq"],
      strictInlineEval: true,
    },
  },
  agents: {
    defaults: { elevatedDefault: "off" },
    list: [
      { id: "main", default: true },
      // Runs unattended: nothing may wait for a person, so a refusal is a deny.
      { id: "ci", tools: { exec: { ask: "off" } } },
    ],
  },
  gateway: {
    listen: "127.0.0.1:18789",
    auth: { tokens: [{ name: "agent-host", tokenEnv: "GATEHOUSE_AGENT_TOKEN", scopes: ["agent"] }] },
  },
  approvals: { exec: { enabled: true, mode: "session" } },
}"#;

/// One measured invocation.
struct Scenario {
    name: &'static str,
    program: &'static str,
    args: Vec<String>,
    /// `PATH` of the child: the fixture's programs are found through it, as an agent host's
    /// would be.
    search_path: String,
    /// File fed to stdin (`--jsonl` batches); stdin is empty otherwise.
    stdin: Option<PathBuf>,
    expected_exit: i32,
}

impl Scenario {
    fn command(&self) -> Command {
        let mut command = Command::new(self.program);
        command
            .args(&self.args)
            .env("PATH", &self.search_path)
            .stdout(Stdio::null());
        match &self.stdin {
            Some(path) => command.stdin(File::open(path).unwrap()),
            None => command.stdin(Stdio::null()),
        };
        command
    }

    /// Runs once outside the timing and checks the decision, so the bench cannot time a
    /// usage error or a changed verdict.
    fn verify(&self) {
        let output = self.command().stdout(Stdio::piped()).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(self.expected_exit),
            "{}: {stdout}{}",
            self.name,
            String::from_utf8_lossy(&output.stderr)
        );
        if let Some(path) = &self.stdin {
            let requests = fs::read_to_string(path).unwrap().lines().count();
            assert_eq!(stdout.lines().count(), requests, "{}: {stdout}", self.name);
        }
    }

    /// Spawns `iters` processes one after another and returns each one's wall time.
    fn spawn_batch(&self, iters: u64) -> Vec<Duration> {
        (0..iters)
            .map(|_| {
                let mut command = self.command();
                let start = Instant::now();
                let status = command.status().unwrap();
                let elapsed = start.elapsed();
                assert_eq!(status.code(), Some(self.expected_exit), "{}", self.name);
                elapsed
            })
            .collect()
    }
}

/// Median and p90 of single spawns.
struct Figures {
    median: Duration,
    p90: Duration,
}

impl Figures {
    /// Criterion calls the routine for warm-up first, then once per sample: the last
    /// `SAMPLES` batches are the measurement phase.
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

/// Temp dir with two programs, `tool` (allowlisted) and `other` (not), the config and the
/// approvals file.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(root.join("bin")).unwrap();
        for program in ["tool", "other"] {
            let path = root.join("bin").join(program);
            fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::write(root.join("gatehouse.json5"), CONFIG).unwrap();
        let tool = root.join("bin/tool").display().to_string();
        let approvals = serde_json::json!({
            "version": 1,
            "defaults": { "security": "allowlist", "ask": "on-miss", "askFallback": "deny" },
            "agents": {
                "*": { "allowlist": [{ "pattern": "/usr/bin/uname" }] },
                "main": { "allowlist": [
                    { "pattern": "/usr/bin/git" },
                    { "pattern": "/usr/bin/rg", "argPattern": "^-n " },
                    { "pattern": "~/bin/*" },
                    { "pattern": tool },
                ] },
                // The host agrees that `ci` never asks; the stricter side would win otherwise.
                "ci": { "ask": "off", "allowlist": [{ "pattern": tool }] },
            },
        });
        fs::write(root.join("exec-approvals.json"), approvals.to_string()).unwrap();
        Fixture { _dir: dir, root }
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    /// `--config` and `--approvals` for the fixture's files.
    fn sources(&self) -> Vec<String> {
        vec![
            "--config".to_owned(),
            self.path("gatehouse.json5"),
            "--approvals".to_owned(),
            self.path("exec-approvals.json"),
        ]
    }

    /// The PATH the agent's commands run with: the fixture's programs first.
    fn search_path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.path("bin"))
    }

    /// A `--jsonl` batch of `lines` requests cycling allow, ask and deny cases.
    fn batch(&self, lines: usize) -> PathBuf {
        let path = self.root.join(format!("batch-{lines}.jsonl"));
        let commands = [
            ("tool --flag | head -n 5", "main"),
            ("other --flag", "main"),
            ("tool --flag > out.txt", "ci"),
            ("jq -r .name | wc -l", "main"),
            ("sh -c 'tool -x && other -y'", "main"),
        ];
        let text: String = (0..lines)
            .map(|i| {
                let (command, agent) = commands[i % commands.len()];
                let request = serde_json::json!({
                    "command": command,
                    "agent": agent,
                    "env": { "PATH": self.search_path() },
                });
                format!("{request}\n")
            })
            .collect();
        fs::write(&path, text).unwrap();
        path
    }

    /// `gatehouse check --json <args>`.
    fn check(&self, name: &'static str, args: Vec<String>, expected_exit: i32) -> Scenario {
        let mut all = vec!["check".to_owned(), "--json".to_owned()];
        all.extend(args);
        Scenario {
            name,
            program: GATEHOUSE,
            args: all,
            search_path: self.search_path(),
            stdin: None,
            expected_exit,
        }
    }

    fn scenarios(&self) -> Vec<Scenario> {
        let with_sources = |agent: &str, command: &str| {
            let mut args = self.sources();
            args.extend(["--agent".to_owned(), agent.to_owned(), "--".to_owned()]);
            args.push(command.to_owned());
            args
        };
        let batch = |lines: usize| {
            let mut args = self.sources();
            args.push("--jsonl".to_owned());
            Scenario {
                stdin: Some(self.batch(lines)),
                ..self.check("jsonl", args, EXIT_ALLOW)
            }
        };
        vec![
            Scenario {
                name: "baseline: /bin/true",
                program: BASELINE,
                args: Vec::new(),
                search_path: self.search_path(),
                stdin: None,
                expected_exit: 0,
            },
            self.check(
                "safe bin, no files: 'head -n 40'",
                vec!["head -n 40".to_owned()],
                EXIT_ALLOW,
            ),
            self.check(
                "allowlist hit, config + approvals",
                with_sources("main", "tool --flag | head -n 5"),
                EXIT_ALLOW,
            ),
            self.check(
                "ask: allowlist miss",
                with_sources("main", "other --flag"),
                EXIT_ASK,
            ),
            self.check(
                "deny: redirect, ask off",
                with_sources("ci", "tool --flag > out.txt"),
                EXIT_DENY,
            ),
            Scenario {
                name: "jsonl: 1 line",
                ..batch(1)
            },
            Scenario {
                name: "jsonl: 200 lines",
                ..batch(BATCH_LINES)
            },
        ]
    }
}

fn bench_check_process(c: &mut Criterion) {
    assert!(
        Path::new(GATEHOUSE).is_file(),
        "{GATEHOUSE} is missing: run through `cargo bench`, which builds it"
    );
    let fixture = Fixture::new();
    let scenarios = fixture.scenarios();
    let mut group = c.benchmark_group("check_process");
    group.sample_size(SAMPLES);
    let mut results = Vec::new();
    for scenario in &scenarios {
        scenario.verify();
        let mut batches: Vec<Vec<Duration>> = Vec::new();
        group.bench_function(scenario.name, |b| {
            b.iter_custom(|iters| {
                let batch = scenario.spawn_batch(iters);
                let total = batch.iter().sum();
                batches.push(batch);
                total
            })
        });
        results.push((scenario.name, Figures::of(&batches)));
    }
    group.finish();
    report(&results);
}

/// Prints median, p90 and ratio to the baseline, plus the cost of one more `--jsonl` line.
fn report(results: &[(&str, Option<Figures>)]) {
    let baseline = results
        .iter()
        .find(|(name, _)| name.starts_with("baseline"))
        .and_then(|(_, figures)| figures.as_ref().map(|f| f.median));
    println!(
        "\n{:<40} {:>10} {:>10} {:>10}",
        "scenario", "median", "p90", "× true"
    );
    for (name, figures) in results {
        let Some(figures) = figures else { continue };
        let ratio = baseline.map_or_else(
            || "n/a".to_owned(),
            |b| format!("{:.2}", figures.median.as_secs_f64() / b.as_secs_f64()),
        );
        println!(
            "{name:<40} {:>10.3?} {:>10.3?} {ratio:>10}",
            figures.median, figures.p90
        );
    }
    let median_of = |name: &str| {
        results
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, f)| f.as_ref().map(|f| f.median))
    };
    if let (Some(one), Some(many)) = (median_of("jsonl: 1 line"), median_of("jsonl: 200 lines")) {
        let per_line = many.saturating_sub(one) / (BATCH_LINES as u32 - 1);
        println!("jsonl: cost of one more line (median difference / 199): {per_line:.1?}");
    }
}

criterion_group!(benches, bench_check_process);
criterion_main!(benches);
