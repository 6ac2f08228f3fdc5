#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic in a test helper is a failed test"
)]

use std::fs;
use std::path::Path;
use std::process::Output;

use gatehouse_store::audit::{AuditEvent, AuditKind, AuditLog, AuditOptions};
use serde_json::{Value, json};

/// Writes `n` records to `path` through the real writer and closes it.
fn write_log(path: &Path, n: u64) {
    let (log, _) = AuditLog::open(path, AuditOptions::default()).unwrap();
    for i in 1..=n {
        let event = AuditEvent::new(
            AuditKind::Decision,
            json!({ "decision": "allow-once", "i": i }),
        )
        .with_approval_id(format!("approval-{i}"));
        log.append(1_700_000_000_000 + i, event).unwrap();
    }
    log.sync().unwrap();
}

fn gatehouse(args: &[&str], state_home: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"))
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 3);
    let output = gatehouse(
        &["audit", "verify", "--file", path.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).starts_with("audit log intact: 3 records (seq 1 to 3); head anchors seq 3"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn verify_exits_1_and_names_the_edited_line_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 3);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replacen("\"i\":2", "\"i\":9", 1)).unwrap();

    let args = [
        "audit",
        "verify",
        "--json",
        "--file",
        path.to_str().unwrap(),
    ];
    let output = gatehouse(&args, dir.path());
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let verdict: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(verdict["valid"], false);
    assert_eq!(verdict["records"], 1);
    let problem = &verdict["problem"];
    assert_eq!(problem["line"], 2);
    assert_eq!(problem["kind"], "content-edited");
    assert_eq!(problem["file"], path.to_str().unwrap());
}

#[test]
fn verify_exits_1_on_a_removed_last_record_in_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 3);
    let text = fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text.lines().take(2).collect();
    fs::write(&path, format!("{}\n", kept.join("\n"))).unwrap();

    let output = gatehouse(
        &["audit", "verify", "--file", path.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.starts_with("audit log INVALID: "), "{text}");
    assert!(
        text.contains("ends at seq 2 but the head file anchors seq 3"),
        "{text}"
    );
}

#[test]
fn verify_reads_audit_jsonl_from_the_default_data_dir() {
    let state = tempfile::tempdir().unwrap();
    write_log(&state.path().join("gatehouse").join("audit.jsonl"), 2);
    let output = gatehouse(&["audit", "verify", "--json"], state.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let verdict: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        (verdict["valid"].clone(), verdict["lastSeq"].clone()),
        (json!(true), json!(2))
    );
}

#[test]
fn verify_exits_2_when_there_is_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "audit",
        "verify",
        "--data-dir",
        dir.path().to_str().unwrap(),
    ];
    let output = gatehouse(&args, dir.path());
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("no audit log at"), "{stderr}");
}

#[test]
fn verify_exits_2_when_given_both_a_file_and_a_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let output = gatehouse(
        &["audit", "verify", "--file", "a", "--data-dir", "b"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn tail_prints_the_last_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    write_log(&path, 5);
    let args = ["audit", "tail", "-n", "2", "--file", path.to_str().unwrap()];
    let output = gatehouse(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let seqs: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["seq"].clone())
        .collect();
    assert_eq!(seqs, vec![json!(4), json!(5)]);
}
