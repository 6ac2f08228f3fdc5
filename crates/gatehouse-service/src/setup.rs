//! What the service starts from: the operator's config, where its files live and how it is
//! bounded. The binary fills it from the config file and the data directory.

use std::path::PathBuf;
use std::time::Duration;

use gatehouse_config::Config;
use gatehouse_config::model::GatewayLimitsConfig;
use gatehouse_policy::files::ProtectedPath;
use gatehouse_sandbox::HostContext;

/// Where the service's own state lives and how it is bounded. The approvals database is not
/// here: the service is handed an [`ApprovalStore`](gatehouse_approvals::ApprovalStore), so
/// which store it is stays the caller's choice.
#[derive(Debug, Clone)]
pub struct ServiceSetup {
    /// The loaded config (policy, agents, tools, chat approvals).
    pub config: Config,
    /// `exec-approvals.json`: host settings and allowlists.
    pub approvals_file: PathBuf,
    /// The hash-chained audit log (JSON lines).
    pub audit_log: PathBuf,
    /// Bounds on approvals and runs.
    pub limits: ExecLimits,
    /// What a sandboxed run needs to know of this host (the gateway user's real home and name,
    /// the data directory, the config and token files never to mount); `None` refuses every
    /// sandboxed run, which only a caller with no sandboxed agents should pass.
    pub sandbox_host: Option<HostContext>,
    /// The gateway's own files and directories (its config file, data directory, token
    /// files), which no tool call may read or write; the approvals file and the audit log are
    /// added by the service itself.
    pub protected: Vec<ProtectedPath>,
}

/// Bounds on approvals and runs; the defaults are the documented ones.
#[derive(Debug, Clone)]
pub struct ExecLimits {
    /// Pending approvals one agent may hold at once.
    pub max_pending_per_agent: usize,
    /// Pending approvals one token may hold at once across every agent id it names.
    pub max_pending_per_token: usize,
    /// Approval timeout when a request names none.
    pub approval_timeout: Duration,
    /// Bytes kept of each of stdout and stderr; the rest is read and dropped.
    pub max_output_bytes: usize,
    /// Run timeout when `system.run` names none.
    pub run_timeout: Duration,
    /// The longest run timeout a request may ask for.
    pub max_run_timeout: Duration,
    /// A run still going after this long is announced with `exec.running`.
    pub running_event_after: Duration,
    /// How long a settled approval stays in the approvals database.
    pub history: Duration,
}

impl Default for ExecLimits {
    fn default() -> Self {
        Self {
            max_pending_per_agent: 64,
            max_pending_per_token: 256,
            approval_timeout: Duration::from_secs(30 * 60),
            max_output_bytes: 64 * 1024,
            // The config crate owns these two: it refuses a config whose run timeout, defaults
            // included, is above the maximum.
            run_timeout: Duration::from_millis(GatewayLimitsConfig::DEFAULT_RUN_TIMEOUT_MS),
            max_run_timeout: Duration::from_millis(GatewayLimitsConfig::DEFAULT_MAX_RUN_TIMEOUT_MS),
            running_event_after: Duration::from_secs(1),
            history: Duration::from_secs(30 * 24 * 60 * 60),
        }
    }
}

impl ExecLimits {
    /// The exec limits `gateway.limits` asks for, laid over the defaults. The config crate has
    /// already refused zeros and a default run timeout above the maximum (with line and column);
    /// this only maps keys to limits, so an unset key keeps its default.
    pub fn configured(config: Option<&GatewayLimitsConfig>) -> Self {
        let mut exec = ExecLimits::default();
        let Some(config) = config else {
            return exec;
        };
        set_usize(
            &mut exec.max_pending_per_agent,
            config.max_pending_per_agent,
        );
        set_usize(
            &mut exec.max_pending_per_token,
            config.max_pending_per_token,
        );
        set_usize(&mut exec.max_output_bytes, config.max_output_bytes);
        set_ms(&mut exec.run_timeout, config.run_timeout_ms);
        set_ms(&mut exec.max_run_timeout, config.max_run_timeout_ms);
        set_ms(&mut exec.running_event_after, config.running_event_after_ms);
        if let Some(days) = config.history_days {
            exec.history = Duration::from_secs(days.saturating_mul(24 * 60 * 60));
        }
        exec
    }
}

/// A byte or count limit; one beyond the address space saturates, which is no limit in effect.
fn set_usize(target: &mut usize, value: Option<u64>) {
    if let Some(value) = value {
        *target = usize::try_from(value).unwrap_or(usize::MAX);
    }
}

fn set_ms(target: &mut Duration, value: Option<u64>) {
    if let Some(value) = value {
        *target = Duration::from_millis(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_default_without_a_limits_section() {
        let exec = ExecLimits::configured(None);
        assert_eq!(exec.run_timeout, ExecLimits::default().run_timeout);
    }

    #[test]
    fn maps_each_configured_exec_key_and_keeps_the_rest() {
        let config = GatewayLimitsConfig {
            max_pending_per_agent: Some(3),
            max_pending_per_token: Some(9),
            max_output_bytes: Some(100),
            run_timeout_ms: Some(2_000),
            max_run_timeout_ms: Some(5_000),
            running_event_after_ms: Some(250),
            history_days: Some(7),
            ..GatewayLimitsConfig::default()
        };
        let exec = ExecLimits::configured(Some(&config));
        assert_eq!(
            (
                exec.max_pending_per_agent,
                exec.max_pending_per_token,
                exec.max_output_bytes
            ),
            (3, 9, 100)
        );
        assert_eq!(exec.run_timeout, Duration::from_secs(2));
        assert_eq!(exec.max_run_timeout, Duration::from_secs(5));
        assert_eq!(exec.running_event_after, Duration::from_millis(250));
        assert_eq!(exec.history, Duration::from_secs(7 * 24 * 60 * 60));
        assert_eq!(
            exec.approval_timeout,
            ExecLimits::default().approval_timeout
        );
    }
}
