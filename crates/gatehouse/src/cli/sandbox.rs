//! The host facts a sandboxed run needs, found once from this process (`serve` hands them to
//! the service, `doctor` checks each agent's sandbox with them), and `doctor`'s sandbox
//! section: each sandboxed agent's effective settings, what would refuse its runs, and whether
//! bubblewrap can start a sandbox here.

use std::ffi::OsStr;
use std::path::Path;

use gatehouse_config::{Config, DEFAULT_AGENT_ID};
use gatehouse_sandbox::{HostContext, SandboxMode, check_settings, probe};

/// What the sandbox needs to know of this host: the gateway user's real home (`HOME`,
/// symbolic links resolved) and name (`USER`, else `LOGNAME`), the data directory, and the
/// files of the gateway's own that no run may see: the config file and every token file it
/// names. `Err` says why there are none; every sandboxed run is then refused.
pub(crate) fn host_context(
    config: &Config,
    config_path: Option<&Path>,
    data_dir: &Path,
) -> Result<HostContext, String> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .ok_or("HOME is not set, so the sandbox has no home directory to show")?;
    let home = std::fs::canonicalize(&home).map_err(|error| {
        format!(
            "the home directory {} cannot be resolved: {error}",
            Path::new(&home).display()
        )
    })?;
    let user = ["USER", "LOGNAME"]
        .into_iter()
        .filter_map(std::env::var_os)
        .find(|user| !user.is_empty())
        .map(|user| user.to_string_lossy().into_owned())
        .unwrap_or_else(|| rustix::process::getuid().as_raw().to_string());
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let protected = super::layout::own_files(config, config_path)
        .into_iter()
        .map(|file| real(&file.path))
        .collect();
    Ok(HostContext {
        home,
        user,
        data_dir: real(data_dir),
        protected,
    })
}

/// The agents `doctor` reviews: the default one and every listed one.
fn agents(config: &Config) -> Vec<&str> {
    let mut agents = vec![DEFAULT_AGENT_ID];
    for agent in &config.agents.list {
        if !agents.contains(&agent.id.as_str()) {
            agents.push(&agent.id);
        }
    }
    agents
}

/// What `doctor` found about sandboxing: lines to print, and errors (each would refuse every
/// sandboxed run of an agent).
#[derive(Debug, Default)]
pub(crate) struct SandboxReview {
    /// One line per sandboxed agent, and the probe's.
    pub(crate) lines: Vec<String>,
    /// What would refuse runs.
    pub(crate) errors: Vec<String>,
}

/// Each agent whose `sandbox.mode` is not `off`: its effective settings and every problem that
/// would refuse its sandboxed runs, found without creating anything; then, once per
/// bubblewrap setting, whether a sandbox starts here (a failure is an error).
pub(crate) fn review(config: &Config, host: &Result<HostContext, String>) -> SandboxReview {
    let mut review = SandboxReview::default();
    let mut probed = Vec::new();
    let search_path = std::env::var_os("PATH");
    for agent in agents(config) {
        let settings = config.sandbox_settings(agent);
        if settings.mode == SandboxMode::Off {
            continue;
        }
        review
            .lines
            .push(format!("agent {agent}: sandbox {}", settings.summary()));
        match host {
            Ok(host) => review.errors.extend(
                check_settings(&settings, host, agent)
                    .into_iter()
                    .map(|problem| format!("agent {agent}: sandbox: {problem}")),
            ),
            Err(why) => review
                .errors
                .push(format!("agent {agent}: sandboxed runs are refused: {why}")),
        }
        if probed.contains(&settings.bwrap) {
            continue;
        }
        let report = probe(&settings.bwrap, search_path.as_deref().map(OsStr::new));
        if report.is_ok() {
            review.lines.push(format!("sandbox: {report}"));
        } else {
            review.errors.push(format!("sandbox: {report}"));
        }
        probed.push(settings.bwrap);
    }
    review
}
