//! Where `gatehouse check` gets its exec policy: the config file's settings for an agent,
//! composed with OpenClaw's `exec-approvals.json` when one is given.

use std::path::Path;

use anyhow::Context;
use gatehouse_config::Config;
use gatehouse_policy::exec::{AllowlistEntry, ExecPolicy};
use gatehouse_store::approvals_file::{
    ExecApprovalsFile, HostFallback, RequestedPolicy, parse_str,
};

/// Policy sources shared by every request of one invocation.
pub(crate) struct Sources {
    config: Config,
    approvals: Option<ExecApprovalsFile>,
}

impl Sources {
    /// Loads the config (defaults when absent) and the approvals file (none when absent).
    pub(crate) fn load(config: Option<&Path>, approvals: Option<&Path>) -> anyhow::Result<Self> {
        Ok(Sources {
            config: super::config::load(config)?,
            approvals: approvals.map(load_approvals).transpose()?,
        })
    }

    /// The config's exec settings for `agent`, composed with the approvals file when given:
    /// the stricter `security` and the more asking `ask` win, and its allowlist applies.
    pub(crate) fn policy(&self, agent: &str) -> ExecPolicy {
        let mut policy = self.config.exec_settings(agent).policy;
        let Some(file) = &self.approvals else {
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
            .map(|entry| AllowlistEntry {
                pattern: entry.pattern.clone(),
                arg_pattern: entry.arg_pattern.clone(),
            })
            .collect();
        policy
    }
}

fn load_approvals(path: &Path) -> anyhow::Result<ExecApprovalsFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read approvals file {}", path.display()))?;
    let parsed = parse_str(&text, path)?;
    for note in &parsed.report.notes {
        eprintln!("gatehouse: warning: {}: {note}", path.display());
    }
    Ok(parsed.file)
}
