//! Bubblewrap isolation for Gatehouse's approved runs.
//!
//! A sandboxed session's `system.run` starts its bound argv under bubblewrap: new user, PID,
//! IPC and (unless allowed) network namespaces, no capabilities, the system directories
//! read-only, a private `/proc`, `/dev` and `/tmp`, the agent's workspace read-write, and a home
//! directory chosen by the isolation mode (`home`, `autodocs-read`, `autodocs-write`,
//! `volumes`, `ephemeral`). The environment is built, never inherited. docs/sandbox.md is the
//! operator's manual and threat model.
//!
//! **Entry points.** [`is_sandboxed`] and [`placement`] decide whether a run goes to the
//! sandbox; [`plan`] turns a run into a [`Plan`] whose [`Plan::command`] is a
//! `std::process::Command` the runner spawns, times and bounds as any other; [`build_env`]
//! builds a host run's environment from [`BaseEnv::host`] the same way; [`probe`] is
//! `gatehouse doctor`'s check and [`check_settings`] its review of an agent's settings;
//! [`Layout::to_host`] and [`Layout::to_sandbox`] map paths for the
//! binding.
//!
//! **Invariants.** Nothing here spawns a run: the caller spawns [`Plan::command`]. A mount
//! source from config or the home directory passes [`check_source`] (no link in any component,
//! nothing of the system's, the gateway's or a credential store's) or the run is refused. A
//! run sees its program and working directory at the same paths the binding checked, or it is
//! refused. The gateway's environment never reaches a run. Planning writes only the agent's
//! own directories under `<data_dir>/sandbox/`.
//!
//! ```no_run
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::collections::BTreeMap;
//! use std::path::Path;
//! use gatehouse_sandbox::{Bubblewrap, HostContext, RunRequest, SandboxOverrides, SandboxSettings, plan};
//!
//! let settings = SandboxSettings::resolve(
//!     &SandboxOverrides::default(),
//!     &SandboxOverrides::default(),
//!     Some("/srv/agents/main".into()),
//! );
//! let host = HostContext {
//!     home: "/home/ann".into(),
//!     user: "ann".into(),
//!     data_dir: "/home/ann/.local/state/gatehouse".into(),
//!     protected: vec![],
//! };
//! let bwrap = Bubblewrap::locate(&settings.bwrap, std::env::var_os("PATH").as_deref())?;
//! let argv = vec!["make".to_owned(), "test".to_owned()];
//! let planned = plan(&settings, &host, &bwrap, &RunRequest {
//!     agent_id: "main",
//!     executable: Path::new("/usr/bin/make"),
//!     argv: &argv,
//!     cwd: Path::new("/srv/agents/main"),
//!     env: &BTreeMap::new(),
//! })?;
//! let status = planned.command().status()?;
//! # let _ = status; Ok(()) }
//! ```

mod bwrap;
mod env;
mod error;
mod layout;
mod paths;
mod plan;
mod probe;
mod session;
mod settings;
mod system;
mod validate;

pub use bwrap::{Bubblewrap, BwrapError, Features};
pub use env::{BaseEnv, ChildEnv, EnvLimits, EnvRefusal, EnvRefused, VarReason, build_env};
pub use error::PlanError;
pub use layout::{Layout, Mount, MountKind, MountRole};
pub use paths::check_written_path;
pub use plan::{Plan, RunRequest, Skipped, check_settings, plan, search_path};
pub use probe::{HostFacts, NamespaceFailure, ProbeReport, explain, probe};
pub use session::{MainSession, Placement, is_sandboxed, placement};
pub use settings::{
    BwrapBinary, DEFAULT_ALLOWED_ROOTS, DEFAULT_VOLUMES, HostContext, Isolation, SandboxMode,
    SandboxOverrides, SandboxSettings, UnknownValue,
};
pub use validate::{AllowedRoots, DenyList, MountRefusal, Relation, check_source};
