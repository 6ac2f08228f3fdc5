//! Every case of `tests/conformance/exec-cases.jsonl` through the real binary: the case's
//! config and approvals file are written to disk and loaded by `gatehouse check --jsonl`, so
//! the config loader, the approvals-file parser and the composition are all under test.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::gatehouse;

const CASES: &str = include_str!("../../../../tests/conformance/exec-cases.jsonl");

/// The fields Gatehouse holds to another answer than the reference release, with why (the
/// policy crate's conformance test reads the same file).
const SUPERSEDED: &str = include_str!("../../../../tests/conformance/superseded.jsonl");

/// The case's expectations with its superseded answers applied.
fn expectations(case: &Value) -> Value {
    let mut expect = case["expect"].clone();
    for line in SUPERSEDED.lines().filter(|l| !l.trim().is_empty()) {
        let over: Value = serde_json::from_str(line).unwrap();
        if over["id"] == case["id"] {
            expect[over["field"].as_str().unwrap()] = over["expect"].clone();
        }
    }
    expect
}

/// Creates the case's files under `root` and returns the batch request line.
fn build(case: &Value, root: &Path) -> Value {
    let setup = &case["setup"];
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    for file in setup["files"].as_array().into_iter().flatten() {
        let path = root.join(text(&file["path"]));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mode = u32::from_str_radix(file["mode"].as_str().unwrap_or("644"), 8).unwrap();
        let default = if mode & 0o111 != 0 {
            "#!/bin/sh\nexit 0\n"
        } else {
            ""
        };
        fs::write(&path, file["content"].as_str().unwrap_or(default)).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    }
    for link in setup["symlinks"].as_array().into_iter().flatten() {
        let path = root.join(text(&link["path"]));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(text(&link["target"]), &path).unwrap();
    }
    for dir in setup["dirs"].as_array().into_iter().flatten() {
        fs::create_dir_all(root.join(text(dir))).unwrap();
    }
    let cwd = root.join(setup["cwd"].as_str().unwrap_or(""));
    fs::create_dir_all(&cwd).unwrap();
    let home = root.join(setup["home"].as_str().unwrap_or("home"));
    let path: Vec<String> = setup["path"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| root.join(text(p)).display().to_string())
        .collect();
    let mut env = Map::new();
    env.insert("PATH".into(), json!(path.join(":")));
    env.insert("HOME".into(), json!(home.display().to_string()));
    for (key, value) in setup["env"].as_object().into_iter().flatten() {
        env.insert(key.clone(), value.clone());
    }
    let mut line = json!({ "cwd": cwd.display().to_string(), "env": env });
    match case.get("argv") {
        Some(argv) => line["argv"] = argv.clone(),
        None => line["command"] = case["command"].clone(),
    }
    line
}

fn mismatches(expect: &Value, actual: &Value, home: &str) -> Vec<String> {
    let mut out = Vec::new();
    for key in [
        "analysisOk",
        "allowlistSatisfied",
        "requiresApproval",
        "decision",
    ] {
        if let Some(wanted) = expect.get(key)
            && wanted != &actual[key]
        {
            out.push(format!("{key}: expected {wanted}, got {}", actual[key]));
        }
    }
    if let Some(wanted) = expect.get("allowAlwaysPatterns") {
        let set = |v: &Value, expand: bool| -> BTreeSet<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
                .map(|p| match p.strip_prefix('~') {
                    Some(rest) if expand => format!("{home}{rest}"),
                    _ => p.to_owned(),
                })
                .collect()
        };
        if set(wanted, true) != set(&actual["allowAlwaysPatterns"], false) {
            out.push(format!(
                "allowAlwaysPatterns: expected {wanted}, got {}",
                actual["allowAlwaysPatterns"]
            ));
        }
    }
    out
}

#[test]
fn every_exec_case_passes_through_config_approvals_file_and_cli() {
    let mut failures = Vec::new();
    let mut count = 0;
    for raw in CASES.lines().filter(|l| !l.trim().is_empty()) {
        count += 1;
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let case: Value =
            serde_json::from_str(&raw.replace("{root}", &root.display().to_string())).unwrap();
        let line = build(&case, &root);
        let config = root.join("gatehouse.json5");
        fs::write(&config, case["config"].to_string()).unwrap();
        let mut args = vec![
            "check".to_owned(),
            "--jsonl".to_owned(),
            "--config".to_owned(),
            config.display().to_string(),
        ];
        if let Some(approvals) = case.get("approvals") {
            let file = root.join("exec-approvals.json");
            fs::write(&file, approvals.to_string()).unwrap();
            args.extend(["--approvals".to_owned(), file.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = gatehouse(&args, &format!("{line}\n"));
        let id = case["id"].as_str().unwrap();
        let Ok(actual) = serde_json::from_str::<Value>(run.stdout.trim()) else {
            failures.push(format!(
                "{id}: exit {} stdout {:?} stderr {:?}",
                run.code, run.stdout, run.stderr
            ));
            continue;
        };
        let home = line["env"]["HOME"].as_str().unwrap().to_owned();
        let wrong = mismatches(&expectations(&case), &actual, &home);
        if !wrong.is_empty() {
            failures.push(format!(
                "{id}: {} (reason: {})",
                wrong.join("; "),
                actual["reason"]
            ));
        }
    }
    assert_eq!(count, 224);
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
