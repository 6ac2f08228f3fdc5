//! The shells as the oracle: what ran ⊆ what was analysed.
//!
//! Commands are generated from pieces that hit the classes of issue 29 (assignments in front of
//! builtins, `-x` and other `-c` letters, non-UTF-8 locales, quotes, escapes, comments, `cd`,
//! wrappers and inline shells). Every one the analysis allows is run by real bash and by dash
//! in a throwaway directory whose `PATH` holds only recording stubs (and the system's wrappers
//! and shells, as symlinks), in the environment a runner builds with
//! `exec::child_environment`, also with a Big5, GBK or Shift_JIS locale inherited from the host.
//! Every program that really ran must be one a segment names, at the same resolved path and
//! with the same argv. The corpus is bounded (a fixed seed, a few hundred shell runs) so it
//! runs in `cargo test` within a few seconds.
//!
//! Non-UTF-8 locales are generated with `localedef` into the test's own directory (Debian's
//! `locales` package holds the sources; `.ci/run` installs it).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gatehouse_policy::exec::{
    AllowlistEntry, Decision, ExecEvaluation, ExecPolicy, ExecRequest, SafeBinProfile, SatisfiedBy,
    child_environment, evaluate, render_for_shell,
};
use gatehouse_policy::{Ask, Security};

/// Plain programs: each a stub that records its `$0` and arguments.
const STUBS: &[&str] = &["p1", "p2", "p3"];
/// The system's own wrappers and shells, linked into the stub directory.
const SYSTEM: &[&str] = &["env", "nice", "timeout", "nohup", "sh", "bash", "dash"];
/// Locales whose character set lets a multibyte character swallow the next byte.
const FOREIGN_LOCALES: &[(&str, &str, &str)] = &[
    ("zh_TW.BIG5", "zh_TW", "BIG5"),
    ("zh_CN.GBK", "zh_CN", "GBK"),
    ("ja_JP.SJIS", "ja_JP", "SHIFT_JIS"),
];

/// A throwaway host: `bin/` (stubs and system links, the only `PATH` entry), `evil/` (stubs an
/// assignment may point `PATH` at), `work/` (the working directory, with `./p4` and `sub/`),
/// `home/`, `log/` (one file per program run) and `locales/`.
struct Lab {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Lab {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let lab = Lab { _dir: dir, root };
        for sub in ["bin", "evil", "work/sub", "home", "log", "locales"] {
            fs::create_dir_all(lab.root.join(sub)).unwrap();
        }
        for stub in STUBS {
            lab.stub(&lab.root.join("bin").join(stub));
            lab.stub(&lab.root.join("evil").join(stub));
        }
        lab.stub(&lab.root.join("work/p4"));
        lab.stub(&lab.root.join("work/sub/p4"));
        for system in SYSTEM {
            let real = which(system);
            std::os::unix::fs::symlink(real, lab.root.join("bin").join(system)).unwrap();
        }
        // Readable and writable by `nobody`, who runs the shells in the letter test.
        for dir in [
            "", "bin", "evil", "work", "work/sub", "home", "log", "locales",
        ] {
            let mode = if dir == "log" { 0o777 } else { 0o755 };
            fs::set_permissions(lab.root.join(dir), fs::Permissions::from_mode(mode)).unwrap();
        }
        lab
    }

    /// A stub: one file per run in `log/`, holding `$0` and each argument, each ended by 0x1F.
    fn stub(&self, path: &Path) {
        let log = self.root.join("log");
        let script = format!(
            "#!/bin/sh\nprintf '%s\\037' \"$0\" \"$@\" > '{}/'$$\n",
            log.display()
        );
        fs::write(path, script).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn path(&self, relative: &str) -> String {
        self.root.join(relative).display().to_string()
    }

    /// `p1`, `p2` and `./p4` allowlisted, `p3` a safe bin with a profile, `bin/` trusted.
    fn safe_bin_policy(&self) -> ExecPolicy {
        let profile = SafeBinProfile {
            max_positional: Some(3),
            allowed_value_flags: vec!["-n".to_owned()],
            ..SafeBinProfile::default()
        };
        ExecPolicy {
            safe_bins: vec!["p3".to_owned()],
            safe_bin_trusted_dirs: vec![self.root.join("bin")],
            safe_bin_profiles: BTreeMap::from([("p3".to_owned(), profile)]),
            allowlist: vec![
                AllowlistEntry::new(format!("{}/p[12]", self.path("bin"))),
                AllowlistEntry::new(format!("{}/p4", self.path("work"))),
            ],
            ..self.policy()
        }
    }

    /// The stubs of `bin/` and `./p4` allowlisted; nothing else.
    fn policy(&self) -> ExecPolicy {
        ExecPolicy {
            security: Security::Allowlist,
            ask: Ask::Off,
            safe_bins: Vec::new(),
            allowlist: vec![
                AllowlistEntry::new(format!("{}/p*", self.path("bin"))),
                AllowlistEntry::new(format!("{}/p4", self.path("work"))),
            ],
            ..ExecPolicy::default()
        }
    }

    fn request(&self, command: &str) -> ExecRequest {
        ExecRequest::shell(command, self.root.join("work"))
            .with_inherited_env("PATH", self.path("bin"))
            .with_inherited_env("HOME", self.path("home"))
    }

    /// The host variables a runner passes on, with `lang` as the host's locale.
    fn host_env(&self, lang: Option<&str>) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_owned(), self.path("bin")),
            ("HOME".to_owned(), self.path("home")),
        ];
        env.extend(lang.map(|lang| ("LANG".to_owned(), lang.to_owned())));
        env
    }

    /// Runs `shell -c command` in `env` (plus `LOCPATH`, so the generated locales exist) and
    /// returns every program run it recorded.
    fn run(&self, shell: &str, command: &str, env: &BTreeMap<String, String>) -> Vec<Ran> {
        let mut env = env.clone();
        env.insert("LOCPATH".to_owned(), self.path("locales"));
        let mut shell = Command::new(which(shell));
        shell.arg("-c").arg(command);
        self.spawn(shell, &env)
    }

    /// Runs `command` in the working directory with exactly `env` and no terminal, and returns
    /// every program run it recorded.
    fn spawn(&self, mut command: Command, env: &BTreeMap<String, String>) -> Vec<Ran> {
        self.clear_log();
        command
            .current_dir(self.root.join("work"))
            .env_clear()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        self.recorded()
    }

    fn clear_log(&self) {
        for entry in fs::read_dir(self.root.join("log")).unwrap() {
            fs::remove_file(entry.unwrap().path()).unwrap();
        }
    }

    fn recorded(&self) -> Vec<Ran> {
        let mut runs = Vec::new();
        for entry in fs::read_dir(self.root.join("log")).unwrap() {
            let bytes = fs::read(entry.unwrap().path()).unwrap();
            let mut fields: Vec<String> = bytes
                .split(|b| *b == 0x1f)
                .map(|field| String::from_utf8_lossy(field).into_owned())
                .collect();
            fields.pop(); // after the last separator
            // `./p4` is relative to the working directory the shell ran it from.
            let program = fs::canonicalize(self.root.join("work").join(fields.remove(0))).unwrap();
            runs.push(Ran {
                program,
                args: fields,
            });
        }
        runs.sort();
        runs
    }

    /// Builds the locales the foreign-locale runs use; fails if `localedef` or the locale
    /// sources are missing (Debian: `apt-get install locales`).
    fn build_locales(&self) {
        for (name, source, charmap) in FOREIGN_LOCALES {
            let output = Command::new("localedef")
                .args(["--no-warnings=ascii", "-i", source, "-f", charmap])
                .arg(self.root.join("locales").join(name))
                .output()
                .expect("localedef (Debian package `locales`) must be installed");
            assert!(
                self.root.join("locales").join(name).exists(),
                "localedef {name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

fn which(program: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin"] {
        let path = Path::new(dir).join(program);
        if path.exists() {
            return fs::canonicalize(path).unwrap();
        }
    }
    panic!("{program} is not installed in /usr/bin or /bin");
}

/// One program run: its real path and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Ran {
    program: PathBuf,
    args: Vec<String>,
}

/// Every program run the evaluation names: each segment's resolved program with its argv.
fn analysed(verdict: &ExecEvaluation) -> Vec<Ran> {
    verdict
        .segments
        .iter()
        .filter_map(|segment| {
            let program = segment.resolved_path.clone()?;
            Some(Ran {
                program,
                args: segment.program_argv.get(1..)?.to_vec(),
            })
        })
        .collect()
}

/// The runs that were not analysed: each analysed run may account for one real run. An
/// analysed argv with a word the shell expands (`$`, `~`, a glob) matches any arguments: the
/// analysis judges the program, and such a word is data whose value only the shell knows.
fn unanalysed(ran: &[Ran], analysed: &[Ran]) -> Vec<Ran> {
    let dynamic = |args: &[String]| {
        args.iter()
            .any(|arg| arg.contains(['$', '~', '*', '?', '[']))
    };
    let mut left = analysed.to_vec();
    let mut unmatched = Vec::new();
    // Exact matches first, so a run is not claimed by an analysed argv that matches anything.
    for run in ran {
        match left.iter().position(|a| a == run) {
            Some(at) => {
                left.remove(at);
            }
            None => unmatched.push(run.clone()),
        }
    }
    let mut extra = Vec::new();
    for run in unmatched {
        match left
            .iter()
            .position(|a| a.program == run.program && dynamic(&a.args))
        {
            Some(at) => {
                left.remove(at);
            }
            None => extra.push(run),
        }
    }
    extra
}

/// A small deterministic generator (xorshift), so the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Arguments: plain words and the quoting, escaping and non-ASCII shapes the classes turn on.
/// None holds a single quote, so any of them may sit inside `sh -c '…'`.
const ARGS: &[&str] = &[
    "a",
    "-n",
    "--x=1",
    "\"$k\"",
    "\"$HOME\"",
    "a\\ b",
    "\"q\\\"r\"",
    "中\\;",
    "é\\;",
    "Á\\|",
    "中\\\\",
    "\\#x",
    "x#y",
    "~",
    "a=~/x",
    "*",
    "\"a b\"",
    "\\$k",
    "$1",
];

/// Arguments with single quotes, outside `sh -c '…'` only.
const QUOTED_ARGS: &[&str] = &[
    "'$k'", "'a\\\nb'", "'x y'", "'中'\\;", "'$(p3)'", "'a'\"b\"",
];

const PROGRAMS: &[&str] = &["p1", "p2", "p3", "./p4"];
const WRAPPERS: &[&str] = &["", "", "", "env ", "nice -n 5 ", "timeout 5 ", "nohup "];
const BUILTINS: &[&str] = &[":", "true", "cd .", "cd sub", "pwd", "echo hi", "false"];
const ASSIGNMENTS: &[&str] = &["PATH={evil} ", "A=1 ", "IFS=: ", "PS4='$(p3)' "];
const JOINERS: &[&str] = &[" ; ", " && ", " || ", " | ", "\n", " # c ; p3\n"];
const SHELLS: &[&str] = &[
    "sh -c",
    "bash -c",
    "dash -c",
    "bash -xc",
    "sh -ec",
    "bash -euc",
    "sh -vc",
    "bash -kc",
];

fn segment(rng: &mut Rng, evil: &str, depth: usize, quotes: bool) -> String {
    let mut text = String::new();
    if rng.chance(12) {
        text.push_str(&rng.pick(ASSIGNMENTS).replace("{evil}", evil));
    }
    if rng.chance(20) {
        text.push_str(rng.pick(BUILTINS));
        return text;
    }
    if depth < 2 && rng.chance(12) {
        let inner = command(rng, evil, depth + 1, false);
        text.push_str(&format!("{} '{inner}'", rng.pick(SHELLS)));
        if rng.chance(10) {
            text.push_str(" x");
        }
        return text;
    }
    text.push_str(rng.pick(WRAPPERS));
    text.push_str(rng.pick(PROGRAMS));
    for _ in 0..rng.next() % 4 {
        text.push(' ');
        text.push_str(if quotes && rng.chance(30) {
            rng.pick(QUOTED_ARGS)
        } else {
            rng.pick(ARGS)
        });
    }
    text
}

fn command(rng: &mut Rng, evil: &str, depth: usize, quotes: bool) -> String {
    let mut text = segment(rng, evil, depth, quotes);
    for _ in 0..rng.next() % 3 {
        text.push_str(rng.pick(JOINERS));
        text.push_str(&segment(rng, evil, depth, quotes));
    }
    text
}

/// Generates commands until `wanted` of them are allowed; returns them with their verdicts.
fn allowed_corpus(
    lab: &Lab,
    policy: &ExecPolicy,
    seed: u64,
    wanted: usize,
) -> Vec<(String, ExecEvaluation)> {
    let evil = lab.path("evil");
    let mut rng = Rng(seed);
    let mut allowed = Vec::new();
    for _ in 0..20_000 {
        let text = command(&mut rng, &evil, 0, true);
        let verdict = evaluate(&lab.request(&text), policy);
        if verdict.decision == Decision::Allow {
            allowed.push((text, verdict));
            if allowed.len() == wanted {
                break;
            }
        }
    }
    allowed
}

#[test]
fn what_ran_is_what_was_analysed_under_bash_and_dash() {
    let lab = Lab::new();
    lab.build_locales();
    let corpus = allowed_corpus(&lab, &lab.policy(), 0x5eed_2901, 150);
    assert_eq!(
        corpus.len(),
        150,
        "the generator should find 150 allowed commands"
    );
    let mut failures = Vec::new();
    let mut runs = 0;
    for (text, verdict) in &corpus {
        let expected = analysed(verdict);
        let mut hosts = vec![None];
        if !text.is_ascii() {
            hosts.extend(FOREIGN_LOCALES.iter().map(|(name, ..)| Some(*name)));
        }
        for lang in hosts {
            let env = child_environment(lab.host_env(lang), &BTreeMap::new());
            for shell in ["bash", "dash"] {
                runs += 1;
                let ran = lab.run(shell, text, &env);
                let extra = unanalysed(&ran, &expected);
                if !extra.is_empty() {
                    failures.push(format!(
                        "{shell} (LANG={lang:?}) ran what was not analysed: {text:?}\n  \
                         ran {extra:?}\n  analysed {expected:?}"
                    ));
                }
            }
        }
    }
    assert!(runs >= 300, "{runs} shell runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 33: a shell string's safe bins run by absolute path with literal arguments. With `p3`
/// a safe bin, each allowed command and its rendering (`render_for_shell`) run exactly the same
/// programs with the same arguments under bash and dash, none the analysis did not list.
#[test]
fn rendered_safe_bins_run_what_the_original_runs() {
    let lab = Lab::new();
    let policy = lab.safe_bin_policy();
    let corpus = allowed_corpus(&lab, &policy, 0x5eed_3301, 400);
    assert_eq!(corpus.len(), 400, "the generator should find 400 commands");
    let env = child_environment(lab.host_env(None), &BTreeMap::new());
    let (mut failures, mut rendered_safe_bins) = (Vec::new(), 0);
    for (text, verdict) in &corpus {
        let rendered = render_for_shell(text, verdict);
        if rendered == *text {
            continue;
        }
        rendered_safe_bins += 1;
        let safe_bins = verdict.segments.iter();
        let safe_bins = safe_bins.filter(|s| s.satisfied_by == Some(SatisfiedBy::SafeBins));
        assert!(
            safe_bins.count() > 0,
            "{text:?} was rendered without a safe bin"
        );
        for shell in ["bash", "dash"] {
            let before = lab.run(shell, text, &env);
            let after = lab.run(shell, &rendered, &env);
            if before != after || !unanalysed(&after, &analysed(verdict)).is_empty() {
                failures.push(format!(
                    "{shell}: {text:?} rendered as {rendered:?}\n  ran {before:?}\n  then {after:?}"
                ));
            }
        }
    }
    assert!(
        rendered_safe_bins >= 25,
        "{rendered_safe_bins} commands rendered"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The oracle sees what it is for: under Big5 without the forced locale, bash runs `p2` out of
/// an argument, and with `PATH` kept by `:` dash runs `evil/p1`; neither is what was analysed.
#[test]
fn sees_programs_the_analysis_did_not_list() {
    let lab = Lab::new();
    lab.build_locales();
    let policy = lab.policy();
    let command = "p1 中\\; p2";
    let verdict = evaluate(&lab.request(command), &policy);
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason);
    let expected = analysed(&verdict);
    let big5: BTreeMap<String, String> = lab.host_env(Some("zh_TW.BIG5")).into_iter().collect();
    let misread = unanalysed(&lab.run("bash", command, &big5), &expected);
    assert!(
        misread.iter().any(|run| run.program.ends_with("bin/p2")),
        "bash under Big5 runs p2: {misread:?}"
    );
    let forced = child_environment(lab.host_env(Some("zh_TW.BIG5")), &BTreeMap::new());
    assert_eq!(
        unanalysed(&lab.run("bash", command, &forced), &expected),
        []
    );

    let plain = evaluate(&lab.request(": ; p1"), &policy);
    let kept_path = format!("PATH={} : ; p1", lab.path("evil"));
    let env = child_environment(lab.host_env(None), &BTreeMap::new());
    let evil = unanalysed(&lab.run("dash", &kept_path, &env), &analysed(&plain));
    assert_eq!(evil.len(), 1, "dash keeps PATH after `:`: {evil:?}");
    let verdict = evaluate(&lab.request(&kept_path), &policy);
    assert_ne!(verdict.decision, Decision::Allow, "{}", verdict.reason);
}

/// Every letter bash or dash accepts in a `-c` cluster: if the analysis unwraps `-<letter>c`,
/// running it in a hostile environment (`PS4` with a command substitution, rc and profile files
/// in `HOME`, `ENV`, `PROMPT_COMMAND`) runs nothing but the payload. The shells run as `nobody`
/// when the test runs as root, because bash ignores an inherited `PS4` as root. Known
/// code-running letters (`x`, `i`, `l`) are run too, to show the environment is hostile enough.
#[test]
fn denies_cluster_letters_that_run_code_from_the_environment() {
    let lab = Lab::new();
    let policy = lab.policy();
    let hostile_rc = format!("{}/p3 rc\n", lab.path("bin"));
    for rc in [
        ".bashrc",
        ".profile",
        ".bash_profile",
        ".bash_login",
        "env.sh",
    ] {
        fs::write(lab.root.join("home").join(rc), &hostile_rc).unwrap();
    }
    let env: BTreeMap<String, String> = [
        ("PATH", lab.path("bin")),
        ("HOME", lab.path("home")),
        ("PS4", "$(p3 ps4)+ ".to_owned()),
        ("ENV", format!("{}/env.sh", lab.path("home"))),
        ("PROMPT_COMMAND", "p3 prompt".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let as_nobody = runs_as_root();
    let run = |shell: &str, flag: &str| -> Vec<Ran> {
        let mut command = if as_nobody {
            let mut c = Command::new(which("setpriv"));
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            c.arg(which(shell));
            c
        } else {
            Command::new(which(shell))
        };
        command.args([flag, "p1 ok"]);
        lab.spawn(command, &env)
    };
    let payload_only = [Ran {
        program: lab.root.join("bin/p1"),
        args: vec!["ok".to_owned()],
    }];
    let mut failures = Vec::new();
    let mut admitted = BTreeSet::new();
    for letter in ('a'..='z').chain('A'..='Z') {
        let flag = format!("-{letter}c");
        let verdict = evaluate(&lab.request(&format!("bash {flag} 'p1 ok'")), &policy);
        if verdict.decision != Decision::Allow {
            continue;
        }
        admitted.insert(letter);
        for shell in ["bash", "dash"] {
            let ran = run(shell, &flag);
            if ran.iter().any(|r| !payload_only.contains(r)) {
                failures.push(format!("{shell} {flag} ran {ran:?}"));
            }
        }
    }
    assert_eq!(
        admitted,
        BTreeSet::from(['c', 'e', 'f', 'u', 'v']),
        "letters unwrapped beside `c`"
    );
    for flag in ["-xc", "-ic", "-lc"] {
        let ran = ["bash", "dash"].iter().flat_map(|shell| run(shell, flag));
        assert!(
            ran.into_iter()
                .any(|r| r.args.first().map(String::as_str) != Some("ok")),
            "{flag} should run the hostile environment's p3"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Whether this process runs as root (the shells are then started as `nobody`).
fn runs_as_root() -> bool {
    fs::metadata("/proc/self")
        .map(|meta| std::os::unix::fs::MetadataExt::uid(&meta) == 0)
        .unwrap_or(false)
}
