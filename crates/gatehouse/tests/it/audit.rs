#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic in a test helper is a failed test"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use gatehouse_store::audit::{AuditEvent, AuditKind, AuditLog, AuditOptions};
use serde_json::{Value, json};

/// A log written through the real writer in a temporary directory, which is also used as
/// `XDG_STATE_HOME` so no test can read the developer's own log.
struct Fixture {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl Fixture {
    fn with_records(n: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        write_log(&path, n);
        Fixture { dir, path }
    }

    fn edit(&self, edit: impl FnOnce(String) -> String) {
        let text = fs::read_to_string(&self.path).unwrap();
        fs::write(&self.path, edit(text)).unwrap();
    }

    /// Runs `gatehouse audit <args> --file <log>`.
    fn run(&self, args: &[&str]) -> Output {
        let mut args: Vec<&str> = args.to_vec();
        args.extend(["--file", self.path.to_str().unwrap()]);
        gatehouse(&args, self.dir.path())
    }
}

fn write_log(path: &Path, n: u64) {
    let (log, _) = AuditLog::open(path, AuditOptions::default()).unwrap();
    for i in 1..=n {
        let payload = json!({ "decision": "allow-once", "i": i });
        let event =
            AuditEvent::new(AuditKind::Decision, payload).with_approval_id(format!("approval-{i}"));
        log.append(1_700_000_000_000 + i, event).unwrap();
    }
    log.sync().unwrap();
}

fn gatehouse(args: &[&str], state_home: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .arg("audit")
        .args(args)
        .env("XDG_STATE_HOME", state_home)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn verify_exits_0_on_an_intact_log() {
    let output = Fixture::with_records(3).run(&["verify"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let expected = "audit log intact: 3 records (seq 1 to 3); head anchors seq 3";
    assert!(stdout(&output).starts_with(expected), "{output:?}");
}

#[test]
fn verify_exits_1_and_names_the_edited_line_in_json() {
    let log = Fixture::with_records(3);
    log.edit(|text| text.replacen("\"i\":2", "\"i\":9", 1));
    let output = log.run(&["verify", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let verdict: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        (&verdict["valid"], &verdict["records"]),
        (&json!(false), &json!(1))
    );
    let problem = &verdict["problem"];
    assert_eq!(
        (&problem["line"], &problem["kind"]),
        (&json!(2), &json!("content-edited"))
    );
    assert_eq!(problem["file"], log.path.to_str().unwrap());
}

#[test]
fn verify_exits_1_on_a_removed_last_record_in_human_output() {
    let log = Fixture::with_records(3);
    log.edit(|text| {
        text.lines()
            .take(2)
            .map(|line| format!("{line}\n"))
            .collect()
    });
    let output = log.run(&["verify"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.starts_with("audit log INVALID: "), "{text}");
    let reason = "ends at seq 2 but the head file anchors seq 3";
    assert!(text.contains(reason), "{text}");
}

#[test]
fn verify_reads_audit_jsonl_from_the_default_data_dir() {
    let state = tempfile::tempdir().unwrap();
    write_log(&state.path().join("gatehouse").join("audit.jsonl"), 2);
    let output = gatehouse(&["verify", "--json"], state.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let verdict: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        (&verdict["valid"], &verdict["lastSeq"]),
        (&json!(true), &json!(2))
    );
}

#[test]
fn verify_exits_2_when_there_is_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let output = gatehouse(
        &["verify", "--data-dir", dir.path().to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("no audit log at"), "{stderr}");
}

#[test]
fn verify_exits_2_when_given_both_a_file_and_a_data_dir() {
    let output = Fixture::with_records(1).run(&["verify", "--data-dir", "b"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn tail_prints_the_last_records() {
    let output = Fixture::with_records(5).run(&["tail", "-n", "2", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let seqs: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["seq"].clone())
        .collect();
    assert_eq!(seqs, vec![json!(4), json!(5)]);
}
