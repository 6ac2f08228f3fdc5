//! sed's, awk's and make's program files against real directories: every spelling of every
//! option binds its file, data operands stay unbound, and what cannot be named is refused with
//! its reason.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use tempfile::TempDir;

use crate::binding::{
    Binding, BindingError, BindingField, BindingInput, BindingMismatch, ScriptAmbiguity,
    digest_fields,
};

const SCRIPT: Result<(), BindingMismatch> = Err(BindingMismatch {
    field: BindingField::Script,
});

/// An executable whose name denotes no tool or interpreter, so argv[0] alone says what runs.
const NEUTRAL: &str = "/usr/bin/env";

const SED: &[(&str, &str)] = &[("x.sed", "s/a/b/\n"), ("y.sed", "p\n"), ("in.txt", "a\n")];

const AWK: &[(&str, &str)] = &[
    ("report.awk", "{ total += $2 } END { print total }\n"),
    ("lib.awk", "function f(x) { return x }\n"),
    ("cmds.txt", "run\n"),
    ("data.csv", "a,1\n"),
];

const MAKE: &[(&str, &str)] = &[
    ("Makefile", "deploy:\n\techo top\n"),
    ("build.mk", "all:\n\techo build\n"),
    ("a.mk", "a:\n\techo a\n"),
    ("b.mk", "b:\n\techo b\n"),
    ("sub/Makefile", "deploy:\n\techo sub\n"),
    ("sub/build.mk", "all:\n\techo sub build\n"),
    ("a/Makefile", "deploy:\n\techo a\n"),
    ("a/b/Makefile", "deploy:\n\techo a/b\n"),
];

/// A working directory holding `files` (`sub/Makefile` creates `sub`).
fn workdir(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        write(dir.path(), name, body);
    }
    dir
}

fn write(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

fn strings(argv: &[&str]) -> Vec<String> {
    argv.iter().map(|arg| (*arg).to_owned()).collect()
}

fn bind_with(
    dir: &Path,
    argv: &[&str],
    env: &BTreeMap<String, String>,
) -> Result<Binding, BindingError> {
    Binding::compute(&BindingInput {
        cwd: dir,
        argv: &strings(argv),
        env,
        agent_id: "main",
        session_key: "agent:main:main",
        resolved_executable: Path::new(NEUTRAL),
    })
}

/// Binds `argv` run by `executable` (canonicalized by the binding).
fn bind_as(dir: &Path, argv: &[&str], executable: &Path) -> Result<Binding, BindingError> {
    Binding::compute(&BindingInput {
        cwd: dir,
        argv: &strings(argv),
        env: &BTreeMap::new(),
        agent_id: "main",
        session_key: "agent:main:main",
        resolved_executable: executable,
    })
}

fn bind(dir: &Path, argv: &[&str]) -> Result<Binding, BindingError> {
    bind_with(dir, argv, &BTreeMap::new())
}

/// Binds `argv` in a directory holding `files`, lets `change` act on it, and re-checks.
fn after(
    files: &[(&str, &str)],
    argv: &[&str],
    change: impl FnOnce(&Path),
) -> Result<(), BindingMismatch> {
    let dir = workdir(files);
    let approved = bind(dir.path(), argv).unwrap();
    change(dir.path());
    approved.verify(&BindingInput {
        cwd: dir.path(),
        argv: &strings(argv),
        env: &BTreeMap::new(),
        agent_id: "main",
        session_key: "agent:main:main",
        resolved_executable: Path::new(NEUTRAL),
    })
}

/// Binds `argv` among `files` and asserts what an edit after approval (or the creation of a file
/// not there yet) does: one of `bound` is a mismatch on `script`, one of `unbound` is not.
fn check(files: &[(&str, &str)], argv: &[&str], bound: &[&str], unbound: &[&str]) {
    for file in bound {
        let result = after_editing(files, argv, file);
        assert_eq!(
            result, SCRIPT,
            "{argv:?}: editing {file} must be a mismatch"
        );
    }
    for file in unbound {
        let result = after_editing(files, argv, file);
        assert_eq!(result, Ok(()), "{argv:?}: {file} is not bound");
    }
}

/// [`after`] an edit of one file.
fn after_editing(
    files: &[(&str, &str)],
    argv: &[&str],
    edited: &str,
) -> Result<(), BindingMismatch> {
    after(files, argv, |dir| write(dir, edited, "echo edited\n"))
}

fn refusal_with(files: &[(&str, &str)], argv: &[&str], env: &[(&str, &str)]) -> ScriptAmbiguity {
    let dir = workdir(files);
    let env = env
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    match bind_with(dir.path(), argv, &env) {
        Err(BindingError::ScriptNotIdentified { reason, .. }) => reason,
        other => panic!("expected a refusal for {argv:?}, got {other:?}"),
    }
}

fn refusal(files: &[(&str, &str)], argv: &[&str]) -> ScriptAmbiguity {
    refusal_with(files, argv, &[])
}

/// Asserts that each of `argvs` among `files` is refused for a reason `expected` accepts.
fn refuses_all(
    files: &[(&str, &str)],
    argvs: &[&[&str]],
    expected: impl Fn(&ScriptAmbiguity) -> bool,
) {
    for argv in argvs {
        let reason = refusal(files, argv);
        assert!(expected(&reason), "{argv:?}: {reason:?}");
    }
}

fn script_of(files: &[(&str, &str)], argv: &[&str]) -> Option<[u8; 32]> {
    let dir = workdir(files);
    bind(dir.path(), argv).unwrap().script
}

fn sha256(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

fn canonical(dir: &Path, name: &str) -> PathBuf {
    fs::canonicalize(dir.join(name)).unwrap()
}

#[test]
fn binds_sed_scripts_in_every_spelling() {
    for argv in [
        &["sed", "-f", "x.sed", "in.txt"][..],
        &["sed", "-fx.sed", "in.txt"],
        &["sed", "--file=x.sed", "in.txt"],
        &["sed", "--file", "x.sed", "in.txt"],
        &["sed", "-nf", "x.sed", "in.txt"],
        &["sed", "in.txt", "-f", "x.sed"],
        &["gsed", "-i", "-f", "x.sed", "in.txt"],
        &["sed", "-e", "p", "-f", "x.sed", "in.txt"],
    ] {
        check(SED, argv, &["x.sed"], &["in.txt", "y.sed"]);
    }
}

#[test]
fn binds_every_sed_script_in_argv_order() {
    let argv = &["sed", "-f", "x.sed", "-f", "y.sed", "in.txt"];
    check(SED, argv, &["x.sed", "y.sed"], &["in.txt"]);
    let dir = workdir(SED);
    let swapped = &["sed", "-f", "y.sed", "-f", "x.sed", "in.txt"];
    let in_order = bind(dir.path(), argv).unwrap().script;
    assert_ne!(in_order, bind(dir.path(), swapped).unwrap().script);
}

#[test]
fn binds_awk_program_files_in_every_spelling() {
    for argv in [
        &["awk", "-f", "report.awk", "data.csv"][..],
        &["gawk", "-freport.awk", "data.csv"],
        &["mawk", "--file=report.awk", "data.csv"],
        &["nawk", "--file", "report.awk", "data.csv"],
        &["gawk", "-E", "report.awk", "data.csv"],
        &["/usr/bin/gawk-5.3.0", "-f", "report.awk", "data.csv"],
        &["awk", "-F,", "-v", "n=1", "-f", "report.awk", "data.csv"],
        &[
            "gawk",
            "-e",
            "BEGIN { x = 1 }",
            "-f",
            "report.awk",
            "data.csv",
        ],
    ] {
        check(AWK, argv, &["report.awk"], &["data.csv", "lib.awk"]);
    }
}

#[test]
fn binds_every_awk_program_file_and_gawks_debugger_commands() {
    let argv = &["awk", "-f", "lib.awk", "-f", "report.awk", "data.csv"];
    check(AWK, argv, &["lib.awk", "report.awk"], &["data.csv"]);
    let debugged = &["gawk", "--debug=cmds.txt", "-f", "report.awk", "data.csv"];
    check(AWK, debugged, &["cmds.txt", "report.awk"], &["data.csv"]);
}

#[test]
fn binds_nothing_new_for_a_program_written_in_argv() {
    for (argv, data) in [
        (&["sed", "s/a/b/", "in.txt"][..], "in.txt"),
        (&["sed", "-n", "-e", "p", "in.txt"], "in.txt"),
        (&["awk", "{ print $1 }", "data.csv"], "data.csv"),
        (
            &["awk", "-F,", "-v", "n=1", "{ print $n }", "data.csv"],
            "data.csv",
        ),
        (&["awk", "-W", "version"], "data.csv"),
        (&["make", "--version"], "Makefile"),
        (&["make", "-v", "deploy"], "Makefile"),
    ] {
        let files = &[SED, AWK, MAKE].concat();
        assert_eq!(script_of(files, argv), None, "{argv:?}");
        check(files, argv, &[], &[data]);
    }
}

/// A single interpreter script keeps the digest stored approvals already hold; program files
/// are a list of (canonical path, contents' digest) pairs.
#[test]
fn keeps_a_scripts_digest_and_lists_program_files() {
    let dir = workdir(&[("deploy.sh", "echo deploying\n")]);
    let script = bind(dir.path(), &["sh", "deploy.sh"]).unwrap().script;
    assert_eq!(script, Some(sha256("echo deploying\n")));

    let dir = workdir(SED);
    let bound = bind(dir.path(), &["sed", "-f", "x.sed", "-f", "y.sed", "in.txt"]).unwrap();
    let (x, y) = (
        canonical(dir.path(), "x.sed"),
        canonical(dir.path(), "y.sed"),
    );
    let listed = digest_fields([
        x.as_os_str().as_encoded_bytes(),
        &sha256("s/a/b/\n"),
        y.as_os_str().as_encoded_bytes(),
        &sha256("p\n"),
    ]);
    assert_eq!(bound.script, Some(listed));
}

#[test]
fn make_binds_the_first_default_makefile_that_exists() {
    let deploy = &["make", "deploy"];
    // Creating `GNUmakefile` after approval makes make read it instead.
    let only = &[("Makefile", "deploy:\n\techo M\n")];
    check(only, deploy, &["Makefile", "GNUmakefile", "makefile"], &[]);
    let two = &[("makefile", "deploy:\n"), ("Makefile", "deploy:\n")];
    check(two, deploy, &["makefile"], &["Makefile"]);
    let three = &[
        ("GNUmakefile", "x:\n"),
        ("makefile", "y:\n"),
        ("Makefile", "z:\n"),
    ];
    check(three, deploy, &["GNUmakefile"], &["makefile", "Makefile"]);
    let removed = after(only, deploy, |dir| {
        fs::remove_file(dir.join("Makefile")).unwrap()
    });
    assert_eq!(removed, SCRIPT);
}

#[test]
fn make_reads_its_makefile_in_the_directory_c_leads_to() {
    for (argv, bound) in [
        (&["make", "-C", "sub", "deploy"][..], "sub/Makefile"),
        (&["make", "-Csub"], "sub/Makefile"),
        (&["make", "--directory=sub"], "sub/Makefile"),
        (&["make", "--directory", "sub", "deploy"], "sub/Makefile"),
        (&["make", "-C", "a", "-C", "b"], "a/b/Makefile"),
        (&["make", "-C", "sub", "-f", "build.mk"], "sub/build.mk"),
    ] {
        check(
            MAKE,
            argv,
            &[bound],
            &["Makefile", "build.mk", "a/Makefile"],
        );
    }
}

#[test]
fn make_binds_every_makefile_named_by_option() {
    for argv in [
        &["make", "-f", "build.mk", "all"][..],
        &["make", "-fbuild.mk"],
        &["make", "-kfbuild.mk"],
        &["make", "--file=build.mk"],
        &["make", "--file", "build.mk"],
        &["make", "--makefile=build.mk", "all"],
        &["gmake", "all", "-f", "build.mk"],
    ] {
        check(MAKE, argv, &["build.mk"], &["Makefile", "a.mk"]);
    }
    let several = &["make", "-f", "a.mk", "--file=b.mk", "a", "b"];
    check(MAKE, several, &["a.mk", "b.mk"], &["Makefile", "build.mk"]);
}

/// Probe: with `Makefile` bound by its contents, a `Makefile.sh` dropped beside it after
/// approval was copied over it by make's built-in `%: %.sh` rule, and its recipes ran.
#[test]
fn make_binds_the_files_its_built_in_rules_could_remake_a_makefile_from() {
    let deploy = &["make", "deploy"];
    let only = &[("Makefile", "deploy:\n\techo M\n")];
    let created = [
        "Makefile.sh",
        "Makefile.c",
        "Makefile,v",
        "s.Makefile",
        "RCS/Makefile,v",
        "SCCS/s.Makefile",
    ];
    check(only, deploy, &created, &["deploy.sh", "sub/Makefile.sh"]);
    let with_input = &[("Makefile", "deploy:\n"), ("Makefile.in", "deploy:\n")];
    check(with_input, deploy, &["Makefile.in"], &[]);
    let named = &["make", "-f", "sub/build.mk"];
    check(MAKE, named, &["sub/build.mk.sh"], &["build.mk.sh"]);
}

#[test]
fn binds_the_same_files_behind_wrappers_and_multiplexers() {
    let files = &[SED, AWK, MAKE, &[("deploy.sh", "echo deploying\n")]].concat();
    for (wrapped, bare, edited) in [
        (
            &["nice", "make", "deploy"][..],
            &["make", "deploy"][..],
            "Makefile",
        ),
        (
            &["env", "FOO=1", "awk", "-f", "report.awk", "data.csv"],
            &["awk", "-f", "report.awk", "data.csv"],
            "report.awk",
        ),
        (
            &["timeout", "5", "sed", "-f", "x.sed", "in.txt"],
            &["sed", "-f", "x.sed", "in.txt"],
            "x.sed",
        ),
        (
            &["nohup", "env", "gmake", "-f", "build.mk"],
            &["gmake", "-f", "build.mk"],
            "build.mk",
        ),
        (
            &["busybox", "awk", "-f", "report.awk", "data.csv"],
            &["awk", "-f", "report.awk", "data.csv"],
            "report.awk",
        ),
        (
            &["busybox", "sh", "deploy.sh"],
            &["sh", "deploy.sh"],
            "deploy.sh",
        ),
    ] {
        let dir = workdir(files);
        let script = bind(dir.path(), wrapped).unwrap().script;
        assert!(script.is_some(), "{wrapped:?}");
        assert_eq!(
            script,
            bind(dir.path(), bare).unwrap().script,
            "{wrapped:?}"
        );
        check(files, wrapped, &[edited], &[]);
    }
}

/// busybox run under an applet's name (`echo`, a link to it) runs that applet: its first
/// argument is no applet, so `echo make` binds nothing, while `busybox make` would.
#[test]
fn reads_busybox_as_a_multiplexer_only_by_its_own_name() {
    let dir = workdir(MAKE);
    let busybox = dir.path().join("busybox");
    fs::write(&busybox, "not a script\n").unwrap();
    let echo = bind_as(dir.path(), &["echo", "make"], &busybox).unwrap();
    assert!(!echo.binds_script());
    let named = bind_as(dir.path(), &["./busybox", "make"], &busybox).unwrap();
    assert!(named.binds_script());
    let awk = bind_as(dir.path(), &["awk", "-f", "build.mk"], &busybox).unwrap();
    assert!(awk.binds_script());
}

#[test]
fn refuses_awk_code_it_cannot_pin() {
    assert_eq!(
        refusal(AWK, &["gawk", "-i", "lib.awk", "-f", "report.awk"]),
        ScriptAmbiguity::ModuleFromSearchPath("-i lib.awk".to_owned())
    );
    assert_eq!(
        refusal(AWK, &["gawk", "--load=ext", "{ print }"]),
        ScriptAmbiguity::ModuleFromSearchPath("-l ext".to_owned())
    );
    assert_eq!(
        refusal(AWK, &["mawk", "-W", "exec", "report.awk"]),
        ScriptAmbiguity::UnknownOption("-W exec".to_owned())
    );
    assert_eq!(
        refusal(AWK, &["awk", "--bogus", "-f", "report.awk"]),
        ScriptAmbiguity::UnknownOption("--bogus".to_owned())
    );
    assert_eq!(
        refusal(AWK, &["awk", "-f", "-", "data.csv"]),
        ScriptAmbiguity::ProgramFromStdin
    );
    assert_eq!(
        refusal(AWK, &["awk", "-f", "missing.awk", "data.csv"]),
        ScriptAmbiguity::NotAFile("missing.awk".to_owned())
    );
    assert_eq!(
        refusal_with(AWK, &["gawk", "-f", "report.awk"], &[("AWKPATH", "/tmp")]),
        ScriptAmbiguity::FilesFromSetting("AWKPATH".to_owned())
    );
}

#[test]
fn refuses_sed_scripts_that_are_not_plain_files() {
    for (argv, reason) in [
        (
            &["sed", "-f", "-", "in.txt"][..],
            ScriptAmbiguity::ProgramFromStdin,
        ),
        (
            &["sed", "--file=-", "in.txt"],
            ScriptAmbiguity::ProgramFromStdin,
        ),
        (
            &["sed", "-f", "/dev/null", "in.txt"],
            ScriptAmbiguity::NotAFile("/dev/null".to_owned()),
        ),
        (
            &["sed", "-f", "/proc/self/status", "in.txt"],
            ScriptAmbiguity::NotAFile("/proc/self/status".to_owned()),
        ),
        (
            &["sed", "-f", ".", "in.txt"],
            ScriptAmbiguity::NotAFile(".".to_owned()),
        ),
        (
            &["sed", "--sandbocks", "-f", "x.sed"],
            ScriptAmbiguity::UnknownOption("--sandbocks".to_owned()),
        ),
    ] {
        assert_eq!(refusal(SED, argv), reason, "{argv:?}");
    }
}

#[test]
fn refuses_make_when_its_makefiles_cannot_be_named() {
    assert!(matches!(
        refusal(&[], &["make", "deploy"]),
        ScriptAmbiguity::NoMakefile(_)
    ));
    assert!(matches!(
        refusal(MAKE, &["make", "-C", "missing"]),
        ScriptAmbiguity::NoMakefile(dir) if dir.ends_with("/missing")
    ));
    for (argv, reason) in [
        (
            &["make", "-f", "missing.mk"][..],
            ScriptAmbiguity::NotAFile("missing.mk".to_owned()),
        ),
        (&["make", "-f", "-"], ScriptAmbiguity::ProgramFromStdin),
        (
            &["make", "--bogus"],
            ScriptAmbiguity::UnknownOption("--bogus".to_owned()),
        ),
        (
            &["make", "MAKEFILES=a.mk", "deploy"],
            ScriptAmbiguity::FilesFromSetting("MAKEFILES=a.mk".to_owned()),
        ),
        (
            &["make", "VPATH=sub", "deploy"],
            ScriptAmbiguity::FilesFromSetting("VPATH=sub".to_owned()),
        ),
        (
            &["make", "--eval=MAKEFILES += a.mk", "deploy"],
            ScriptAmbiguity::FilesFromSetting("--eval".to_owned()),
        ),
        (
            &["env", "MAKEFILES=a.mk", "make", "deploy"],
            ScriptAmbiguity::FilesFromSetting("MAKEFILES".to_owned()),
        ),
        (
            &["bmake", "deploy"],
            ScriptAmbiguity::NotGnuMake("bmake".to_owned()),
        ),
        (
            &["busybox", "busybox", "awk"],
            ScriptAmbiguity::UnclearWrapper("busybox".to_owned()),
        ),
    ] {
        assert_eq!(refusal(MAKE, argv), reason, "{argv:?}");
    }
    for (key, value) in [("MAKEFILES", "a.mk"), ("MAKEFLAGS", "-k -- VPATH=sub")] {
        assert_eq!(
            refusal_with(MAKE, &["make", "deploy"], &[(key, value)]),
            ScriptAmbiguity::FilesFromSetting(key.to_owned()),
        );
    }
}

#[test]
fn refuses_a_default_makefile_that_is_not_a_file() {
    let dir = workdir(&[]);
    fs::create_dir(dir.path().join("GNUmakefile")).unwrap();
    write(dir.path(), "Makefile", "deploy:\n");
    std::os::unix::fs::symlink("gone.mk", dir.path().join("makefile")).unwrap();
    let refused = bind(dir.path(), &["make", "deploy"]);
    assert!(matches!(
        refused,
        Err(BindingError::ScriptNotIdentified {
            reason: ScriptAmbiguity::NotAFile(name),
            ..
        }) if name == "GNUmakefile"
    ));
    fs::remove_dir(dir.path().join("GNUmakefile")).unwrap();
    let dangling = bind(dir.path(), &["make", "deploy"]);
    assert!(matches!(
        dangling,
        Err(BindingError::ScriptNotIdentified {
            reason: ScriptAmbiguity::NotAFile(name),
            ..
        }) if name == "makefile"
    ));
}

#[test]
fn says_why_it_refuses_in_words() {
    let dir = workdir(&[]);
    let error = bind(dir.path(), &["make", "deploy"]).unwrap_err();
    let canonical = fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot identify the script make runs: no makefile in {:?}; make would try to \
             build one with its built-in rules",
            canonical.to_string_lossy()
        )
    );
    let dir = workdir(AWK);
    let error = bind(dir.path(), &["gawk", "-i", "lib.awk", "{ print }"]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot identify the script gawk runs: \"-i lib.awk\" loads code from a search path"
    );
    let error = bind(dir.path(), &["make", "VPATH=src"]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot identify the script make runs: \"VPATH=src\" changes which files it reads code \
         from"
    );
}

/// Sets a file's modification time back, as `touch -d 2019-01-01` does.
fn backdate(path: &Path) {
    let file = fs::File::options().write(true).open(path).unwrap();
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_546_300_800);
    file.set_modified(when).unwrap();
}

/// Attack: `Makefile.sh` older than `Makefile` at approval; `Makefile` is set back afterwards,
/// so make's built-in `%: %.sh` rule copies `Makefile.sh` over it and runs that instead.
#[test]
fn make_binds_when_its_makefile_was_last_changed() {
    let files = &[
        ("Makefile", "deploy:\n\techo M\n"),
        ("Makefile.sh", "deploy:\n\techo evil\n"),
    ];
    let dir = workdir(files);
    backdate(&dir.path().join("Makefile.sh"));
    let approved = bind(dir.path(), &["make", "deploy"]).unwrap();
    backdate(&dir.path().join("Makefile"));
    let now = bind(dir.path(), &["make", "deploy"]).unwrap();
    assert_eq!(approved.mismatch(&now), Some(BindingField::Script));
    let named = &["make", "-f", "build.mk"];
    let result = after(MAKE, named, |dir| backdate(&dir.join("build.mk")));
    assert_eq!(result, SCRIPT);
}

#[test]
fn refuses_make_remaking_every_makefile() {
    let argvs: &[&[&str]] = &[
        &["make", "-B", "deploy"],
        &["make", "-kB"],
        &["make", "--always-make"],
        &["make", "--always"],
        &["make", "-f", "build.mk", "-B"],
    ];
    refuses_all(MAKE, argvs, |reason| {
        matches!(reason, ScriptAmbiguity::RemakesMakefiles(_))
    });
}

/// Attack: a decoy directory named `~` in the working directory was bound while make read
/// `$HOME/x.mk`.
#[test]
fn refuses_make_paths_it_would_expand_from_home() {
    let decoy = &[
        ("~/x.mk", "deploy:\n"),
        ("~/Makefile", "deploy:\n"),
        ("~user/x.mk", "deploy:\n"),
        ("Makefile", "deploy:\n"),
    ];
    let argvs: &[&[&str]] = &[
        &["make", "-f", "~/x.mk", "deploy"],
        &["make", "-f~/x.mk"],
        &["make", "--file=~/x.mk"],
        &["make", "--makefile", "~/x.mk"],
        &["make", "-f", "~user/x.mk"],
        &["make", "-C", "~"],
        &["make", "-C~"],
        &["make", "--directory=~/"],
        &["make", "--dir", "~user"],
    ];
    refuses_all(decoy, argvs, |reason| {
        matches!(reason, ScriptAmbiguity::HomeDirectory(_))
    });
}

/// Attacks: make expands a definition's name (`V$()PATH`), and `MAKEFLAGS` in the env makes it
/// read a makefile first (`--eval=include inc.mk`) while approvers see only the env's keys.
#[test]
fn refuses_make_variables_that_could_name_other_files() {
    let files = &[MAKE, &[("inc.mk", "deploy:\n\techo evil\n")]].concat();
    for (argv, reason) in [
        (
            &["make", "V$()PATH=later", "deploy"][..],
            ScriptAmbiguity::UnclearDefinition("V$()PATH=later".to_owned()),
        ),
        (
            &["make", "MAKE$(E)FILES:=inc.mk"],
            ScriptAmbiguity::UnclearDefinition("MAKE$(E)FILES:=inc.mk".to_owned()),
        ),
        (
            &["make", "override VPATH=sub"],
            ScriptAmbiguity::UnclearDefinition("override VPATH=sub".to_owned()),
        ),
        (
            &["make", "VPATH =sub"],
            ScriptAmbiguity::UnclearDefinition("VPATH =sub".to_owned()),
        ),
        (
            &["make", "vpath+=sub"],
            ScriptAmbiguity::FilesFromSetting("vpath+=sub".to_owned()),
        ),
        (
            &["make", "MAKEFLAGS=--eval=include inc.mk"],
            ScriptAmbiguity::FilesFromSetting("MAKEFLAGS=--eval=include inc.mk".to_owned()),
        ),
        (
            &["make", "GNUMAKEFLAGS::=-B"],
            ScriptAmbiguity::FilesFromSetting("GNUMAKEFLAGS::=-B".to_owned()),
        ),
        (
            &["make", "--eval=$(eval include inc.mk)"],
            ScriptAmbiguity::FilesFromSetting("--eval".to_owned()),
        ),
        (
            &["make", "-E", "vpath %.sh sub"],
            ScriptAmbiguity::FilesFromSetting("--eval".to_owned()),
        ),
        (
            &["make", "--eval=MAKEFLAGS += -B"],
            ScriptAmbiguity::FilesFromSetting("--eval".to_owned()),
        ),
        (
            &["env", "MAKEFLAGS=-k", "make", "deploy"],
            ScriptAmbiguity::FilesFromSetting("MAKEFLAGS".to_owned()),
        ),
        (
            &["env", "-i", "GNUMAKEFLAGS=-k", "make", "deploy"],
            ScriptAmbiguity::FilesFromSetting("GNUMAKEFLAGS".to_owned()),
        ),
    ] {
        assert_eq!(refusal(files, argv), reason, "{argv:?}");
    }
    for (key, value) in [
        ("MAKEFLAGS", "--eval=include\\ inc.mk"),
        ("MAKEFLAGS", "-Einclude\\ inc.mk"),
        ("GNUMAKEFLAGS", "--eval=include\\ inc.mk"),
        ("MAKEFLAGS", "-k"),
        ("VPATH", "sub"),
        ("makefiles", "inc.mk"),
    ] {
        assert_eq!(
            refusal_with(files, &["make", "deploy"], &[(key, value)]),
            ScriptAmbiguity::FilesFromSetting(key.to_owned()),
            "{key}={value}"
        );
    }
    for argv in [
        &["make", "CFLAGS+=-O2", "V=1", "deploy"][..],
        &["make", "PREFIX:=/usr", "lib.dir=x", "_X?=1"],
        &["make", "--eval=all: ; @true"],
    ] {
        assert!(script_of(files, argv).is_some(), "{argv:?}");
    }
}

/// Attack: `make -f rules.s` approved; `rules.S` dropped in later is preprocessed over it by
/// the `%.s: %.S` rule and make restarts with it. Its name does not start with `rules.s`.
#[test]
fn refuses_a_makefile_a_suffix_rule_could_remake() {
    let files = &[
        ("rules.s", "deploy:\n"),
        ("x.C", "deploy:\n"),
        ("x.SH", "deploy:\n"),
    ];
    let argvs: &[&[&str]] = &[
        &["make", "-f", "rules.s", "deploy"],
        &["make", "--file=x.C"],
        &["make", "-f", "x.SH"],
    ];
    refuses_all(files, argvs, |reason| {
        matches!(reason, ScriptAmbiguity::MakefileSuffix(_))
    });
    let named = &["make", "-f", "build.mk"];
    check(MAKE, named, &["build.mk.sh", "build.mk.c"], &["build.S"]);
}

/// Attacks: the GNU reading takes `-f` as `-l`'s (or `-e`'s) value and binds nothing, while BSD
/// sed (`-l` a flag) or BWK awk (skipping the unknown `-e`) runs `evil.*` as the program.
#[test]
fn refuses_an_option_like_word_taken_as_a_value() {
    let files = &[
        SED,
        AWK,
        MAKE,
        &[("evil.sed", "e id\n"), ("evil.awk", "BEGIN{}\n")],
    ]
    .concat();
    let argvs: &[&[&str]] = &[
        &["sed", "-l", "-f", "evil.sed", "in.txt"],
        &["sed", "-n", "-l", "-fevil.sed", "in.txt"],
        &["sed", "--line-length", "--file=evil.sed", "in.txt"],
        &["sed", "-e", "-f", "evil.sed"],
        &["awk", "-e", "-f", "evil.awk", "data.csv"],
        &["awk", "-v", "-f", "evil.awk"],
        &["awk", "-F", "--", "-f", "evil.awk"],
        &["make", "-I", "-f", "build.mk"],
        &["make", "-o", "--file=build.mk"],
    ];
    refuses_all(files, argvs, |reason| {
        matches!(reason, ScriptAmbiguity::OptionAsValue(_))
    });
    for argv in [
        &["sed", "-l", "80", "-f", "x.sed", "in.txt"][..],
        &["awk", "-F-", "-f", "report.awk", "data.csv"],
        &["awk", "-v", "x=-1", "-f", "report.awk", "data.csv"],
        &["sed", "-e", "s/-/+/", "in.txt"],
    ] {
        assert!(bind(workdir(files).path(), argv).is_ok(), "{argv:?}");
    }
}

/// Attack: `./awk` a link to python3 (or `./make` to bmake) was read as awk (or GNU make).
#[test]
fn refuses_a_name_that_denotes_another_program_than_runs() {
    let dir = workdir(&[AWK, MAKE].concat());
    let bin = tempfile::tempdir().unwrap();
    let link = |name: &str| {
        let path = bin.path().join(name);
        fs::write(&path, "").unwrap();
        path
    };
    for (argv, executable) in [
        (&["./awk", "-f", "report.awk"][..], link("python3")),
        (&["./make", "deploy"], link("bmake")),
        (&["sed", "-f", "report.awk"], link("gawk")),
        (&["python3", "report.awk"], link("mawk")),
        (&["./busybox", "make"], link("gmake")),
    ] {
        let refused = bind_as(dir.path(), argv, &executable);
        assert!(
            matches!(
                refused,
                Err(BindingError::ScriptNotIdentified {
                    reason: ScriptAmbiguity::OtherProgram(_),
                    ..
                })
            ),
            "{argv:?} running {executable:?}: {refused:?}"
        );
    }
    for (argv, executable) in [
        (&["awk", "-f", "report.awk"][..], link("mawk")),
        (&["/usr/bin/make", "deploy"], link("make")),
        (&["make", "deploy"], link("gmake-4.3")),
        (&["gawk", "-f", "report.awk"], link("busybox")),
    ] {
        let bound = bind_as(dir.path(), argv, &executable);
        assert!(bound.is_ok_and(|bound| bound.binds_script()), "{argv:?}");
    }
}
