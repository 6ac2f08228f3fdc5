//! Policy answers as JSON, shared by the gateway methods and the CLI.
//!
//! `exec.policy.check` must answer exactly what `gatehouse check --json` prints, and
//! `tools.effective` exactly what `gatehouse tools --json` prints, so both call these
//! conversions. The policy core is not `Serialize`: a core change cannot silently change the
//! format. The composition of config and `exec-approvals.json` into one policy lives here too,
//! for the same reason: the CLI and the server must never disagree on what applies.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::PathBuf;

use gatehouse_config::Config;
use gatehouse_policy::Security;
use gatehouse_policy::exec::{
    Decision, ExecEvaluation, ExecPolicy, ExecRequest, SegmentEvaluation,
};
use gatehouse_policy::requirement::{ApprovalOutcome, resolve_approval};
use gatehouse_policy::tools::{EffectiveTools, SpawnContext, ToolPolicyInputs, effective_tools};
use gatehouse_store::approvals_file::{
    ExecApprovalsFile, HostFallback, RequestedPolicy, SettingSource,
};
use serde::Serialize;

/// One exec decision (issue 2's shape): `check --json`, each `--jsonl` line, `exec.policy.check`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionJson {
    decision: &'static str,
    analysis_ok: bool,
    allowlist_satisfied: bool,
    requires_approval: bool,
    reason: String,
    segments: Vec<SegmentJson>,
    allow_always_patterns: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct SegmentJson {
    argv: Vec<String>,
    resolved_path: Option<String>,
    satisfied_by: Option<&'static str>,
    reason: String,
    looked_through: Vec<LookedThroughJson>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct LookedThroughJson {
    word: String,
    resolved_path: Option<String>,
}

impl From<&ExecEvaluation> for DecisionJson {
    fn from(evaluation: &ExecEvaluation) -> Self {
        DecisionJson {
            decision: evaluation.decision.as_str(),
            analysis_ok: evaluation.analysis_ok,
            allowlist_satisfied: evaluation.allowlist_satisfied,
            requires_approval: evaluation.requires_approval,
            reason: evaluation.reason.to_string(),
            segments: evaluation.segments.iter().map(SegmentJson::from).collect(),
            allow_always_patterns: evaluation.allow_always_patterns.clone(),
        }
    }
}

impl From<&SegmentEvaluation> for SegmentJson {
    fn from(segment: &SegmentEvaluation) -> Self {
        SegmentJson {
            argv: segment.argv.clone(),
            resolved_path: segment
                .resolved_path
                .as_ref()
                .map(|p| p.display().to_string()),
            satisfied_by: segment.satisfied_by.map(|s| s.as_str()),
            reason: segment.reason.to_string(),
            looked_through: segment
                .looked_through
                .iter()
                .map(|wrapper| LookedThroughJson {
                    word: wrapper.word.clone(),
                    resolved_path: wrapper
                        .resolved_path
                        .as_ref()
                        .map(|p| p.display().to_string()),
                })
                .collect(),
        }
    }
}

impl DecisionJson {
    /// The answer to a request that could not be read: refused, saying why.
    pub fn invalid_request(problem: &str) -> Self {
        DecisionJson {
            decision: Decision::Deny.as_str(),
            analysis_ok: false,
            allowlist_satisfied: false,
            requires_approval: false,
            reason: format!("invalid request: {problem}"),
            segments: Vec::new(),
            allow_always_patterns: Vec::new(),
        }
    }
}

/// An agent's effective tools (issue 3's shape): `tools --json` and `tools.effective`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsJson {
    allowed: Vec<String>,
    tools: Vec<ToolJson>,
    warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolJson {
    name: String,
    allowed: bool,
    removed_by: Option<RemovalJson>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct RemovalJson {
    step: &'static str,
    config_path: String,
}

impl From<&EffectiveTools> for ToolsJson {
    fn from(effective: &EffectiveTools) -> Self {
        ToolsJson {
            allowed: effective.allowed.iter().cloned().collect(),
            tools: effective
                .tools
                .iter()
                .map(|tool| ToolJson {
                    name: tool.name.clone(),
                    allowed: tool.allowed,
                    removed_by: tool.removed_by.as_ref().map(|removal| RemovalJson {
                        step: removal.step.label(),
                        config_path: removal.config_path.clone(),
                    }),
                })
                .collect(),
            warnings: effective.warnings.clone(),
        }
    }
}

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

/// A request from its wire fields: exactly one of `command` (a shell string) and a non-empty
/// `argv`; the environment is the host's `PATH`/`HOME` under the request's overrides.
pub fn exec_request(
    command: Option<String>,
    argv: Option<Vec<String>>,
    cwd: PathBuf,
    overrides: &BTreeMap<String, String>,
) -> Result<ExecRequest, String> {
    let request = match (command, argv) {
        (Some(command), None) => ExecRequest::shell(command, cwd),
        (None, Some(argv)) if !argv.is_empty() => ExecRequest::argv(argv, cwd),
        (None, Some(_)) => return Err("`argv` is empty".to_owned()),
        (None, None) => return Err("set `command` or `argv`".to_owned()),
        (Some(_), Some(_)) => return Err("set `command` or `argv`, not both".to_owned()),
    };
    Ok(with_host_env(request, overrides))
}

/// `PATH` and `HOME` decide what a bare name runs and what `~` means; requests inherit them
/// from this process unless they set their own. A request that sends this process's own value
/// (agent hosts often forward their whole environment) changes nothing, so that value is still
/// the host's setting, not the requester's.
pub fn with_host_env(
    mut request: ExecRequest,
    overrides: &BTreeMap<String, String>,
) -> ExecRequest {
    for key in ["PATH", "HOME"] {
        if let Ok(value) = std::env::var(key)
            && overrides.get(key).is_none_or(|sent| *sent == value)
        {
            request = request.with_inherited_env(key, value);
        }
    }
    let overrides = overrides
        .iter()
        .filter(|(key, _)| !request.inherited.contains(*key));
    request
        .env
        .extend(overrides.map(|(k, v)| (k.clone(), v.clone())));
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Policy review: any requester `PATH` withdraws auto-allow, so a host forwarding its
    /// environment must not lose it for sending the gateway's own value.
    #[test]
    fn keeps_the_hosts_own_path_as_the_hosts_when_a_request_sends_it_again() {
        let Ok(host_path) = std::env::var("PATH") else {
            return;
        };
        let same = BTreeMap::from([
            ("PATH".to_owned(), host_path.clone()),
            ("LANG".to_owned(), "C".to_owned()),
        ]);
        let request = with_host_env(ExecRequest::shell("ls", "/"), &same);
        assert!(request.inherited.contains("PATH"));
        assert_eq!(request.env.get("PATH"), Some(&host_path));
        assert!(!request.inherited.contains("LANG"));
        assert_eq!(request.env.get("LANG").map(String::as_str), Some("C"));

        let other = BTreeMap::from([("PATH".to_owned(), format!("/tmp/x:{host_path}"))]);
        let request = with_host_env(ExecRequest::shell("ls", "/"), &other);
        assert!(!request.inherited.contains("PATH"));
        assert_eq!(
            request.env.get("PATH"),
            Some(&format!("/tmp/x:{host_path}"))
        );
    }

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
