//! Carriers: programs that run another program, or code, named in their own arguments.
//!
//! A carrier never authorizes what it carries. The wrappers whose option grammar is modelled
//! (`env`, `nice`, `timeout`, `ionice`, … in [`super::unwrap`]) are looked through and the
//! carried command is judged on its own; the shells' `-c` payloads are parsed. Every other
//! carrier is listed here and is *opaque*: the segment needs a person (ask, then
//! `askFallback`), even when the carrier itself is allowlisted, and allow-always never stores
//! it. Being listed also keeps a carrier out of the safe bins.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::parse::Word;

/// Programs that always carry a command (or code, or a session that runs commands): what each
/// does that the analysis cannot follow.
const ALWAYS: &[(&str, &str)] = &[
    ("sudo", "runs a command as another user"),
    ("sudoedit", "runs an editor as another user"),
    ("doas", "runs a command as another user"),
    ("su", "runs a shell or command as another user"),
    ("run0", "runs a command as another user"),
    ("runuser", "runs a shell or command as another user"),
    ("pkexec", "runs a command as another user"),
    ("sg", "runs a command with another group"),
    ("newgrp", "starts a shell with another group"),
    ("gosu", "runs a command as another user"),
    ("su-exec", "runs a command as another user"),
    ("setpriv", "runs a command with other privileges"),
    ("capsh", "runs a shell or command with other capabilities"),
    ("chroot", "runs a command under another root directory"),
    ("fakechroot", "runs a command under a fake root directory"),
    ("proot", "runs a command under another root directory"),
    ("unshare", "runs a command in new namespaces"),
    ("nsenter", "runs a command in another process's namespaces"),
    (
        "firejail",
        "runs a command in a sandbox with its own filesystem view",
    ),
    ("bwrap", "runs a command with its own filesystem view"),
    ("systemd-run", "runs a command as a systemd unit"),
    ("systemd-nspawn", "runs a command in a container"),
    ("systemd-inhibit", "runs a command"),
    (
        "flatpak-spawn",
        "runs a command outside or inside a sandbox",
    ),
    (
        "script",
        "runs a shell or command (`-c`) in a pseudo-terminal",
    ),
    ("xcrun", "runs a developer tool found by name"),
    ("arch", "runs a command for another architecture"),
    ("setarch", "runs a command with another personality"),
    ("linux32", "runs a command with another personality"),
    ("linux64", "runs a command with another personality"),
    ("watch", "runs its arguments through `sh -c`, repeatedly"),
    (
        "flock",
        "runs a command (or `-c` shell code) holding a lock",
    ),
    (
        "parallel",
        "runs commands built from its input and arguments",
    ),
    (
        "strace",
        "runs a command under a tracer (and `-o |cmd` pipes to a command)",
    ),
    ("ltrace", "runs a command under a tracer"),
    ("valgrind", "runs a command under an instrumenting loader"),
    ("catchsegv", "runs a command"),
    ("gdb", "runs commands and programs under a debugger"),
    ("lldb", "runs commands and programs under a debugger"),
    ("eatmydata", "runs a command with a preloaded library"),
    ("fakeroot", "runs a command with a preloaded library"),
    ("faketime", "runs a command with a preloaded library"),
    ("torsocks", "runs a command with a preloaded library"),
    ("torify", "runs a command with a preloaded library"),
    ("tsocks", "runs a command with a preloaded library"),
    ("proxychains", "runs a command with a preloaded library"),
    ("proxychains4", "runs a command with a preloaded library"),
    (
        "xvfb-run",
        "runs a command (through a shell) with a virtual display",
    ),
    ("dbus-run-session", "runs a command with a session bus"),
    ("dbus-launch", "runs a command with a session bus"),
    ("at", "schedules shell code to run later"),
    ("batch", "schedules shell code to run later"),
    ("tmux", "runs shell commands in a terminal session"),
    ("screen", "runs shell commands in a terminal session"),
    ("dtach", "runs a command in a detached session"),
    ("abduco", "runs a command in a detached session"),
    ("entr", "runs a command whenever files change"),
    ("rlwrap", "runs a command"),
    ("unbuffer", "runs a command through an expect script"),
    ("numactl", "runs a command with another memory policy"),
    ("cpulimit", "runs a command"),
    ("trickle", "runs a command with a preloaded library"),
    ("daemonize", "runs a command as a daemon"),
    ("start-stop-daemon", "runs a command as a daemon"),
    ("chpst", "runs a command with another state"),
    ("cgexec", "runs a command in a control group"),
    ("sshpass", "runs a command with a password on its terminal"),
    (
        "xdg-open",
        "opens a file with whatever program it is associated with",
    ),
    (
        "open",
        "opens a file with whatever program it is associated with",
    ),
    ("openvt", "runs a command on a new virtual terminal"),
    ("ccache", "runs a compiler named in its arguments"),
    ("sccache", "runs a compiler named in its arguments"),
    ("distcc", "runs a compiler named in its arguments"),
    ("icecc", "runs a compiler named in its arguments"),
    (
        "nix-shell",
        "runs shell code (`--run`, `--command`, `shellHook`)",
    ),
    ("uvx", "downloads and runs a tool"),
    ("pipx", "downloads and runs a tool"),
];

/// Programs that carry a command when one of these words appears among their arguments (a
/// subcommand; looked for anywhere, since an option's value can shift where the subcommand
/// is): the words, and what they do.
const BY_SUBCOMMAND: &[(&str, &[&str], &str)] = &[
    (
        "docker",
        &["run", "exec", "create", "debug"],
        "runs a command in a container",
    ),
    (
        "podman",
        &["run", "exec", "create", "debug"],
        "runs a command in a container",
    ),
    (
        "nerdctl",
        &["run", "exec", "create", "debug"],
        "runs a command in a container",
    ),
    (
        "kubectl",
        &["run", "exec", "debug", "attach"],
        "runs a command in a cluster",
    ),
    (
        "oc",
        &["run", "exec", "debug", "attach", "rsh"],
        "runs a command in a cluster",
    ),
    ("lxc", &["exec", "shell"], "runs a command in a container"),
    ("incus", &["exec", "shell"], "runs a command in a container"),
    ("ip", &["exec"], "runs a command in a network namespace"),
    (
        "nix",
        &["run", "shell", "develop"],
        "runs a program or shell",
    ),
    ("flatpak", &["run"], "runs an application"),
    ("snap", &["run"], "runs an application"),
    ("mise", &["exec", "x", "run"], "runs a command or task"),
    ("asdf", &["exec"], "runs a command"),
    ("rbenv", &["exec"], "runs a command"),
    ("pyenv", &["exec"], "runs a command"),
    ("nodenv", &["exec"], "runs a command"),
    ("direnv", &["exec"], "runs a command"),
    ("fnm", &["exec"], "runs a command"),
    ("volta", &["run"], "runs a command"),
    (
        "uv",
        &["run", "tool"],
        "runs a command or downloads and runs a tool",
    ),
    ("poetry", &["run"], "runs a command"),
    ("pdm", &["run"], "runs a command"),
    ("hatch", &["run", "shell"], "runs a command"),
    ("pipenv", &["run", "shell"], "runs a command"),
    ("conda", &["run"], "runs a command"),
    ("mamba", &["run"], "runs a command"),
    ("micromamba", &["run"], "runs a command"),
    ("bundle", &["exec"], "runs a command"),
    ("bundler", &["exec"], "runs a command"),
    (
        "perf",
        &[
            "record", "stat", "trace", "script", "kvm", "sched", "lock", "mem", "c2c", "ftrace",
        ],
        "runs a command or script under the profiler",
    ),
    (
        "npm",
        &["explore", "create"],
        "runs a command in a package, or downloads and runs an initializer",
    ),
    ("pnpm", &["create"], "downloads and runs an initializer"),
    (
        "yarn",
        &["create", "node"],
        "downloads and runs an initializer, or runs node with its arguments",
    ),
    (
        "bun",
        &["x", "create", "exec", "repl"],
        "downloads and runs a package, runs shell code or reads code",
    ),
    ("deno", &["x"], "downloads and runs a package"),
];

/// Why a program, called with these arguments, carries a command the analysis does not
/// unwrap; `None` when it is not an opaque carrier (or not with these arguments). `name` is the
/// lower-cased basename.
pub(crate) fn opaque_reason(name: &str, args: &[Word]) -> Option<&'static str> {
    // Looked up for every word that may be a wrapper, so the table is hashed once.
    static BY_NAME: LazyLock<HashMap<&'static str, Carrier>> = LazyLock::new(|| {
        carriers()
            .map(|carrier| (carrier.program, carrier))
            .collect()
    });
    let carrier = BY_NAME.get(name)?;
    let carries = carrier.subcommands.is_empty()
        || args
            .iter()
            .any(|arg| carrier.subcommands.contains(&arg.text.as_str()));
    carries.then_some(carrier.runs)
}

/// A carrier as data, for `gatehouse doctor` and tests: allowlisting it never authorizes what
/// it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carrier {
    /// The program's name (its basename, lower case).
    pub program: &'static str,
    /// The subcommands with which it carries a command; empty when it always does.
    pub subcommands: &'static [&'static str],
    /// What it runs.
    pub runs: &'static str,
}

/// Every opaque carrier Gatehouse knows (the modelled wrappers and the shells are not among
/// them: they are unwrapped and what they carry is judged on its own).
pub fn carriers() -> impl Iterator<Item = Carrier> {
    ALWAYS
        .iter()
        .map(|(program, runs)| Carrier {
            program,
            subcommands: &[],
            runs,
        })
        .chain(
            BY_SUBCOMMAND
                .iter()
                .map(|(program, subcommands, runs)| Carrier {
                    program,
                    subcommands,
                    runs,
                }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carriers_always_or_by_subcommand() {
        let reason = |name: &str, args: &[&str]| opaque_reason(name, &Word::direct_argv(args));
        assert!(reason("sudo", &[]).is_some());
        assert!(reason("docker", &["-H", "x", "run", "alpine"]).is_some());
        assert!(reason("docker", &["ps"]).is_none());
        assert!(reason("ip", &["netns", "exec", "n", "id"]).is_some());
        assert!(reason("ip", &["addr"]).is_none());
        assert!(reason("ls", &["run"]).is_none());
    }

    #[test]
    fn lists_each_carrier_once() {
        let mut names: Vec<&str> = ALWAYS
            .iter()
            .map(|(name, _)| *name)
            .chain(BY_SUBCOMMAND.iter().map(|(name, ..)| *name))
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
