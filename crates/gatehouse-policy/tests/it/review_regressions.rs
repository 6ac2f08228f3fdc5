//! Regressions from the security review of `security: allowlist`: each vector was allowed
//! while the command ran something unapproved. Every `denies_…` list holds the vectors, and the
//! `allows_…` list beside it the everyday neighbours that must keep running.

use gatehouse_policy::exec::Rule::*;
use gatehouse_policy::exec::{AllowlistEntry, Decision, ExecPolicy, SafeBinProfile};

use crate::support::Expect::{Allow, Refused};
use crate::support::{Host, assert_allowed, check, write_executable};

/// Behind the keyword `time` bash still runs its own builtins: `printf -v` and `test -v`
/// evaluate a subscript, running the `$(…)` in it, while `/usr/bin/printf` was judged.
#[test]
fn denies_builtins_and_assignments_behind_the_time_keyword() {
    check(&[
        ("time printf -v 'a[$(id)]' x", Refused(ShellCarrier)),
        ("time -p printf -v 'a[$(id)]' x", Refused(ShellCarrier)),
        (
            "bash -c 'time printf -v \"a[\\$(touch P)]\" x'",
            Refused(ShellCarrier),
        ),
        ("time printf -vX %s y", Refused(ShellCarrier)),
        ("nice printf -v X y", Refused(ShellCarrier)),
        ("time builtin eval id", Refused(ShellCarrier)),
        ("time command ls", Refused(ShellCarrier)),
        ("time LD_PRELOAD=./evil.so ls", Refused(EnvAssignment)),
        ("time A+=x ls", Refused(EnvAssignment)),
    ]);
    let host = Host::with_bins(&["test", "time"]);
    let policy = host.policy(&["test"]);
    for command in ["time test -v 'a[$(id)]'", "time -p test -R X"] {
        let verdict = host.evaluate(command, &policy);
        assert_eq!(verdict.reason.rule, ShellCarrier, "{command}");
        assert_ne!(verdict.decision, Decision::Allow, "{command}");
    }
}

/// bash's `time` takes one `-p`; `time -p -p X` runs a program named `-p`, not `X`.
#[test]
fn denies_time_options_that_bash_runs_as_the_program() {
    check(&[
        ("time -p -p ls", Refused(WrapperRefused)),
        ("time --portability ls", Refused(WrapperRefused)),
        ("time -- ls", Refused(WrapperRefused)),
        ("time -p -- ls", Refused(WrapperRefused)),
    ]);
}

#[test]
fn allows_time_and_printf_without_the_builtin_only_options() {
    check(&[
        ("time ls -la", Allow),
        ("time -p git status", Allow),
        ("time printf '%s\\n' x", Allow),
        ("printf -- '-v %s' x", Allow),
        ("nice -n 5 printf '%s' x", Allow),
    ]);
    let host = Host::with_bins(&["test", "time"]);
    let policy = host.policy(&["test"]);
    assert_allowed(&host, &policy, &["time test -f Cargo.toml"]);
}

/// GNU sed 4.9 ends a label at whitespace or `;`, BSD sed at the end of the line; text,
/// file names, bracket expressions and `-e` pieces joined by newlines all decide where the
/// next command starts.
#[test]
fn denies_sed_commands_hidden_where_the_tokenizer_lost_its_place() {
    check(&[
        ("sed -n ':a e touch P' in.txt", Refused(InlineEval)),
        ("sed -n ':x w written.txt' in.txt", Refused(InlineEval)),
        ("sed -n ':x\tw written.txt' in.txt", Refused(InlineEval)),
        ("sed -n 'bx e id;:x' in.txt", Refused(InlineEval)),
        ("sed -n 'tx\te id;:x' in.txt", Refused(InlineEval)),
        // `a` text and `r` file names run to the end of the line, `;` included.
        (
            "sed -n 'a x;s/x/\ne touch P\n/p/p' in.txt",
            Refused(InlineEval),
        ),
        (
            "sed -n 'r x;s/x/\ne touch P\n/p/p' in.txt",
            Refused(InlineEval),
        ),
        (
            "sed -n 'R x;y/x/\ne touch P\n/q/p' in.txt",
            Refused(InlineEval),
        ),
        // A delimiter inside a bracket expression does not end the regex.
        ("sed -n 's/[/]/;s|/w out|x|' in.txt", Refused(InlineEval)),
        ("sed -n '/[/]/;s|/w out|x|' in.txt", Refused(InlineEval)),
        // sed joins `-e` pieces with newlines: `a\` makes the next piece its text.
        (
            "sed -n -e 'a\\' -e 's/x/\ne touch P\n/p/p' in.txt",
            Refused(InlineEval),
        ),
        (
            "sed -n -e 's/x/y/;:a' -e 'e touch P' in.txt",
            Refused(InlineEval),
        ),
        // BSD sed reads the whole line as the label, then runs `w`.
        ("sed -n ':a s/x/\nw out\n/p/p' in.txt", Refused(InlineEval)),
        // Exit codes and line lengths are numbers; anything else is not a known command.
        ("sed 'q e id' in.txt", Refused(InlineEval)),
        ("sed 's€x€y€' in.txt", Refused(InlineEval)),
    ]);
}

#[test]
fn allows_everyday_sed_scripts() {
    check(&[
        ("sed ':a;N;$!ba;s/\\n/ /g' in.txt", Allow),
        ("sed -e :a -e '$!N;s/\\n//;ta' in.txt", Allow),
        ("sed -n '/start/,/end/{p;q}' in.txt", Allow),
        ("sed 's/[a-z]*/X/g' in.txt", Allow),
        ("sed 's/[[:space:]]\\+$//' in.txt", Allow),
        ("sed -E 's/([^,]*),.*/\\1/' in.txt", Allow),
        ("sed '1i header' in.txt", Allow),
        ("sed '$a footer; with a semicolon' in.txt", Allow),
        ("sed 'r other.txt' in.txt", Allow),
        ("sed -e 's/a/b/' -e 's/c/d/' in.txt", Allow),
        ("sed 'y/abc/xyz/' in.txt", Allow),
        ("sed -n 'l 80' in.txt", Allow),
        ("sed '5q' in.txt", Allow),
        ("sed '/^$/d; s/  */ /g' in.txt", Allow),
        ("sed 's|/usr/local|/opt|' in.txt", Allow),
    ]);
}

/// A host with `npm`, `npx`, `pnpm` and `yarn` on PATH and `tool` installed in the working
/// directory's `node_modules/.bin`, allowlisted there.
fn node_host() -> (Host, ExecPolicy) {
    let host = Host::with_bins(&["npm", "npx", "pnpm", "yarn", "bunx"]);
    let local = host.root.join("work/node_modules/.bin/tool");
    write_executable(&local);
    let mut policy = host.policy(&[]);
    policy
        .allowlist
        .push(AllowlistEntry::new(local.display().to_string()));
    (host, policy)
}

/// npm parses options anywhere before a `--`, so those after the package name are npm's:
/// `--package` installs another package (running its install scripts), `--registry` and
/// `--node-options` change where it comes from and what node loads. A package spec with a `/`
/// is a directory, tarball or repository npm installs, not a file to run. pnpm passes
/// everything after `exec` to the command, so an option there is the command; yarn 2+ runs its
/// `exec` argument as shell code, from the workspace's dependencies rather than `.bin`.
#[test]
fn denies_package_runner_words_the_runner_reads_differently() {
    let (host, policy) = node_host();
    let mut failures = Vec::new();
    for (command, rule) in [
        (
            "npm exec tool --package=file:../evilpkg --yes",
            WrapperRefused,
        ),
        (
            "npm exec tool --registry=http://127.0.0.1:9/",
            WrapperRefused,
        ),
        (
            "npm x tool --node-options=--require=./hook.js",
            WrapperRefused,
        ),
        ("npm exec tool arg -c id", WrapperRefused),
        ("npm exec --yes tool -- --package=x", WrapperRefused),
        ("npx ./tool", WrapperRefused),
        ("npx user/repo", WrapperRefused),
        ("npm exec ../evilpkg", WrapperRefused),
        ("npx -y -- ./tool", WrapperRefused),
        ("bunx ./tool", WrapperRefused),
        ("pnpm exec --yes tool", WrapperRefused),
        ("pnpm exec -- tool", WrapperRefused),
        ("yarn exec tool", WrapperRefused),
    ] {
        let verdict = host.evaluate(command, &policy);
        if verdict.decision == Decision::Allow || verdict.reason.rule != rule {
            failures.push(format!(
                "{command}: {:?} {}",
                verdict.decision, verdict.reason
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A spec was judged as a file under the working directory, which a broad entry covers.
    let mut broad = policy.clone();
    broad.allowlist = vec![AllowlistEntry::new(format!(
        "{}/work/**",
        host.root.display()
    ))];
    for command in ["npx user/repo", "npx ./pkg", "npm exec -- sub/dir"] {
        let verdict = host.evaluate(command, &broad);
        assert_ne!(verdict.decision, Decision::Allow, "{command}");
    }
}

#[test]
fn allows_package_runners_passing_options_to_the_package() {
    let (host, policy) = node_host();
    assert_allowed(
        &host,
        &policy,
        &[
            "npx tool --package=x --registry=y",
            "npx --yes tool --flag",
            "npm exec -- tool --package=x",
            "npm exec --yes -- tool -c x",
            "npm exec tool arg",
            "npm x tool",
            "pnpm exec tool -r --filter x",
            "bunx tool --flag",
        ],
    );
}

/// Safe bins are matched by the exact name run: on Linux `HEAD` is another program
/// (libwww-perl's `lwp-request`), not `head`, and a custom profile for `head` is not its.
#[test]
fn denies_a_safe_bin_name_in_another_case() {
    let host = Host::with_bins(&["head", "HEAD", "myfilter", "MyFilter"]);
    let mut policy = host.policy(&[]);
    policy.safe_bins = vec!["head".into(), "myfilter".into()];
    let profile = SafeBinProfile {
        max_positional: Some(0),
        allowed_value_flags: vec!["-n".into()],
        ..SafeBinProfile::default()
    };
    policy
        .safe_bin_profiles
        .insert("head".into(), profile.clone());
    policy.safe_bin_profiles.insert("myfilter".into(), profile);
    for command in ["HEAD -n 1", "Head -n 1", "MyFilter -n 1"] {
        let verdict = host.evaluate(command, &policy);
        assert_ne!(verdict.decision, Decision::Allow, "{command}");
    }
    assert_allowed(&host, &policy, &["head -n 1", "myfilter -n 1"]);
}

/// A `-W` filter whose category has a dot imports that module first (`ignore::this.X` prints
/// the Zen of Python; `antigravity` opens a browser): the effect `PYTHONWARNINGS` is refused
/// for.
#[test]
fn denies_python_warning_filters_that_import_a_module() {
    check(&[
        (
            "python3 -W ignore::mod.Cls -m json.tool in.json",
            Refused(InlineEval),
        ),
        (
            "python3 -Wignore::antigravity.X script.py",
            Refused(InlineEval),
        ),
        (
            "python3 -W 'error:msg:pkg.mod.Warn:x:1' script.py",
            Refused(InlineEval),
        ),
    ]);
}

#[test]
fn allows_python_warning_filters_naming_builtin_categories() {
    check(&[
        ("python3 -W ignore -m json.tool in.json", Allow),
        ("python3 -W ignore::DeprecationWarning script.py", Allow),
        (
            "python3 -W 'error:some.message:UserWarning:pkg.mod' script.py",
            Allow,
        ),
        ("python3 -Wd script.py", Allow),
    ]);
}
