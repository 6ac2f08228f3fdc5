use std::path::{Path, PathBuf};

use gatehouse_config::{SafeBinConfig, load_str};
use gatehouse_policy::exec::{SafeBinProfile, has_builtin_profile};
use serde_json::{Map, Value, json};

const CASES: &str = include_str!("../../../../tests/conformance/decision-cases.jsonl");

/// Builds the merged settings the way the binary does: a config file with the global
/// `tools.exec` and one agent whose `tools.exec` is the case's `local`.
fn resolve(input: &Value) -> SafeBinConfig {
    let global = input.get("global").cloned().unwrap_or(json!({}));
    let local = input.get("local").cloned().unwrap_or(json!({}));
    let text = json!({
        "tools": { "exec": global },
        "agents": { "list": [ { "id": "main", "tools": { "exec": local } } ] },
    })
    .to_string();
    let config = load_str(&text, Path::new("case.json5")).unwrap().config;
    let agent_exec = config
        .agent("main")
        .and_then(|a| a.tools.as_ref())
        .and_then(|t| t.exec.as_ref());
    SafeBinConfig::resolve(config.tools.exec.as_ref(), agent_exec)
}

fn profile_json(profile: &SafeBinProfile) -> Value {
    let mut out = Map::new();
    if let Some(n) = profile.min_positional {
        out.insert("minPositional".into(), json!(n));
    }
    if let Some(n) = profile.max_positional {
        out.insert("maxPositional".into(), json!(n));
    }
    if !profile.allowed_value_flags.is_empty() {
        out.insert(
            "allowedValueFlags".into(),
            json!(profile.allowed_value_flags),
        );
    }
    if !profile.denied_flags.is_empty() {
        out.insert("deniedFlags".into(), json!(profile.denied_flags));
    }
    Value::Object(out)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn check(case: &Value) {
    let id = case["id"].as_str().unwrap();
    let merged = resolve(&case["input"]);
    for (field, expected) in case["expect"].as_object().unwrap() {
        match field.as_str() {
            "safeBins" => {
                let have: Vec<String> = merged.safe_bins.iter().cloned().collect();
                assert_eq!(have, strings(expected), "{id}: safeBins");
            }
            "safeBinsContains" => {
                for name in strings(expected) {
                    assert!(
                        merged.safe_bins.contains(&name),
                        "{id}: safeBins lacks {name}"
                    );
                }
            }
            "unprofiledSafeBins" => {
                let have = merged.unprofiled(has_builtin_profile);
                assert_eq!(have, strings(expected), "{id}: unprofiledSafeBins");
            }
            "trustedDirsContains" => {
                for dir in strings(expected) {
                    assert!(
                        merged.trusted_dirs.contains(&PathBuf::from(&dir)),
                        "{id}: lacks {dir}"
                    );
                }
            }
            "trustedDirsExcludes" => {
                for dir in strings(expected) {
                    assert!(
                        !merged.trusted_dirs.contains(&PathBuf::from(&dir)),
                        "{id}: has {dir}"
                    );
                }
            }
            "mergedProfiles" => {
                let have: Map<String, Value> = merged
                    .profiles
                    .iter()
                    .map(|(name, profile)| (name.clone(), profile_json(profile)))
                    .collect();
                assert_eq!(&Value::Object(have), expected, "{id}: mergedProfiles");
            }
            other => panic!("{id}: expectation {other} is not checked by this test"),
        }
    }
}

#[test]
fn passes_every_safe_bin_config_conformance_case() {
    let cases: Vec<Value> = CASES
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|case: &Value| case["kind"] == "safe-bin-config")
        .collect();
    assert!(!cases.is_empty());
    for case in &cases {
        check(case);
    }
}

#[test]
fn defaults_to_the_stock_safe_bins_and_trusted_dirs() {
    let merged = resolve(&json!({}));
    let bins: Vec<&str> = merged.safe_bins.iter().map(String::as_str).collect();
    assert_eq!(bins, ["cut", "head", "jq", "tail", "tr", "uniq", "wc"]);
    assert_eq!(
        merged.trusted_dirs,
        vec![PathBuf::from("/bin"), PathBuf::from("/usr/bin")]
    );
}

#[test]
fn empty_safe_bins_list_means_none() {
    let merged = resolve(&json!({ "global": { "safeBins": [] } }));
    assert!(merged.safe_bins.is_empty());
}
