use std::path::{Path, PathBuf};

use gatehouse_config::{Config, load_str};
use gatehouse_policy::{Ask, Security};
use pretty_assertions::assert_eq;

fn config(text: &str) -> Config {
    load_str(text, Path::new("gh.json5")).unwrap().config
}

const LAYERED: &str = r#"{
  tools: {
    profile: 'coding',
    deny: ['browser'],
    byProvider: { 'openai/gpt-5': { profile: 'minimal', alsoAllow: ['exec'] } },
    exec: { security: 'allowlist', ask: 'off', askFallback: 'allowlist', strictInlineEval: true,
            safeBins: ['jq', 'head'], safeBinTrustedDirs: ['/opt/bin'],
            applyPatch: { allowModels: ['claude-x'] } },
    sandbox: { tools: { alsoAllow: ['browser'] } },
    subagents: { tools: { deny: ['cron'] } },
  },
  agents: {
    defaults: { subagents: { maxSpawnDepth: 2 } },
    list: [
      { id: 'main' },
      { id: 'ops', subagents: { maxSpawnDepth: 3 },
        tools: { allow: ['read', 'exec'], exec: { ask: 'always', safeBins: ['wc'] },
                 sandbox: { tools: { deny: ['exec'] } } } },
    ],
  },
}"#;

#[test]
fn agent_exec_settings_override_global_ones_field_by_field() {
    let settings = config(LAYERED).exec_settings("ops");
    assert_eq!(settings.policy.security, Security::Allowlist);
    assert_eq!(settings.policy.ask, Ask::Always);
    assert_eq!(settings.ask_fallback, Security::Allowlist);
    assert!(settings.policy.strict_inline_eval);
    assert_eq!(settings.policy.safe_bins, vec!["wc".to_owned()]);
    assert!(
        settings
            .policy
            .safe_bin_trusted_dirs
            .contains(&PathBuf::from("/opt/bin"))
    );
    assert!(settings.policy.allowlist.is_empty());
}

#[test]
fn unconfigured_exec_defaults_to_asking_on_a_miss() {
    let settings = config("{}").exec_settings("main");
    assert_eq!(
        (settings.policy.security, settings.policy.ask),
        (Security::Allowlist, Ask::OnMiss)
    );
    assert_eq!(settings.ask_fallback, Security::Deny);
}

#[test]
fn tool_config_carries_config_paths() {
    let tools = config(LAYERED).tool_config("ops");
    assert_eq!(tools.global.profile.as_deref(), Some("coding"));
    assert_eq!(tools.global.rules.path, "tools");
    assert_eq!(tools.global.rules.deny, Some(vec!["browser".to_owned()]));
    assert!(tools.global.exec_configured);
    assert!(!tools.global.fs_configured);
    let provider = &tools.global.by_provider[0];
    assert_eq!(
        (provider.key.as_str(), provider.rules.path.as_str()),
        ("openai/gpt-5", "tools.byProvider.openai/gpt-5")
    );
    assert_eq!(provider.profile.as_deref(), Some("minimal"));
    let agent = tools.agent.unwrap();
    assert_eq!(
        (agent.id.as_str(), agent.path.as_str()),
        ("ops", "agents.list[1]")
    );
    assert_eq!(agent.tools.rules.path, "agents.list[1].tools");
    assert!(agent.tools.exec_configured);
    assert_eq!(
        agent.sandbox.unwrap().path,
        "agents.list[1].tools.sandbox.tools"
    );
    assert_eq!(agent.max_spawn_depth, Some(3));
    assert_eq!(
        tools.sandbox.unwrap().also_allow,
        Some(vec!["browser".to_owned()])
    );
    assert_eq!(tools.subagents.default_max_spawn_depth, Some(2));
    assert_eq!(tools.subagents.tools.unwrap().path, "tools.subagents.tools");
    assert_eq!(
        tools.apply_patch_allow_models,
        Some(vec!["claude-x".to_owned()])
    );
}

#[test]
fn unlisted_agent_gets_global_tool_settings_only() {
    let tools = config(LAYERED).tool_config("stranger");
    assert_eq!(tools.agent, None);
    assert_eq!(tools.global.profile.as_deref(), Some("coding"));
}

/// OpenClaw lists skill binaries by bare name (resolved on the host's `PATH`) or with their
/// path; a name that resolves nowhere, or one with a `/`, trusts nothing.
#[test]
fn skill_bins_take_openclaws_bare_name_and_entry_forms() {
    let text = r#"{ tools: { exec: { autoAllowSkills: true, skillBins: [
        'sh', './sh', 'no-such-skill-bin-anywhere',
        { name: 'gh-skill', resolvedPath: '/opt/skills/bin/gh-skill' } ] } } }"#;
    let bins = config(text).exec_settings("main").policy.skill_bins;
    let names: Vec<&str> = bins.iter().map(|bin| bin.name.as_str()).collect();
    assert_eq!(names, ["sh", "gh-skill"]);
    assert!(bins[0].resolved_path.is_absolute(), "{:?}", bins[0]);
    assert_eq!(
        bins[1].resolved_path,
        PathBuf::from("/opt/skills/bin/gh-skill")
    );
}
