//! Data-driven: every line of `tests/conformance/exec-cases.jsonl` (format in the README there)
//! gets a fresh temporary root, is evaluated, and only the fields the case lists are compared.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use gatehouse_policy::exec::{
    AllowlistEntry, Decision, ExecCommand, ExecEvaluation, ExecPolicy, ExecRequest, SafeBinProfile,
    SkillBin, evaluate,
};
use serde_json::Value;

const CASES: &str = include_str!("../../../../tests/conformance/exec-cases.jsonl");

/// The fields Gatehouse holds to another answer than the reference release, with why (format
/// in the conformance README).
const SUPERSEDED: &str = include_str!("../../../../tests/conformance/superseded.jsonl");

/// Applies the superseded answers of case `id` to its expectations.
fn apply_superseded(id: &str, expect: &mut Value) {
    for line in SUPERSEDED.lines().filter(|l| !l.trim().is_empty()) {
        let over: Value = serde_json::from_str(line).unwrap();
        assert!(over["why"].as_str().is_some_and(|why| !why.is_empty()));
        if over["id"] == id {
            expect[over["field"].as_str().unwrap()] = over["expect"].clone();
        }
    }
}

#[test]
fn every_exec_case_passes() {
    let mut failures = Vec::new();
    let mut count = 0;
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        count += 1;
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let root_text = root.display().to_string();
        let case: Value = serde_json::from_str(&line.replace("{root}", &root_text)).unwrap();
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        let (request, home) = build_request(&case, &root);
        let policy = build_policy(&case);
        let verdict = evaluate(&request, &policy);
        let mut expect = case["expect"].clone();
        apply_superseded(&id, &mut expect);
        let mismatches = compare(&expect, &verdict, &home);
        if !mismatches.is_empty() {
            failures.push(format!(
                "{id}: {}\n    reason: {}\n    segments: {:?}",
                mismatches.join("; "),
                verdict.reason,
                verdict
                    .segments
                    .iter()
                    .map(|s| format!(
                        "{:?} -> {:?} {:?} ({})",
                        s.argv, s.resolved_path, s.satisfied_by, s.reason
                    ))
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert_eq!(count, 224, "the fixture should hold 224 cases");
    assert!(
        failures.is_empty(),
        "{} of {count} exec cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Builds the case's filesystem and request; returns the request and HOME.
fn build_request(case: &Value, root: &Path) -> (ExecRequest, PathBuf) {
    let setup = &case["setup"];
    for file in setup["files"].as_array().into_iter().flatten() {
        let path = root.join(file["path"].as_str().unwrap());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mode = u32::from_str_radix(file["mode"].as_str().unwrap_or("644"), 8).unwrap();
        let content = match file["content"].as_str() {
            Some(content) => content.to_owned(),
            None if mode & 0o111 != 0 => "#!/bin/sh\nexit 0\n".to_owned(),
            None => String::new(),
        };
        fs::write(&path, content).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    }
    for link in setup["symlinks"].as_array().into_iter().flatten() {
        let path = root.join(link["path"].as_str().unwrap());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(link["target"].as_str().unwrap(), &path).unwrap();
    }
    for dir in setup["dirs"].as_array().into_iter().flatten() {
        fs::create_dir_all(root.join(dir.as_str().unwrap())).unwrap();
    }
    let cwd = root.join(setup["cwd"].as_str().unwrap_or(""));
    fs::create_dir_all(&cwd).unwrap();
    let home = root.join(setup["home"].as_str().unwrap_or("home"));
    let path_entries: Vec<String> = setup["path"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| root.join(entry.as_str().unwrap()).display().to_string())
        .collect();
    let mut env = BTreeMap::new();
    env.insert("PATH".to_owned(), path_entries.join(":"));
    env.insert("HOME".to_owned(), home.display().to_string());
    for (key, value) in setup["env"].as_object().into_iter().flatten() {
        env.insert(key.clone(), value.as_str().unwrap_or_default().to_owned());
    }
    let command = match case.get("argv") {
        Some(argv) => ExecCommand::Argv(
            argv.as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect(),
        ),
        None => ExecCommand::Shell(case["command"].as_str().unwrap().to_owned()),
    };
    // The host's PATH and HOME, as a gateway fills them in; a case's own `env` is the request's.
    let inherited = ["PATH", "HOME"]
        .into_iter()
        .filter(|key| setup["env"].get(*key).is_none())
        .map(str::to_owned)
        .collect();
    (
        ExecRequest {
            command,
            cwd,
            env,
            inherited,
        },
        home,
    )
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// Maps `config.tools.exec` and the approvals file the way `gatehouse-config` does.
fn build_policy(case: &Value) -> ExecPolicy {
    let exec = &case["config"]["tools"]["exec"];
    let mut policy = ExecPolicy {
        security: exec["security"].as_str().unwrap().parse().unwrap(),
        ask: exec["ask"].as_str().unwrap().parse().unwrap(),
        strict_inline_eval: exec["strictInlineEval"].as_bool().unwrap_or(false),
        auto_allow_skills: exec["autoAllowSkills"].as_bool().unwrap_or(false),
        safe_bin_trusted_dirs: strings(&exec["safeBinTrustedDirs"])
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        ..ExecPolicy::default()
    };
    if exec.get("safeBins").is_some() {
        policy.safe_bins = strings(&exec["safeBins"]);
    }
    for (name, profile) in exec["safeBinProfiles"].as_object().into_iter().flatten() {
        let limit = |key: &str| profile[key].as_u64().map(|n| n as usize);
        policy.safe_bin_profiles.insert(
            name.clone(),
            SafeBinProfile {
                min_positional: limit("minPositional"),
                max_positional: limit("maxPositional"),
                allowed_value_flags: strings(&profile["allowedValueFlags"]),
                denied_flags: strings(&profile["deniedFlags"]),
            },
        );
    }
    for skill in exec["skillBins"].as_array().into_iter().flatten() {
        policy.skill_bins.push(SkillBin {
            name: skill["name"].as_str().unwrap().to_owned(),
            resolved_path: PathBuf::from(skill["resolvedPath"].as_str().unwrap()),
        });
    }
    let agents = &case["approvals"]["agents"];
    for agent in ["*", "main"] {
        for entry in agents[agent]["allowlist"].as_array().into_iter().flatten() {
            policy.allowlist.push(AllowlistEntry {
                pattern: entry["pattern"].as_str().unwrap().to_owned(),
                arg_pattern: entry["argPattern"].as_str().map(str::to_owned),
            });
        }
    }
    policy
}

fn compare(expect: &Value, verdict: &ExecEvaluation, home: &Path) -> Vec<String> {
    let mut mismatches = Vec::new();
    let mut flag = |key: &str, actual: bool| match expect.get(key).and_then(Value::as_bool) {
        Some(wanted) if wanted != actual => {
            mismatches.push(format!("{key}: expected {wanted}, got {actual}"));
        }
        _ => {}
    };
    flag("analysisOk", verdict.analysis_ok);
    flag("allowlistSatisfied", verdict.allowlist_satisfied);
    flag("requiresApproval", verdict.requires_approval);
    if let Some(wanted) = expect.get("decision").and_then(Value::as_str) {
        let actual = match verdict.decision {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        };
        if wanted != actual {
            mismatches.push(format!("decision: expected {wanted}, got {actual}"));
        }
    }
    if let Some(wanted) = expect.get("allowAlwaysPatterns") {
        let home = home.display().to_string();
        let wanted: BTreeSet<String> = strings(wanted)
            .into_iter()
            .map(|p| match p.strip_prefix('~') {
                Some(rest) => format!("{home}{rest}"),
                None => p,
            })
            .collect();
        let actual: BTreeSet<String> = verdict.allow_always_patterns.iter().cloned().collect();
        if wanted != actual {
            mismatches.push(format!(
                "allowAlwaysPatterns: expected {wanted:?}, got {actual:?}"
            ));
        }
    }
    mismatches
}
