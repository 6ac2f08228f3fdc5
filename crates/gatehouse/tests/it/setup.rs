//! `gatehouse setup`: a starting config from a preset, driven by flags as a script would and
//! through piped stdin (`--interactive`) as a person would, with consent and backups.

use std::os::unix::fs::PermissionsExt as _;

use crate::{Files, Run, gatehouse_with_env};

/// Runs `gatehouse setup` with `args`, `stdin`, and `HOME` set to `files`' own `home`.
fn setup(files: &Files, args: &[&str], stdin: &str) -> Run {
    let home = files.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home = home.display().to_string();
    let mut all = vec!["setup"];
    all.extend_from_slice(args);
    gatehouse_with_env(&all, stdin, &[("HOME", &home), ("USER", "ann")])
}

#[test]
fn writes_a_preset_from_flags_with_consent_and_doctor_accepts_it() {
    let files = Files::new();
    let config = files.join("gatehouse.json5").display().to_string();
    let run = setup(
        &files,
        &[
            "--preset",
            "hardened",
            "--workspace",
            "~/work",
            "--config",
            &config,
            "--yes",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("  - They have no network.\n"),
        "{}",
        run.stdout
    );
    let meta = std::fs::metadata(&config).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(files.join("home/work").is_dir(), "the workspace is created");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("sandbox: { mode: \"all\", isolation: \"home\", network: false }"),
        "{text}"
    );
    let home = files.join("home").display().to_string();
    let doctor = gatehouse_with_env(
        &[
            "doctor",
            "--config",
            &config,
            "--data-dir",
            &files.join("data").display().to_string(),
        ],
        "",
        &[("HOME", &home)],
    );
    assert_eq!(doctor.code, 0, "{}", doctor.stdout);
    assert!(
        doctor.stdout.contains(
            "agent main: sandbox mode all, isolation home, network off, workspace ~/work\n"
        ),
        "{}",
        doctor.stdout
    );
}

#[test]
fn writes_nothing_without_consent() {
    let files = Files::new();
    let config = files.join("gatehouse.json5");
    let path = config.display().to_string();
    let run = setup(
        &files,
        &[
            "--preset",
            "assistant",
            "--workspace",
            "~/work",
            "--config",
            &path,
        ],
        "",
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stdout
            .ends_with("Nothing was written: pass --yes to agree to the above.\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("read, change and delete the top-level folders of your home"),
        "the effects are shown before consent: {}",
        run.stdout
    );
    assert!(!config.exists());
    // Nobody to ask, and a question without its flag: refused, naming the flag.
    let run = setup(&files, &["--config", &path, "--yes"], "");
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("--preset is required"),
        "{}",
        run.stderr
    );
    assert!(!config.exists());
}

#[test]
fn never_replaces_a_config_without_a_backup_and_keeps_every_backup() {
    let files = Files::new();
    let path = files.write("gatehouse.json5", "{ /* mine */ }\n");
    let flags = [
        "--preset",
        "permissive",
        "--workspace",
        "~/work",
        "--config",
        &path,
        "--yes",
    ];
    let run = setup(&files, &flags, "");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        std::fs::read_to_string(format!("{path}.bak")).unwrap(),
        "{ /* mine */ }\n"
    );
    let first = std::fs::read_to_string(&path).unwrap();
    assert!(first.contains("mode: \"off\""), "{first}");
    let run = setup(&files, &flags, "");
    assert_eq!(run.code, 0);
    // The first backup stays; the second goes beside it.
    assert_eq!(
        std::fs::read_to_string(format!("{path}.bak")).unwrap(),
        "{ /* mine */ }\n"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{path}.bak.1")).unwrap(),
        first
    );
}

/// A person answering the questions: a wrong answer is asked again, `no` writes nothing, and
/// Custom asks for each setting.
#[test]
fn asks_a_person_each_question_and_takes_only_yes_as_consent() {
    let files = Files::new();
    let config = files.join("gatehouse.json5");
    let path = config.display().to_string();
    let declined = setup(
        &files,
        &["--interactive", "--config", &path],
        "9\n2\n\nno\n",
    );
    assert_eq!(declined.code, 1, "{}{}", declined.stdout, declined.stderr);
    assert!(
        declined.stdout.contains("choose 1-4 or a preset's name"),
        "{}",
        declined.stdout
    );
    assert!(
        declined.stdout.contains("directly on this host as ann"),
        "{}",
        declined.stdout
    );
    assert!(
        declined.stdout.ends_with("Nothing was written.\n"),
        "{}",
        declined.stdout
    );
    assert!(!config.exists());

    let custom = setup(
        &files,
        &["--interactive", "--config", &path],
        "custom\n~/agents/ops\nall\nvolumes\nyes\nyes\n",
    );
    assert_eq!(custom.code, 0, "{}{}", custom.stdout, custom.stderr);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("workspace: \"~/agents/ops\"")
            && text.contains("sandbox: { mode: \"all\", isolation: \"volumes\", network: true }"),
        "{text}"
    );
    assert!(files.join("home/agents/ops").is_dir());
}
