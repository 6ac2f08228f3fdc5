//! The approval binding over argv built from the words sed, awk and make read program files
//! with: computing it never panics, and computing it twice over unchanged files agrees, so an
//! unchanged run is never denied as a mismatch.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use gatehouse_policy::binding::{Binding, BindingInput};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};

/// An executable whose name denotes no tool or interpreter, so argv[0] alone says what runs.
const NEUTRAL: &str = "/usr/bin/env";

const PROGRAMS: &[&str] = &[
    "sed", "awk", "gawk", "mawk", "make", "gmake", "bmake", "nice", "env", "timeout", "busybox",
    "sh",
];

const WORDS: &[&str] = &[
    "-f",
    "-fx.sed",
    "--file=x.awk",
    "--file",
    "--makefile=build.mk",
    "-C",
    "-Csub",
    "--directory=sub",
    "sub",
    "x.sed",
    "x.awk",
    "build.mk",
    "Makefile",
    "data.csv",
    "-",
    "--",
    "-i",
    "-l",
    "-W",
    "version",
    "exec",
    "-E",
    "-e",
    "p",
    "-n",
    "-k",
    "-v",
    "--version",
    "A=1",
    "VPATH=x",
    "make",
    "awk",
    "sed",
    "5",
    "missing",
    ".",
    "/",
    "sub/Makefile.sh",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(WORDS).prop_map(str::to_owned),
        1 => "[a-zA-Z./=-]{0,8}",
    ]
}

#[test]
fn binding_program_files_never_panics_and_is_stable() {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [
        ("x.sed", "p\n"),
        ("x.awk", "{ print }\n"),
        ("build.mk", "all:\n"),
        ("Makefile", "all:\n"),
        ("Makefile.in", "all:\n"),
        ("data.csv", "a,1\n"),
        ("sub/Makefile", "all:\n"),
    ] {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }
    let env = BTreeMap::new();
    let strategy = (select(PROGRAMS), proptest::collection::vec(word(), 0..7));
    let mut runner = TestRunner::new(Config::with_cases(512));
    runner
        .run(&strategy, |(program, args)| {
            let argv: Vec<String> = std::iter::once(program.to_owned()).chain(args).collect();
            let input = BindingInput {
                cwd: dir.path(),
                argv: &argv,
                env: &env,
                agent_id: "main",
                session_key: "s",
                resolved_executable: Path::new(NEUTRAL),
            };
            if let Ok(binding) = Binding::compute(&input) {
                prop_assert_eq!(binding.verify(&input), Ok(()), "{:?}", argv);
            }
            Ok(())
        })
        .unwrap();
}
