//! Where `gatehouse check` gets its exec policy: the config file's settings for an agent,
//! composed with OpenClaw's `exec-approvals.json` when one is given.

use std::path::Path;

use anyhow::Context;
use gatehouse_config::Config;
use gatehouse_policy::exec::ExecPolicy;
use gatehouse_service::policy::compose::exec_policy;
use gatehouse_store::approvals_file::{ExecApprovalsFile, parse_str};

use super::agent_ids::known_agent;

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

    /// Refuses an agent id the config's `agents.list` and the approvals file both leave out,
    /// when the config lists agents (see [`known_agent`]).
    pub(crate) fn known_agent(&self, agent: &str) -> Result<(), String> {
        let in_file = self
            .approvals
            .iter()
            .flat_map(|file| file.agents.keys().map(String::as_str));
        known_agent(&self.config, in_file, agent)
    }

    /// The loaded config.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The config's exec settings for `agent`, composed with the approvals file when given;
    /// the same composition the gateway applies, so `check` and `exec.policy.check` agree.
    pub(crate) fn policy(&self, agent: &str) -> ExecPolicy {
        exec_policy(&self.config, self.approvals.as_ref(), agent)
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
