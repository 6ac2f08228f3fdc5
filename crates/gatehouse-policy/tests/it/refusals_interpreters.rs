//! Refusals found by probing shells, interpreters and safe bins: shell flags that change what
//! runs, inline code behind options that take a value, code fed on stdin, abbreviated options.

use gatehouse_policy::exec::Decision;
use gatehouse_policy::exec::Rule::*;

use crate::support::Expect::Refused;
use crate::support::{STANDARD_ALLOWLIST, check, standard_host};

#[test]
fn denies_shell_flags_that_change_what_the_payload_runs() {
    check(&[
        // -k: NAME=value words anywhere become the command's environment.
        (
            "bash -kc 'tr a LD_PRELOAD=/tmp/evil.so'",
            Refused(ShellPayload),
        ),
        ("sh -kc 'git status'", Refused(ShellPayload)),
        // -i: interactive, sources ~/.bashrc and expands aliases.
        ("bash -ic 'git status'", Refused(ShellPayload)),
        ("bash -ci 'git status'", Refused(ShellPayload)),
        ("bash -lic 'git status'", Refused(ShellPayload)),
        // -s: commands from stdin; -o/-O: an option named by the next word; -p, -a: others.
        ("bash -sc 'git status'", Refused(ShellPayload)),
        ("bash -Oc extglob 'git status'", Refused(ShellPayload)),
        ("bash -co posix 'git status'", Refused(ShellPayload)),
        ("bash -pc 'git status'", Refused(ShellPayload)),
        ("sh -ac 'git status'", Refused(ShellPayload)),
        // Options after -c: the command string is a later word.
        ("bash -c -k 'tr a X=1'", Refused(ShellPayload)),
        ("bash -c +x", Refused(ShellPayload)),
    ]);
}

#[test]
fn denies_inline_code_behind_options_that_take_a_value() {
    check(&[
        ("python3 -W ignore -c 'print(1)'", Refused(InlineEval)),
        ("python3 -X dev -c 'print(1)'", Refused(InlineEval)),
        (
            "python3 --check-hash-based-pycs always -c 'print(1)'",
            Refused(InlineEval),
        ),
        (
            "python3 -E -W error -X utf8 -bc 'print(1)'",
            Refused(InlineEval),
        ),
        ("perl -I . -e 'system(\"id\")'", Refused(InlineEval)),
        ("perl -I lib -E 'say 1'", Refused(InlineEval)),
        ("perl -l0ne 'print'", Refused(InlineEval)),
        ("node -r fs -e 'process.exit()'", Refused(InlineEval)),
        ("node --require fs -e 'process.exit()'", Refused(InlineEval)),
        ("node --import fs -p 1", Refused(InlineEval)),
        ("node -C dev --eval 1", Refused(InlineEval)),
        ("node --env-file .env -e 1", Refused(InlineEval)),
        ("node --input-type module -e 1", Refused(InlineEval)),
        ("ruby -I lib -e 'system(\"id\")'", Refused(InlineEval)),
        ("ruby -r json -e 1", Refused(InlineEval)),
        (
            "php -d memory_limit=1G -r 'system(\"id\");'",
            Refused(InlineEval),
        ),
        ("php -c php.ini -B 'system(\"id\");'", Refused(InlineEval)),
        ("sed -l 5 '1e id' x", Refused(InlineEval)),
        ("sed --line-length 5 '1e id' x", Refused(InlineEval)),
        ("sed --line-length=5 '1e id' x", Refused(InlineEval)),
        ("xargs --replace id", Refused(InlineEval)),
        ("xargs --max-lines id", Refused(InlineEval)),
        ("xargs -i id", Refused(InlineEval)),
        ("xargs -l id", Refused(InlineEval)),
        ("xargs --eof id", Refused(InlineEval)),
        ("xargs -n 1 -P 4 id", Refused(InlineEval)),
    ]);
}

#[test]
fn denies_inline_code_wherever_the_tool_reads_it() {
    check(&[
        // gawk: -e/--source are program text even beside -f.
        (
            "awk -f x.awk -e 'BEGIN{system(\"id\")}'",
            Refused(InlineEval),
        ),
        (
            "awk --file=x.awk --source='BEGIN{system(\"id\")}'",
            Refused(InlineEval),
        ),
        (
            "awk -F, -f x.awk --source 'BEGIN{system(\"id\")}' d.csv",
            Refused(InlineEval),
        ),
        ("awk -W source='BEGIN{}' x", Refused(InlineEval)),
        // GNU sed permutes: options after an operand still count.
        ("sed -n p -e '1e id' x", Refused(InlineEval)),
        ("sed p x --expression='1e id'", Refused(InlineEval)),
        // getopt_long abbreviations.
        ("sed --expr='1e id' x", Refused(InlineEval)),
        ("xargs --repl id", Refused(InlineEval)),
    ]);
}

#[test]
fn denies_code_smuggled_in_module_and_setting_options() {
    check(&[
        // `python -m` runs the module with the rest as its arguments.
        ("python3 -m timeit 'import os'", Refused(InlineEval)),
        ("python3 -m pdb -c 'import os' x.py", Refused(InlineEval)),
        ("python3 -m code", Refused(InlineEval)),
        ("python3 -mtimeit 'import os'", Refused(InlineEval)),
        // -M is pasted into `use …;`.
        ("perl '-MPOSIX;system(q(id))' x.pl", Refused(InlineEval)),
        ("perl -M5\\;system\\(1\\) x.pl", Refused(InlineEval)),
        // A data: URL is the module's source.
        (
            "node --import 'data:text/javascript,process.exit()' app.js",
            Refused(InlineEval),
        ),
        (
            "node --experimental-loader=data:text/javascript,1 app.js",
            Refused(InlineEval),
        ),
        (
            "php -d auto_prepend_file=/tmp/x.php app.php",
            Refused(InlineEval),
        ),
        // Interactive modes and debuggers read code from stdin.
        ("python3 -i app.py", Refused(InlineEval)),
        ("perl -d app.pl", Refused(InlineEval)),
        ("node -i", Refused(InlineEval)),
        ("node inspect app.js", Refused(InlineEval)),
        ("php -a", Refused(InlineEval)),
        // A debugger port: whoever reaches it runs code in the process.
        ("node --inspect app.js", Refused(InlineEval)),
        ("node --inspect=0.0.0.0:9229 app.js", Refused(InlineEval)),
        ("node --inspect-brk app.js", Refused(InlineEval)),
        ("node --inspect-wait=9230 app.js", Refused(InlineEval)),
    ]);
}

#[test]
fn denies_interpreter_code_fed_on_stdin() {
    check(&[
        (
            "jq -rn '\"1e id\"' | sed -f - /etc/hostname",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"1e id\"' | sed -f /dev/stdin /etc/hostname",
            Refused(InlineEval),
        ),
        ("jq -rn '\"1e id\"' | sed --file=- x", Refused(InlineEval)),
        ("jq -rn '\"1e id\"' | sed -nf - x", Refused(InlineEval)),
        ("jq -rn '\"x\"' | awk -f - x", Refused(InlineEval)),
        (
            "jq -rn '\"x\"' | awk --file=/dev/fd/0 x",
            Refused(InlineEval),
        ),
        ("jq -rn '\"system(q(id))\"' | perl -", Refused(InlineEval)),
        ("jq -rn '\"system(q(id))\"' | perl -w", Refused(InlineEval)),
        ("jq -rn '\"system(q(id))\"' | perl -n", Refused(InlineEval)),
        (
            "jq -rn '\"system(q(id))\"' | perl /dev/stdin",
            Refused(InlineEval),
        ),
        ("jq -rn '\"print(1)\"' | python3 -", Refused(InlineEval)),
        ("jq -rn '\"print(1)\"' | python3 -u", Refused(InlineEval)),
        (
            "jq -rn '\"print(1)\"' | python3 -E /dev/stdin",
            Refused(InlineEval),
        ),
        ("jq -rn '\"1\"' | node -", Refused(InlineEval)),
        ("jq -rn '\"1\"' | node --no-warnings", Refused(InlineEval)),
        (
            "jq -rn '\"1\"' | node -r /dev/stdin app.js",
            Refused(InlineEval),
        ),
        ("jq -rn '\"1\"' | ruby -w", Refused(InlineEval)),
        (
            "jq -rn '\"1\"' | ruby -r /dev/stdin app.rb",
            Refused(InlineEval),
        ),
        ("jq -rn '\"1\"' | php -n", Refused(InlineEval)),
        (
            "jq -rn '\"1\"' | php -f /proc/self/fd/0",
            Refused(InlineEval),
        ),
    ]);
}

#[test]
fn denies_options_the_interpreter_grammars_do_not_know() {
    check(&[
        ("python3 -Z x.py", Refused(InlineEval)),
        ("perl -k x.pl", Refused(InlineEval)),
        ("perl --bogus x.pl", Refused(InlineEval)),
        (
            "node --experimental-unknown-thing x -e 1",
            Refused(InlineEval),
        ),
        ("sed --bogus 's/a/b/' x", Refused(InlineEval)),
        ("sed -l x 's/a/b/' f", Refused(InlineEval)),
        ("xargs -Q id", Refused(InlineEval)),
        ("awk --bogus 'x' f", Refused(InlineEval)),
    ]);
}

#[test]
fn denies_safe_bin_abbreviations_the_real_tool_reads_otherwise() {
    check(&[
        // Real grep has `--binary` (-U), a flag: `.env` is a file it reads.
        ("grep -e SECRET --binary .env", Refused(SafeBinRefused)),
        (
            "cat x | grep -e SECRET --binary .env",
            Refused(SafeBinRefused),
        ),
        // Ambiguous in the real tool (--binary, --binary-files).
        ("cat x | grep -e x --bin text", Refused(SafeBinRefused)),
        // Prefixes of denied options stay denied.
        ("cat x | tail --fo", Refused(SafeBinRefused)),
        ("cat x | wc --fil=list", Refused(SafeBinRefused)),
        ("cat x | sort --comp=sh", Refused(SafeBinRefused)),
        // jq matches long options exactly.
        ("cat x | jq --raw .", Refused(SafeBinRefused)),
    ]);
}

#[test]
fn denies_a_bare_interpreter_reading_its_program_from_a_pipe() {
    check(&[
        ("jq -rn '\"system(q(id))\"' | perl", Refused(InlineEval)),
        ("cat notes.txt | python3", Refused(InlineEval)),
        ("ls && echo x | ruby", Refused(InlineEval)),
        // The shell's stdin is the pipe, so every command inside it may read it.
        (
            "echo 'print(1)' | sh -c 'true; python3'",
            Refused(InlineEval),
        ),
        ("echo x | bash -c 'node'", Refused(InlineEval)),
    ]);
}

/// Probe report: `/dev/stdin` has many spellings, and a `..` path may climb to any of them.
#[test]
fn denies_code_from_stdin_through_equivalent_paths() {
    check(&[
        (
            "jq -rn '\"1e id\"' | sed -f /dev/../dev/stdin x",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"1e id\"' | sed -f ../../../dev/stdin x",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"1e id\"' | sed -f /proc/self/root/dev/stdin x",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"print(1)\"' | python3 /dev/../dev/stdin",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"x\"' | awk -f /dev/fd/../fd/0 x",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"system(q(id))\"' | perl /dev//../dev/stdin",
            Refused(InlineEval),
        ),
        ("python3 ../../x.py", Refused(InlineEval)),
        ("sed -f lib/../../x.sed f", Refused(InlineEval)),
    ]);
}

/// Probe report: `make --eval` and a makefile on stdin were allowed for an allowlisted make.
#[test]
fn denies_make_code_on_the_command_line_or_stdin() {
    check(&[
        ("make --eval='$(shell id)'", Refused(InlineEval)),
        ("make --eval '$(shell id)' all", Refused(InlineEval)),
        ("make all -E '$(shell id)'", Refused(InlineEval)),
        ("make -sE'$(shell id)'", Refused(InlineEval)),
        ("make --ev='$(shell id)'", Refused(InlineEval)),
        ("jq -rn '\"x:;id\"' | make -f -", Refused(InlineEval)),
        (
            "jq -rn '\"x:;id\"' | make -f /dev/stdin",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"x:;id\"' | make --file=/dev/stdin",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"x:;id\"' | make --makefile=/dev/fd/0",
            Refused(InlineEval),
        ),
        ("make -C /dev -f stdin", Refused(InlineEval)),
        // A variable override changes what every recipe runs.
        ("make test SHELL=/tmp/evil", Refused(InlineEval)),
        ("make '.SHELLFLAGS=-c id;'", Refused(InlineEval)),
        ("make --no-such-option test", Refused(InlineEval)),
    ]);
}

/// Probe report: node's test reporter and env files load code.
#[test]
fn denies_node_options_that_load_code() {
    check(&[
        (
            "node --test '--test-reporter=data:text/javascript,process.exit(1)'",
            Refused(InlineEval),
        ),
        (
            "node --test --test-reporter data:text/javascript,1",
            Refused(InlineEval),
        ),
        (
            "jq -rn '\"1\"' | node --test --test-reporter=/dev/stdin",
            Refused(InlineEval),
        ),
        (
            "cat x | node --env-file=/dev/stdin app.js",
            Refused(InlineEval),
        ),
        ("node --env-file .env app.js", Refused(InlineEval)),
        ("node --env-file-if-exists=.env app.js", Refused(InlineEval)),
        ("node --openssl-config=x.cnf app.js", Refused(InlineEval)),
    ]);
}

/// Probe report: `python3 -m pylint --init-hook=CODE` ran code; file tools with a code hook or
/// a plugin-by-name option are no longer runnable modules.
#[test]
fn denies_python_modules_with_code_hooks() {
    check(&[
        (
            "python3 -m pylint --init-hook='import os; os.system(\"id\")' x.py",
            Refused(InlineEval),
        ),
        (
            "python3 -m pylint --load-plugins=evil x.py",
            Refused(InlineEval),
        ),
        ("python3 -m pytest -p evil tests", Refused(InlineEval)),
        (
            "python3 -m mypy --python-executable=./evil x.py",
            Refused(InlineEval),
        ),
        (
            "python3 -m flake8 --append-config=x.cfg x.py",
            Refused(InlineEval),
        ),
        ("python3 -m isort x.py", Refused(InlineEval)),
    ]);
}

/// Probe report: `xargs` without a command runs `echo` from PATH, which is never judged.
#[test]
fn denies_xargs_without_a_command() {
    check(&[
        ("jq -rn 1 | xargs", Refused(InlineEval)),
        ("ls | xargs -0 -n 1", Refused(InlineEval)),
        ("ls | xargs --max-args=2", Refused(InlineEval)),
    ]);
}

/// A program file named by a word that only the filesystem shows to be stdin: a symlink to
/// `/dev/stdin`, `stdin` read from `/dev` (the request's cwd or a `cd`), a `/proc` file. The
/// words themselves look like any script, so only opening the path tells them apart.
#[test]
fn denies_program_files_that_reach_stdin_through_the_filesystem() {
    use crate::support::Expect::Allow;

    let host = standard_host();
    let work = host.root.join("work");
    for script in ["app.js", "sub/app.js", "lib/hook.js", "edit.sed"] {
        let path = work.join(script);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    std::os::unix::fs::symlink("/dev/stdin", work.join("s")).unwrap();
    std::os::unix::fs::symlink("/dev", work.join("devices")).unwrap();
    for (link, target) in [
        ("mk/Makefile", "/dev/stdin".into()),
        ("nd/app.js", "/dev/stdin".into()),
        ("a/t", "/dev/stdin".into()),
        ("a/up", host.root.clone()),
    ] {
        let link = work.join(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    }
    std::fs::create_dir_all(host.root.join("home/w")).unwrap();
    std::fs::write(host.root.join("home/w/x.py"), "").unwrap();
    std::fs::write(work.join("Makefile"), "all:\n").unwrap();
    let policy = host.policy(STANDARD_ALLOWLIST);
    let verdict = |command: &str, cwd: &std::path::Path| {
        let mut request = host.request(command);
        request.cwd = cwd.to_path_buf();
        let verdict = gatehouse_policy::exec::evaluate(&request, &policy);
        if verdict.decision == Decision::Allow {
            Allow
        } else {
            Refused(verdict.reason.rule)
        }
    };
    let mut failures = Vec::new();
    let mut expect = |command: &str, cwd: &std::path::Path, expected| {
        let actual = verdict(command, cwd);
        if actual != expected {
            failures.push(format!("{command:?} in {cwd:?}: {actual:?}"));
        }
    };
    for command in [
        "echo 1 | node s",
        "echo 1 | bash -c 'node s'",
        "printf p | sed -f s edit.sed",
        "echo 1 | node -r ./s app.js",
        "echo 1 | bash -c 'cd /dev && node stdin'",
        "echo 1 | bash -c 'cd /dev/fd; node 0'",
        "printf p | bash -c 'cd devices && sed -f stdin edit.sed'",
        "cd /proc/self && python3 environ",
        "cd \"$D\" && node app.js",
        // bash reads `dir/..` in a `cd` as text: `/dev/fd/..` is `/dev`, `a/up/..` is `a`.
        "echo 1 | bash -c 'cd /dev/fd/.. && python3 stdin'",
        "echo 1 | bash -c 'cd a/up/.. && python3 t'",
        // make's default makefile, here or below `-C`; ruby's script below `-C`.
        "printf 'all:' | make -C mk",
        "printf 'all:' | bash -c 'cd mk && make'",
        "echo 1 | ruby -C /dev stdin",
        // node tries the name with an extension.
        "echo 1 | bash -c 'cd nd && node app'",
        // Kept symlinks make a planted link to stdin a module's source.
        "echo 1 | node --preserve-symlinks app.js",
        "echo 1 | node --preserve-symlinks-main app.js",
    ] {
        expect(command, &work, Refused(InlineEval));
    }
    // An assignment in front of `cd` is refused itself (it may outlive the `cd`); the
    // directory it moves to is then unknown, so `stdin` is not judged as a plain file either.
    expect(
        "echo 1 | bash -c 'CDPATH=/ cd dev && python3 stdin'",
        &work,
        Refused(EnvAssignment),
    );
    // A shell script is looked up the same way; one that is not a plain file is not found.
    expect("echo 1 | bash s", &work, Refused(Unresolved));
    for (cwd, command) in [
        ("/dev", "echo 1 | node stdin"),
        ("/dev/fd", "echo 1 | node 0"),
        ("/proc/self", "node environ"),
    ] {
        expect(command, std::path::Path::new(cwd), Refused(InlineEval));
    }
    // Plain files stay allowed, after a `cd` too: relative names are checked in every
    // directory the shell may be in, and one missing everywhere runs nothing.
    for command in [
        "node app.js",
        "node -r ./lib/hook.js app.js",
        "sed -f edit.sed app.js",
        "cd sub && node app.js",
        "cd sub; node app.js",
        "cd .. && node work/sub/app.js",
        "node missing.js",
        "cd ~/w && python3 x.py",
        "cd -- sub && node app.js",
        "node .",
        "make",
        "make -C sub test",
    ] {
        expect(command, &work, Allow);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
