use std::path::Path;

use gatehouse_policy::{Ask, Security};
use gatehouse_store::approvals_file::{
    Composed, EffectivePolicy, HostFallback, LoadNote, RequestedPolicy, SettingSource, parse_str,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Host file + requested settings in, effective policy out.
fn check(file: Value, agent: &str, requested: (Security, Ask), expect: EffectivePolicy) {
    let parsed = parse_str(&file.to_string(), Path::new("exec-approvals.json")).unwrap();
    let requested = RequestedPolicy {
        security: requested.0,
        ask: requested.1,
    };
    assert_eq!(parsed.file.effective_policy(agent, requested), expect);
}

fn effective(
    security: (Security, Security, Security),
    ask: (Ask, Ask, Ask),
    ask_fallback: Security,
) -> EffectivePolicy {
    EffectivePolicy {
        security: Composed {
            requested: security.0,
            host: security.1,
            effective: security.2,
        },
        ask: Composed {
            requested: ask.0,
            host: ask.1,
            effective: ask.2,
        },
        ask_fallback,
        auto_allow_skills: false,
    }
}

use Ask::{Always, Off, OnMiss};
use Security::{Allowlist, Deny, Full};

#[test]
fn an_empty_file_leaves_the_requested_policy_and_denies_on_timeout() {
    check(
        json!({"version": 1}),
        "main",
        (Full, Off),
        effective((Full, Full, Full), (Off, Off, Off), Deny),
    );
}

#[test]
fn the_host_file_only_ever_tightens() {
    let file = json!({"version": 1, "defaults": {"security": "full", "ask": "off", "askFallback": "full"}});
    check(
        file,
        "main",
        (Allowlist, OnMiss),
        effective(
            (Allowlist, Full, Allowlist),
            (OnMiss, Off, OnMiss),
            Allowlist,
        ),
    );
}

#[test]
fn agent_settings_beat_wildcard_settings_beat_defaults() {
    let file = json!({"version": 1,
        "defaults": {"security": "full", "ask": "off"},
        "agents": {"*": {"security": "allowlist", "ask": "on-miss"}, "ops": {"ask": "always"}}});
    check(
        file.clone(),
        "ops",
        (Full, Off),
        effective((Full, Allowlist, Allowlist), (Off, Always, Always), Deny),
    );
    check(
        file,
        "other",
        (Full, Off),
        effective((Full, Allowlist, Allowlist), (Off, OnMiss, OnMiss), Deny),
    );
}

#[test]
fn denies_with_the_strictest_value_when_a_setting_is_invalid() {
    let text = json!({"version": 1,
        "defaults": {"security": "full", "ask": "off", "askFallback": "full", "autoAllowSkills": true},
        "agents": {"main": {"security": "FULL", "ask": 3, "askFallback": "yes", "autoAllowSkills": "true"}}})
    .to_string();
    let parsed = parse_str(&text, Path::new("exec-approvals.json")).unwrap();
    let policy = parsed.file.resolve_agent("main", &HostFallback::default());
    assert_eq!(policy.security.value, Deny);
    assert_eq!(policy.ask.value, Always);
    assert_eq!(policy.ask_fallback.value, Deny);
    assert!(!policy.auto_allow_skills.value);
    assert_eq!(policy.security.source, SettingSource::Invalid);
    let invalid: Vec<&LoadNote> = parsed
        .report
        .notes
        .iter()
        .filter(|n| matches!(n, LoadNote::InvalidSetting { .. }))
        .collect();
    assert_eq!(invalid.len(), 4);
}

#[test]
fn trims_setting_spellings_as_openclaw_does() {
    let text = json!({"version": 1, "defaults": {"security": " allowlist "}}).to_string();
    let parsed = parse_str(&text, Path::new("exec-approvals.json")).unwrap();
    let policy = parsed.file.resolve_agent("main", &HostFallback::default());
    assert_eq!(policy.security.value, Allowlist);
    assert_eq!(policy.security.source, SettingSource::Defaults);
}

#[test]
fn the_wildcard_agent_sees_its_allowlist_once() {
    let text = json!({"version": 1, "agents": {"*": {"allowlist": ["/bin/a"]}}}).to_string();
    let parsed = parse_str(&text, Path::new("exec-approvals.json")).unwrap();
    assert_eq!(
        parsed
            .file
            .resolve_agent("*", &HostFallback::default())
            .allowlist
            .len(),
        1
    );
    assert_eq!(
        parsed
            .file
            .resolve_agent("x", &HostFallback::default())
            .allowlist
            .len(),
        1
    );
}
