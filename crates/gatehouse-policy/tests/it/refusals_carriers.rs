//! Carriers never authorize what they carry (issue 29, class 2): with the carrier itself
//! allowlisted and the carried program not, nothing runs without a person; strictInlineEval
//! knows every common interpreter's inline-code forms; skill auto-allow counts bare names only.

use gatehouse_policy::exec::{Decision, ExecPolicy, SkillBin, carriers, evaluate};
use gatehouse_policy::{Ask, Security};
use proptest::prelude::*;

use crate::support::{Host, assert_allowed, write_executable};

/// Every carrier the tests name, installed and allowlisted; `id` is installed but not listed.
const CARRIER_BINS: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "script",
    "flock",
    "setsid",
    "ionice",
    "chrt",
    "taskset",
    "watch",
    "xargs",
    "find",
    "parallel",
    "unshare",
    "nsenter",
    "chroot",
    "systemd-run",
    "firejail",
    "bwrap",
    "strace",
    "ltrace",
    "valgrind",
    "gdb",
    "docker",
    "podman",
    "kubectl",
    "bash",
    "sh",
    "dash",
    "zsh",
    "busybox",
    "toybox",
    "env",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "time",
    "eatmydata",
    "fakeroot",
    "proot",
    "torsocks",
    "xvfb-run",
    "dbus-run-session",
    "sg",
    "newgrp",
    "at",
    "batch",
    "tmux",
    "screen",
    "entr",
    "rlwrap",
    "ip",
    "nix-shell",
    "uv",
    "pnpm",
    "npm",
    "yarn",
    "bun",
    "deno",
    "capsh",
    "setpriv",
    "perf",
    "lldb",
];

fn carrier_host() -> (Host, ExecPolicy) {
    let mut bins: Vec<&str> = CARRIER_BINS.to_vec();
    bins.push("id");
    let host = Host::with_bins(&bins);
    let mut policy = host.policy(CARRIER_BINS);
    policy.safe_bins = Vec::new();
    (host, policy)
}

/// The commands that were allowed, with their reasons.
fn allowed(host: &Host, policy: &ExecPolicy, commands: &[&str]) -> Vec<String> {
    commands
        .iter()
        .filter_map(|command| {
            let verdict = host.evaluate(command, policy);
            (verdict.decision == Decision::Allow)
                .then(|| format!("{command:?}: {}", verdict.reason))
        })
        .collect()
}

#[test]
fn denies_what_an_allowlisted_carrier_carries() {
    let (host, policy) = carrier_host();
    let commands = [
        "sudo id",
        "sudo -u root id",
        "doas id",
        "su -c id",
        "runuser -u nobody id",
        "pkexec id",
        "script -qc id /dev/null",
        "flock /tmp/l id",
        "flock -c id /tmp/l",
        "setsid id",
        "setsid -f id",
        "ionice -c3 id",
        "chrt -f 1 id",
        "taskset -c 0 id",
        "watch id",
        "xargs id",
        "find . -exec id ;",
        "find . -execdir id ;",
        "find . -ok id ;",
        "find . -okdir id ;",
        "parallel id ::: a",
        "unshare -r id",
        "nsenter -t 1 -m id",
        "chroot / id",
        "systemd-run id",
        "firejail id",
        "bwrap --bind / / id",
        "strace id",
        "ltrace id",
        "valgrind id",
        "gdb -batch -ex run --args id",
        "lldb -- id",
        "docker run alpine id",
        "docker -H unix:///x exec c id",
        "podman run alpine id",
        "kubectl exec pod -- id",
        "bash -c id",
        "bash -lc id",
        "bash --login -c id",
        "bash -ic id",
        "bash -kc id",
        "bash -xc id",
        "bash -o pipefail -c id",
        "bash --norc -c id",
        "bash --rcfile x -c id",
        "bash -s",
        "bash -c id x",
        "sh -c id",
        "sh -ec id",
        "dash -c id",
        "zsh -c id",
        "{root}/bin/bash -c id",
        "busybox sh -c id",
        "toybox sh -c id",
        "bash run.sh",
        "env id",
        "nice id",
        "nohup id",
        "timeout 5 id",
        "stdbuf -oL id",
        "time id",
        "eatmydata id",
        "fakeroot id",
        "proot id",
        "torsocks id",
        "xvfb-run id",
        "dbus-run-session id",
        "sg wheel id",
        "newgrp wheel",
        "at now",
        "batch",
        "tmux new-session id",
        "screen id",
        "entr id",
        "rlwrap id",
        "ip netns exec n id",
        "nix-shell --run id",
        "uv run id",
        "pnpm -r exec id",
        "npm explore x -- id",
        "npm --prefix x exec id",
        "yarn node -e 1",
        "bun x cowsay",
        "deno x cowsay",
        "capsh -- -c id",
        "setpriv --reuid=0 id",
        "perf record id",
        "command id",
        "builtin id",
        "exec id",
    ];
    std::fs::write(host.root.join("work/run.sh"), "id\n").unwrap();
    let allowed = allowed(&host, &policy, &commands);
    assert!(allowed.is_empty(), "allowed:\n{}", allowed.join("\n"));
}

#[test]
fn allows_modelled_wrappers_when_what_they_carry_is_allowlisted() {
    let (host, mut policy) = carrier_host();
    policy
        .allowlist
        .push(gatehouse_policy::exec::AllowlistEntry::new(host.bin("id")));
    assert_allowed(
        &host,
        &policy,
        &[
            "setsid -w id",
            "ionice -c 3 id",
            "chrt -f 1 id",
            "taskset -c 0,1 id -u",
            "nice -n 5 timeout 5 id",
            "sh -c 'id && id -u'",
        ],
    );
}

/// Every interpreter whose inline-code forms strictInlineEval must know (issue 29, class 2).
const STRICT_INTERPRETERS: &[&str] = &[
    "python3",
    "node",
    "deno",
    "Rscript",
    "R",
    "lua",
    "luajit",
    "expect",
    "tclsh",
    "julia",
    "php",
    "bun",
    "pwsh",
    "powershell",
    "osascript",
    "gdb",
    "jrunscript",
    "groovy",
    "elixir",
    "erl",
    "racket",
    "guile",
    "sbcl",
    "make",
    "ruby",
    "perl",
    "awk",
    "sed",
    "ghc",
    "scala",
    "clojure",
    "bb",
    "octave",
    "gnuplot",
    "dc",
    "sqlite3",
    "psql",
    "mysql",
    "vim",
    "emacs",
    "lldb",
];

/// `security: full`, `ask: off`, strictInlineEval on, `programs` allowlisted: only inline code
/// can make a person decide.
fn strict_policy(host: &Host, programs: &[&str]) -> ExecPolicy {
    let mut policy = host.policy(programs);
    policy.security = Security::Full;
    policy.ask = Ask::Off;
    policy.strict_inline_eval = true;
    policy
}

/// Under `strictInlineEval` every interpreter's inline code, and any option of a known
/// interpreter that the analysis does not know, needs a person even with `security: full`.
#[test]
fn denies_inline_code_of_every_common_interpreter_under_strict_inline_eval() {
    let host = Host::with_bins(STRICT_INTERPRETERS);
    let policy = strict_policy(&host, STRICT_INTERPRETERS);
    let commands = [
        "python3 -c 'import os'",
        "node -e 1",
        "deno eval 1",
        "deno eval -p 1",
        "Rscript -e 'system(\"id\")'",
        "R -e 'system(\"id\")'",
        "R --vanilla -e 1",
        "lua -e 'os.execute(\"id\")'",
        "luajit -e 1",
        "expect -c 'spawn id'",
        "julia -e 1",
        "julia -qe 1",
        "php -r 'system(\"id\");'",
        "bun -e 1",
        "pwsh -c id",
        "pwsh -Command id",
        "pwsh -EncodedCommand aQBkAA==",
        "powershell Get-Process",
        "osascript -e 'do shell script \"id\"'",
        "gdb -ex 'shell id'",
        "lldb -o 'platform shell id'",
        "jrunscript -e 1",
        "groovy -e 1",
        "elixir -e 1",
        "erl -noshell -eval 'halt().'",
        "racket -e 1",
        "guile -c 1",
        "sbcl --eval 1",
        "make --eval='$(shell id)'",
        "make -f build.mk",
        "ghc -e 1",
        "scala -e 1",
        "clojure -e 1",
        "bb -e 1",
        "octave --eval 1",
        "gnuplot -e 1",
        "dc -e '!id'",
        "sqlite3 x.db '.shell id'",
        "psql -c '\\! id'",
        "mysql -e 'system id'",
        "vim -c '!id'",
        "vim '+!id'",
        "emacs --batch --eval 1",
        "ruby -e 1",
        "perl -e 1",
        "awk 'BEGIN{system(\"id\")}'",
        "sed 1e",
        // Unknown options of a known interpreter fail closed.
        "lua -X x.lua",
        "julia --bogus x.jl",
        "pwsh -Bogus x.ps1",
        "Rscript --bogus x.R",
        "python3 --bogus x.py",
    ];
    let mut allowed = Vec::new();
    for command in commands {
        let verdict = host.evaluate(command, &policy);
        if verdict.decision != Decision::Ask {
            allowed.push(format!(
                "{command}: {:?} {}",
                verdict.decision, verdict.reason
            ));
        }
    }
    assert!(allowed.is_empty(), "not asked:\n{}", allowed.join("\n"));
    // Files stay allowed: the interpreter trusts the files it runs.
    assert_allowed(
        &host,
        &policy,
        &[
            "lua x.lua",
            "julia --project=. x.jl",
            "make test",
            "Rscript x.R",
        ],
    );
}

/// `skill-bin` installed in `bin/` and recorded there as a skill under `autoAllowSkills`; a
/// file of the same name in the working directory.
fn skill_host() -> (Host, ExecPolicy) {
    let host = Host::with_bins(&["skill-bin"]);
    write_executable(&host.root.join("work/skill-bin"));
    let mut policy = host.policy(&[]);
    policy.auto_allow_skills = true;
    policy.skill_bins = vec![SkillBin {
        name: "skill-bin".to_owned(),
        resolved_path: host.root.join("bin/skill-bin"),
    }];
    (host, policy)
}

#[test]
fn denies_skill_bins_named_by_path() {
    let (host, policy) = skill_host();
    let verdict = |command: &str| host.evaluate(command, &policy).decision;
    assert_eq!(verdict("skill-bin --help"), Decision::Allow);
    assert_ne!(verdict("../bin/skill-bin --help"), Decision::Allow);
    assert_ne!(verdict("{root}/bin/skill-bin --help"), Decision::Allow);
    assert_ne!(verdict("./skill-bin --help"), Decision::Allow);
}

/// Options a generated carrier call may be given: flags, valued options and `--`.
const OPTIONS: &[&str] = &[
    "", "-a ", "-x ", "--foo ", "-u root ", "-n 5 ", "-- ", "-c 0 ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Whatever options it is given, an opaque carrier (allowlisted) never lets the program it
    /// carries (`id`, not allowlisted) run without a person.
    #[test]
    fn no_carrier_authorizes_what_it_carries(
        carrier in 0usize..1000,
        option in 0usize..OPTIONS.len(),
        more in 0usize..OPTIONS.len(),
    ) {
        let all: Vec<_> = carriers().collect();
        let carrier = all[carrier % all.len()];
        let bins = [carrier.program, "id"];
        let host = Host::with_bins(&bins);
        let policy = host.policy(&[carrier.program]);
        let subcommand = carrier
            .subcommands
            .first()
            .map(|s| format!("{s} "))
            .unwrap_or_default();
        let command = format!(
            "{} {}{}{}id -u",
            carrier.program, OPTIONS[option], subcommand, OPTIONS[more]
        );
        let verdict = evaluate(&host.request(&command), &policy);
        prop_assert_ne!(verdict.decision, Decision::Allow, "{} {}", command, verdict.reason);
    }

    /// Under strictInlineEval, an option the analysis cannot know (a generated name no real
    /// tool has, short or long, alone or with a value) makes every known interpreter need a
    /// person, since it might take the program's place. The documented exceptions refuse
    /// unknown options themselves and run nothing: elixir, and node's `--name=value` flags.
    #[test]
    fn no_unknown_option_of_an_interpreter_escapes_strict_inline_eval(name in "zq[a-z]{1,6}") {
        let host = Host::with_bins(STRICT_INTERPRETERS);
        let policy = strict_policy(&host, STRICT_INTERPRETERS);
        let options = [
            format!("--{name}=1"),
            format!("--{name}"),
            format!("-{}", name.to_uppercase()),
            format!("-{} 1", name.to_uppercase()),
        ];
        let mut escaped = Vec::new();
        for program in STRICT_INTERPRETERS {
            for option in &options {
                if *program == "elixir" || (*program == "node" && option.contains('=')) {
                    continue;
                }
                let command = format!("{program} {option} x.src");
                let verdict = evaluate(&host.request(&command), &policy);
                if verdict.decision != Decision::Ask {
                    escaped.push(format!("{command}: {} {}", verdict.decision, verdict.reason));
                }
            }
        }
        prop_assert!(escaped.is_empty(), "not asked:\n{}", escaped.join("\n"));
    }

    /// A skill binary counts only when named bare: any spelling of its path (relative,
    /// absolute, with `.` or `..` components) is not the skill.
    #[test]
    fn no_path_spelling_of_a_skill_bin_is_auto_allowed(
        prefix in prop_oneof![
            Just("./"), Just("../bin/"), Just("{root}/bin/"), Just("../bin/./"),
            Just("{root}/bin/../bin/"), Just(".//"), Just("{root}//bin/"),
        ],
        args in "( -[a-z]{1,3}| [a-z]{1,4}){0,3}",
    ) {
        let (host, policy) = skill_host();
        let command = format!("{prefix}skill-bin{args}");
        let verdict = host.evaluate(&command, &policy);
        prop_assert_ne!(verdict.decision, Decision::Allow, "{} {}", command, verdict.reason);
    }
}
