use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::{Files, gatehouse};

fn tools(args: &[&str]) -> Value {
    let mut all = vec!["tools", "--json"];
    all.extend_from_slice(args);
    let run = gatehouse(&all, "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(run.stdout.trim()).unwrap()
}

fn entry<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
}

#[test]
fn prints_the_documented_json_shape() {
    let out = tools(&[]);
    let mut keys: Vec<&String> = out.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["allowed", "tools", "warnings"]);
    let allowed: Vec<&str> = out["allowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut sorted = allowed.clone();
    sorted.sort();
    assert_eq!(allowed, sorted, "allowed is sorted");
    for tool in out["tools"].as_array().unwrap() {
        let mut keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["allowed", "name", "removedBy"]);
        assert_eq!(
            tool["allowed"].as_bool().unwrap(),
            allowed.contains(&tool["name"].as_str().unwrap())
        );
    }
}

#[test]
fn names_the_config_key_that_removed_a_tool() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ agents: { list: [ { id: 'main' }, { id: 'ops', tools: { deny: ['exec'] } } ] } }",
    );
    let out = tools(&["--config", &config, "--agent", "ops"]);
    let exec = entry(&out, "exec");
    assert_eq!(exec["allowed"], false);
    assert_eq!(exec["removedBy"]["configPath"], "agents.list[1].tools.deny");
    assert_eq!(exec["removedBy"]["step"], "agent");
    let out = tools(&["--config", &config, "--agent", "main"]);
    assert_eq!(entry(&out, "exec")["allowed"], true);
}

/// Operator walkthrough: the readable output showed `removed by owner ((owner-only tool))`, and
/// `--agent` with an id the config does not list answered with the global settings.
#[test]
fn names_each_removal_once_in_words_and_refuses_an_unlisted_agent() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ tools: { profile: 'full' }, agents: { list: [ { id: 'ops', tools: { deny: ['exec'] } } ] } }",
    );
    let run = gatehouse(&["tools", "--config", &config, "--agent", "ops"], "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("\n  cron: removed by owner (owner-only tool)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\n  exec: removed by agent (agents.list[0].tools.deny)\n"),
        "{}",
        run.stdout
    );
    let run = gatehouse(&["tools", "--config", &config, "--agent", "osp"], "");
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr
            .starts_with("gatehouse: agent `osp` is not in `agents.list` (`ops`)"),
        "{}",
        run.stderr
    );
}

#[test]
fn owner_only_tools_need_the_owner_flag() {
    let files = Files::new();
    let config = files.write("gh.json5", "{ tools: { profile: 'full' } }");
    let out = tools(&["--config", &config]);
    assert_eq!(entry(&out, "cron")["allowed"], false);
    let out = tools(&["--config", &config, "--owner"]);
    assert_eq!(entry(&out, "cron")["allowed"], true);
}

#[test]
fn a_sub_agent_never_gets_more_than_its_parent() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ tools: { profile: 'full' }, agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } }",
    );
    let parent = tools(&["--config", &config, "--owner"]);
    let child = tools(&["--config", &config, "--owner", "--spawn-depth", "1"]);
    let leaf = tools(&["--config", &config, "--owner", "--spawn-depth", "2"]);
    let set = |v: &Value| -> Vec<String> {
        v["allowed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    for name in set(&child) {
        assert!(set(&parent).contains(&name), "{name} not in parent");
    }
    assert!(!set(&child).contains(&"gateway".to_owned()));
    assert!(set(&child).contains(&"sessions_spawn".to_owned()));
    assert!(!set(&leaf).contains(&"sessions_spawn".to_owned()));
}

#[test]
fn plugin_tools_appear_in_the_catalog() {
    let out = tools(&["--plugin-tool", "lobster:lobster_run"]);
    assert!(
        out["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "lobster_run")
    );
}

#[test]
fn refuses_a_malformed_plugin_tool_flag() {
    let run = gatehouse(&["tools", "--plugin-tool", "nocolon"], "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("PLUGIN:NAME"), "{}", run.stderr);
}

#[test]
fn provider_and_model_select_the_by_provider_entry() {
    let files = Files::new();
    let config = files.write(
        "gh.json5",
        "{ tools: { byProvider: { 'openai/gpt-5': { profile: 'minimal' } } } }",
    );
    let out = tools(&[
        "--config",
        &config,
        "--provider",
        "openai",
        "--model",
        "gpt-5",
    ]);
    assert_eq!(out["allowed"], serde_json::json!(["session_status"]));
    let read = entry(&out, "read");
    assert_eq!(read["removedBy"]["step"], "providerProfile");
    assert_eq!(
        read["removedBy"]["configPath"],
        "tools.byProvider.openai/gpt-5.profile"
    );
    let other_model = tools(&[
        "--config",
        &config,
        "--provider",
        "openai",
        "--model",
        "gpt-4o",
    ]);
    assert_eq!(entry(&other_model, "read")["allowed"], true);
}

#[test]
fn sandboxed_sessions_lose_the_sandbox_deny_list() {
    let out = tools(&["--sandboxed"]);
    let browser = entry(&out, "browser");
    assert_eq!(browser["allowed"], false);
    assert_eq!(browser["removedBy"]["step"], "sandbox");
    assert_eq!(entry(&tools(&[]), "browser")["allowed"], true);
}
