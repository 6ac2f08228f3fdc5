//! Where a run goes and what it starts with: the sandbox decision for a session, bubblewrap
//! located once when the service starts, a sandboxed run's plan and a host run's environment.
//!
//! **Invariants.** A run is placed by the sandbox crate's rules alone (`is_sandboxed`, then
//! `placement` with the elevated level in force). A sandboxed run is planned before anyone is
//! asked and again right before it is spawned, and every file its binding read must be the file
//! the sandbox sees at that path. Every child's environment is built by
//! `gatehouse_sandbox::build_env`, never inherited: the gateway's own variables stay behind.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use gatehouse_config::Config;
use gatehouse_policy::exec::ExecEvaluation;
use gatehouse_sandbox::{
    BaseEnv, Bubblewrap, BwrapBinary, BwrapError, ChildEnv, EnvLimits, EnvRefused, HostContext,
    MainSession, Plan, PlanError, RunRequest, SandboxMode, SandboxSettings, build_env,
};

use crate::publish::Denial;

/// The sandbox as the service uses it: the host's facts, which session is an agent's main
/// one, and bubblewrap for each `bwrapPath` the config names.
pub(crate) struct Sandboxes {
    /// The gateway user's home and name, the data directory and the files never mounted;
    /// `None` when the caller gave none, and then every sandboxed run is refused.
    host: Option<HostContext>,
    main: MainSession,
    /// Each listed agent's effective settings (the config does not change while the service
    /// runs), and the defaults' for any other agent.
    agents: HashMap<String, SandboxSettings>,
    defaults: SandboxSettings,
    /// bubblewrap per binary setting, located when the service started: two short runs each,
    /// never one per run.
    bubblewraps: Vec<(BwrapBinary, Result<Bubblewrap, BwrapError>)>,
}

/// Why a run was not started, as the denial it becomes.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) denial: Denial,
    pub(crate) detail: String,
}

impl From<EnvRefused> for Refusal {
    fn from(refused: EnvRefused) -> Self {
        Refusal {
            denial: Denial::Environment,
            detail: refused.to_string(),
        }
    }
}

impl From<PlanError> for Refusal {
    fn from(error: PlanError) -> Self {
        match error {
            PlanError::Env(refused) => refused.into(),
            other => Refusal {
                denial: Denial::Sandbox,
                detail: other.to_string(),
            },
        }
    }
}

impl Sandboxes {
    /// Reads which sessions are sandboxed from `config` and locates bubblewrap for every
    /// binary setting of an agent whose mode is not `off` (the defaults' too), with the
    /// gateway's `PATH`. A failure is kept and logged: the sandboxed runs that need it are
    /// refused with it, nothing else.
    pub(crate) fn new(config: &Config, host: Option<HostContext>) -> Self {
        let mut bubblewraps: Vec<(BwrapBinary, Result<Bubblewrap, BwrapError>)> = Vec::new();
        let search_path = std::env::var_os("PATH");
        let agents: HashMap<String, SandboxSettings> = config
            .agents
            .list
            .iter()
            .map(|agent| (agent.id.clone(), config.sandbox_settings(&agent.id)))
            .collect();
        let defaults = config.default_sandbox_settings();
        for settings in agents.values().chain([&defaults]) {
            if settings.mode == SandboxMode::Off
                || bubblewraps
                    .iter()
                    .any(|(binary, _)| *binary == settings.bwrap)
            {
                continue;
            }
            let located = Bubblewrap::locate(&settings.bwrap, search_path.as_deref());
            match &located {
                Ok(bwrap) => tracing::info!(
                    path = %bwrap.path.display(),
                    version = %bwrap.version,
                    "Sandboxed runs use this bubblewrap."
                ),
                Err(error) => tracing::warn!(
                    error = %error,
                    "Bubblewrap is unusable; sandboxed runs will be refused."
                ),
            }
            bubblewraps.push((settings.bwrap.clone(), located));
        }
        if host.is_none() && !bubblewraps.is_empty() {
            tracing::warn!("No host facts were given; sandboxed runs will be refused.");
        }
        Sandboxes {
            host,
            main: config.main_session(),
            agents,
            defaults,
            bubblewraps,
        }
    }

    /// `agent_id`'s effective sandbox settings, when its session `session_key` is sandboxed.
    pub(crate) fn sandboxing(&self, agent_id: &str, session_key: &str) -> Option<&SandboxSettings> {
        let settings = self.agents.get(agent_id).unwrap_or(&self.defaults);
        gatehouse_sandbox::is_sandboxed(settings.mode, agent_id, session_key, &self.main)
            .then_some(settings)
    }

    /// The home a sandboxed run sees, as the policy judges it (`HOME`), when there is one.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.host.as_ref().map(|host| host.home.as_path())
    }

    /// A sandboxed run's plan, or why there is none.
    pub(crate) fn plan(
        &self,
        settings: &SandboxSettings,
        run: &RunRequest<'_>,
    ) -> Result<Plan, Refusal> {
        let host = self.host.as_ref().ok_or_else(|| Refusal {
            denial: Denial::Sandbox,
            detail: "this session runs sandboxed, but the gateway was started without the \
                     host facts a sandbox needs (its home and data directory)"
                .to_owned(),
        })?;
        let bwrap = self
            .bubblewraps
            .iter()
            .find(|(binary, _)| *binary == settings.bwrap)
            .map(|(_, located)| located)
            .ok_or_else(|| Refusal {
                denial: Denial::Sandbox,
                detail: "bubblewrap was not located for this agent's `bwrapPath`".to_owned(),
            })?
            .as_ref()
            .map_err(|error| Refusal {
                denial: Denial::Sandbox,
                detail: error.to_string(),
            })?;
        Ok(gatehouse_sandbox::plan(settings, host, bwrap, run)?)
    }
}

/// A host run's environment: the gateway's `PATH`, `HOME`, locale, time zone, user and
/// temporary directory, then the request's own variables (each checked), built the way a
/// sandboxed run's is.
pub(crate) fn host_env(overrides: &BTreeMap<String, String>) -> Result<ChildEnv, Refusal> {
    let base = BaseEnv::host(std::env::vars_os());
    Ok(build_env(&base, overrides, &EnvLimits::default())?)
}

/// Every file the sandbox must see as the host does for the run to be the one judged and
/// bound: `bound` (the files the binding read, when it could name them) and each segment's
/// program and every wrapper it was looked through, canonical. A sandboxed program found on an
/// `extraPaths` entry under `~`, say, is the agent's own file, not the host's the policy saw.
pub(crate) fn require_same_files(
    plan: &Plan,
    bound: &[PathBuf],
    evaluation: &ExecEvaluation,
) -> Result<(), Refusal> {
    let programs = evaluation.segments.iter().flat_map(|segment| {
        let wrappers = segment.looked_through.iter();
        let wrappers = wrappers.filter_map(|wrapper| wrapper.resolved_path.as_deref());
        segment.resolved_path.as_deref().into_iter().chain(wrappers)
    });
    let programs = programs.filter_map(|path| std::fs::canonicalize(path).ok());
    for file in bound.iter().cloned().chain(programs) {
        plan.require_same_file(&file)?;
    }
    Ok(())
}
