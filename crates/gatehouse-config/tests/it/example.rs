use std::path::Path;

use gatehouse_config::load_str;
use gatehouse_config::model::{ApprovalTarget, Enabled, SandboxMode, SlackMode};
use gatehouse_policy::Security;

const EXAMPLE: &str = include_str!("../../../../config.example.json5");

#[test]
fn example_config_loads_without_errors_or_warnings() {
    let loaded = load_str(EXAMPLE, Path::new("config.example.json5")).unwrap();
    assert_eq!(loaded.warnings, Vec::new());
}

#[test]
fn example_config_sets_the_keys_it_documents() {
    let config = load_str(EXAMPLE, Path::new("config.example.json5"))
        .unwrap()
        .config;
    let exec = config.tools.exec.as_ref().unwrap();
    assert_eq!(exec.ask_fallback, Some(Security::Deny));
    assert!(exec.safe_bin_profiles["myfilter"].denied_flags.is_some());
    assert_eq!(exec.skill_bins.len(), 1);
    assert!(exec.apply_patch.as_ref().unwrap().allow_models.is_some());
    assert!(
        config.tools.fs.is_some()
            && config.tools.sandbox.is_some()
            && config.tools.subagents.is_some()
    );
    assert_eq!(config.tools.elevated.as_ref().unwrap().allow_from.len(), 2);
    let defaults = config.agents.defaults.as_ref().unwrap();
    assert_eq!(
        defaults.sandbox.as_ref().unwrap().mode,
        Some(SandboxMode::NonMain)
    );
    let ops = config.agent("ops").unwrap();
    assert_eq!(ops.subagents.as_ref().unwrap().max_spawn_depth, Some(2));
    let sandbox = config.sandbox_settings("ops");
    assert_eq!(
        (sandbox.isolation.as_str(), sandbox.workspace.as_deref()),
        ("ephemeral", Some("/srv/agents/ops"))
    );
    assert_eq!(
        config.sandbox_settings("main").extra_paths,
        ["/opt/tools/bin"]
    );
    assert_eq!(config.main_session().main_key, "main");
    assert!(ops.tools.as_ref().unwrap().sandbox.is_some());
    assert_eq!(config.gateway.auth.as_ref().unwrap().tokens.len(), 3);
    assert!(
        config
            .gateway
            .auth
            .as_ref()
            .unwrap()
            .tokens
            .iter()
            .all(|t| t.source().is_some())
    );
    assert_eq!(config.approvals.exec.as_ref().unwrap().targets.len(), 1);
    let telegram = config.channels.telegram.as_ref().unwrap();
    assert!(telegram.token_source().is_some() && telegram.webhook_secret_source().is_some());
    let approvals = telegram.exec_approvals.as_ref().unwrap();
    assert_eq!(
        (approvals.enabled, approvals.target),
        (Some(Enabled::Auto), Some(ApprovalTarget::Dm))
    );
    assert!(
        config
            .channels
            .discord
            .as_ref()
            .unwrap()
            .token_source()
            .is_some()
    );
    let slack = config.channels.slack.as_ref().unwrap();
    assert_eq!(slack.mode, Some(SlackMode::Socket));
    assert!(slack.app_token_source().is_some() && slack.signing_secret_source().is_some());
}
