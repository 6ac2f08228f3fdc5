//! The request's own environment: a variable the requester sets keeps auto-allow only if it is
//! on the short list of harmless ones; any other, a `PATH` with an untrusted directory, or a
//! listed variable whose value names a file or a command, leaves the decision to a person.

use gatehouse_policy::exec::{AllowlistEntry, Decision, ExecPolicy, Rule, evaluate};
use gatehouse_policy::requirement::exact_command_pattern;

use crate::support::Host;

/// `make`, `curl`, `zip`, `git` and `ls` allowlisted: each vector makes one of them run code.
fn host() -> (Host, ExecPolicy) {
    let host = Host::with_bins(&["make", "curl", "zip", "git", "ls", "java", "python3"]);
    let policy = host.policy(&["make", "curl", "zip", "git", "ls", "java", "python3"]);
    (host, policy)
}

/// Evaluates `command` with each `(variable, value)` set by the requester and returns the
/// lines that were allowed or refused for another rule.
fn unexpected(command: &str, env: &[(&str, &str)], want: Decision) -> Vec<String> {
    let (host, policy) = host();
    env.iter()
        .filter_map(|(key, value)| {
            let bin = host.root.join("bin").display().to_string();
            let request = host
                .request(command)
                .with_env(*key, value.replace("{bin}", &bin));
            let verdict = evaluate(&request, &policy);
            let wrong = verdict.decision != want
                || (want != Decision::Allow
                    && (verdict.reason.rule != Rule::EnvAssignment
                        || !verdict.reason.detail.contains(&format!("`{key}`"))));
            wrong.then(|| format!("{key}={value}: {:?} {}", verdict.decision, verdict.reason))
        })
        .collect()
}

/// Confirmed vectors from the review (GNUMAKEFLAGS, CC, ZIPOPT, OPENSSL_CONF) and their kin:
/// make's flags and implicit-rule programs, loaders and glibc's data paths, JVM, Python, Lua,
/// PHP, .NET, Go and Rust build options, and any name nobody has judged.
#[test]
fn denies_requester_variables_not_known_to_be_harmless() {
    let env: &[(&str, &str)] = &[
        ("GNUMAKEFLAGS", "--eval=$(shell touch P)"),
        ("CC", "touch P;"),
        ("CXX", "touch P;"),
        ("AR", "touch P;"),
        ("LDFLAGS", "-Wl,-plugin=/tmp/x.so"),
        ("ZIPOPT", "-TT 'sh -c id'"),
        ("OPENSSL_CONF", "/tmp/provider.cnf"),
        ("OPENSSL_MODULES", "/tmp"),
        ("GCONV_PATH", "/tmp"),
        ("LOCPATH", "/tmp"),
        ("NLSPATH", "/tmp/%N"),
        ("GLIBC_TUNABLES", "glibc.malloc.check=3"),
        ("HOSTALIASES", "/tmp/hosts"),
        ("JAVA_TOOL_OPTIONS", "-javaagent:/tmp/a.jar"),
        ("_JAVA_OPTIONS", "-javaagent:/tmp/a.jar"),
        ("JDK_JAVA_OPTIONS", "-javaagent:/tmp/a.jar"),
        ("PYTHONUSERBASE", "/tmp/pyuser"),
        ("LUA_INIT", "os.execute('id')"),
        ("PHPRC", "/tmp"),
        ("PHP_INI_SCAN_DIR", "/tmp"),
        ("MAVEN_OPTS", "-javaagent:/tmp/a.jar"),
        ("GRADLE_OPTS", "-javaagent:/tmp/a.jar"),
        ("DOTNET_STARTUP_HOOKS", "/tmp/hook.dll"),
        ("RSYNC_CONNECT_PROG", "sh -c id"),
        ("GOFLAGS", "-toolexec=/tmp/x"),
        ("RUSTFLAGS", "-C linker=/tmp/x"),
        ("MANOPT", "-H/tmp/x"),
        ("BROWSER", "/tmp/x"),
        ("TMPDIR", "/home/agent/.ssh"),
        ("LD_PRELOAD", "/tmp/evil.so"),
        ("GIT_CONFIG_COUNT", "1"),
        ("MAKEFLAGS", "--eval=$(shell id)"),
        ("HOME", "/tmp/home"),
        ("SOME_NEW_TOOL_PLUGIN", "/tmp/x"),
        // Listed variables whose value names a file or a command.
        ("LANG", "/tmp/locale"),
        ("LC_ALL", "../../tmp/locale"),
        ("TZ", ":/tmp/zone"),
        ("TERM", "/tmp/terminfo"),
        ("PAGER", "sh -c id"),
        ("GIT_PAGER", "less"),
        // A PATH with a directory of the agent's before the system's: `make` runs its `cc`.
        ("PATH", "/tmp/agent-bin:{bin}"),
        ("PATH", ":{bin}"),
        ("PATH", "{bin}/../bin"),
    ];
    for command in ["make hello", "curl https://example.com", "zip -r a.zip ."] {
        let failures = unexpected(command, env, Decision::Deny);
        assert!(failures.is_empty(), "{command}:\n{}", failures.join("\n"));
    }
}

/// An exact-command approval covers the text a person saw, not the same text with a variable
/// of the requester's.
/// Final review: a command of shell builtins alone kept its auto-allow under any variable, but
/// the shell running it is a program: `LD_PRELOAD` loads into it, bash's `SHELLOPTS=xtrace`
/// runs `PS4`.
#[test]
fn denies_shell_builtins_under_a_requester_variable() {
    let env: &[(&str, &str)] = &[
        ("LD_PRELOAD", "/tmp/x.so"),
        ("SHELLOPTS", "xtrace"),
        ("PS4", "$(id)"),
        ("BASH_ENV", "/tmp/x.sh"),
        ("ENV", "/tmp/x.sh"),
    ];
    for command in ["true", "cd /", "cd / && true"] {
        assert_eq!(
            unexpected(command, env, Decision::Deny),
            Vec::<String>::new(),
            "{command}"
        );
    }
    assert_eq!(
        unexpected("true", &[("LANG", "C")], Decision::Allow),
        Vec::<String>::new()
    );
}

#[test]
fn denies_an_exact_command_approval_under_a_requester_variable() {
    let (host, mut policy) = host();
    policy.allowlist = vec![AllowlistEntry::new(exact_command_pattern("make hello"))];
    let plain = evaluate(&host.request("make hello"), &policy);
    assert_eq!(plain.decision, Decision::Allow, "{}", plain.reason);
    let request = host.request("make hello").with_env("CC", "touch P;");
    let verdict = evaluate(&request, &policy);
    assert_eq!(verdict.decision, Decision::Deny, "{}", verdict.reason);
    assert_eq!(verdict.reason.rule, Rule::EnvAssignment);
}

#[test]
fn allows_requester_variables_that_only_change_presentation_or_labels() {
    let env: &[(&str, &str)] = &[
        ("LANG", "C.UTF-8"),
        ("LANGUAGE", "en_US:en"),
        ("LC_ALL", "C"),
        ("LC_MESSAGES", "de_DE.UTF-8"),
        ("TZ", "Europe/Paris"),
        ("TZ", "UTC"),
        ("TERM", "xterm-256color"),
        ("COLORTERM", "truecolor"),
        ("NO_COLOR", "1"),
        ("FORCE_COLOR", "0"),
        ("CLICOLOR", "0"),
        ("COLUMNS", "120"),
        ("LINES", "40"),
        ("CI", "true"),
        ("GIT_AUTHOR_NAME", "Agent"),
        ("GIT_AUTHOR_EMAIL", "agent@example.com"),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_PAGER", "cat"),
        ("PAGER", ""),
        ("RUST_BACKTRACE", "1"),
        ("PYTHONUNBUFFERED", "1"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        // Only trusted directories (the host's bin is in safeBinTrustedDirs).
        ("PATH", "{bin}:/usr/bin:/bin"),
    ];
    let failures = unexpected("git status", env, Decision::Allow);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn allows_a_requester_path_of_trusted_directories_and_the_hosts_own_settings() {
    let (host, mut policy) = host();
    let bin = host.root.join("bin").display().to_string();
    // The standard host's bin is in safeBinTrustedDirs, so a PATH of it and the system's is
    // the operator's trusted set.
    let trusted = host
        .request("git status")
        .with_env("PATH", format!("{bin}:/usr/bin"));
    assert_eq!(evaluate(&trusted, &policy).decision, Decision::Allow);
    policy.safe_bin_trusted_dirs.clear();
    let untrusted = evaluate(&trusted, &policy);
    assert_eq!(untrusted.decision, Decision::Deny, "{}", untrusted.reason);
    // What the host filled in is its own: not judged, whatever it holds.
    let inherited = host
        .request("git status")
        .with_inherited_env("PATH", bin)
        .with_inherited_env("HOME", "/anywhere");
    assert_eq!(evaluate(&inherited, &policy).decision, Decision::Allow);
}
