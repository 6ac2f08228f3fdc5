//! The effective policy: the config's exec settings for an agent composed with
//! `exec-approvals.json`, its `askFallback`, and the tools a (sub-)agent ends up with.
//!
//! The CLI's offline commands (`check`, `tools`, `doctor`) and the running service both call
//! these, so they can never disagree on what applies.

use std::num::NonZeroU32;

use gatehouse_config::Config;
use gatehouse_policy::Security;
use gatehouse_policy::exec::ExecPolicy;
use gatehouse_policy::requirement::{ApprovalOutcome, resolve_approval};
use gatehouse_policy::tools::{EffectiveTools, SpawnContext, ToolPolicyInputs, effective_tools};
use gatehouse_store::approvals_file::{
    ExecApprovalsFile, HostFallback, RequestedPolicy, SettingSource,
};

/// The effective tools at `spawn_depth`: a sub-agent never gets more than its parent, so each
/// ancestor is evaluated in turn and its allowed set handed down.
pub fn effective_tools_at_depth(inputs: &mut ToolPolicyInputs, spawn_depth: u32) -> EffectiveTools {
    let mut effective = effective_tools(inputs);
    for depth in 1..=spawn_depth {
        let Some(depth) = NonZeroU32::new(depth) else {
            continue;
        };
        inputs.session.spawn = Some(SpawnContext {
            depth,
            parent_allowed: effective.allowed.clone(),
        });
        effective = effective_tools(inputs);
    }
    effective
}

/// The config's exec settings for `agent`, composed with `exec-approvals.json` when there is
/// one: the stricter `security` and the more asking `ask` win, and the file's allowlist applies.
pub fn exec_policy(config: &Config, file: Option<&ExecApprovalsFile>, agent: &str) -> ExecPolicy {
    let mut policy = config.exec_settings(agent).policy;
    let Some(file) = file else {
        return policy;
    };
    let requested = RequestedPolicy {
        security: policy.security,
        ask: policy.ask,
    };
    let effective = file.effective_policy(agent, requested);
    policy.security = effective.security.effective;
    policy.ask = effective.ask.effective;
    // OpenClaw keeps `autoAllowSkills` in the approvals file, Gatehouse also in the config;
    // either may switch it on, as a skill bin still has to resolve to its configured path.
    policy.auto_allow_skills |= effective.auto_allow_skills;
    let fallback = HostFallback {
        security: requested.security,
        ask: requested.ask,
        ..HostFallback::default()
    };
    policy.allowlist = file
        .resolve_agent(agent, &fallback)
        .allowlist
        .into_iter()
        .map(|entry| gatehouse_policy::exec::AllowlistEntry {
            pattern: entry.pattern.clone(),
            arg_pattern: entry.arg_pattern.clone(),
        })
        .collect();
    policy
}

/// The `askFallback` that applies to `agent`: the file may only make the config's stricter.
pub fn ask_fallback(config: &Config, file: &ExecApprovalsFile, agent: &str) -> Security {
    let configured = config.exec_settings(agent).ask_fallback;
    let resolved = file
        .resolve_agent(agent, &HostFallback::default())
        .ask_fallback;
    match resolved.source {
        SettingSource::Fallback => configured,
        _ => configured.min_security(resolved.value),
    }
}

/// What an unanswered approval actually falls back to under `security`: the policy clamps
/// `ask_fallback` to the security when it resolves a timeout, so a `full` fallback under
/// `allowlist` acts as `allowlist`. Found by asking that very resolution (on a command that is
/// and one that is not allowlisted) rather than by restating the clamp, so what `doctor` shows
/// is what the gateway does.
pub fn effective_ask_fallback(ask_fallback: Security, security: Security) -> Security {
    let runs = |allowlisted| {
        resolve_approval(
            ApprovalOutcome::TimedOut,
            ask_fallback,
            security,
            true,
            allowlisted,
        )
        .approved
    };
    match (runs(false), runs(true)) {
        (true, _) => Security::Full,
        (false, true) => Security::Allowlist,
        (false, false) => Security::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_the_fallback_to_the_security_as_a_timeout_does() {
        use Security::{Allowlist, Deny, Full};
        let cases = [
            (Full, Full, Full),
            (Full, Allowlist, Allowlist),
            (Full, Deny, Deny),
            (Allowlist, Full, Allowlist),
            (Allowlist, Allowlist, Allowlist),
            (Deny, Full, Deny),
            (Deny, Allowlist, Deny),
        ];
        for (fallback, security, effective) in cases {
            assert_eq!(
                effective_ask_fallback(fallback, security),
                effective,
                "askFallback {fallback} under security {security}"
            );
        }
    }
}
