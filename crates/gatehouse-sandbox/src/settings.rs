//! The sandbox settings of one agent, as the config keys `agents.defaults.sandbox` and
//! `agents.list[].sandbox` (plus the agent's `workspace`) describe them, and the facts about
//! the host the gateway runs on that every plan needs.
//!
//! Plain structs: the config crate deserializes into [`SandboxOverrides`] (one per layer) and
//! [`SandboxSettings::resolve`] merges the layers, an agent's key winning over the default's.
//! docs/sandbox.md gives the JSON shape.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// `sandbox.mode`: which sessions run sandboxed, with OpenClaw's meaning (see
/// [`crate::is_sandboxed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// No session is sandboxed (OpenClaw's default).
    #[default]
    Off,
    /// Every session but the agent's main session is sandboxed.
    NonMain,
    /// Every session is sandboxed.
    All,
}

/// `sandbox.isolation`: what a sandboxed run sees of the host and what survives it, with
/// GoClaw's mode names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// A persistent home of the agent's own under the data directory (GoClaw's default).
    #[default]
    Home,
    /// The top-level, non-hidden, non-symlinked directories of the real home, read-only, over
    /// a throwaway home.
    AutodocsRead,
    /// As `AutodocsRead`, read-write.
    AutodocsWrite,
    /// A throwaway home in which only the configured `volumes` persist.
    Volumes,
    /// Nothing persists but what is written to the workspace.
    Ephemeral,
}

/// A spelling that is not one of a setting's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {key} {value:?} (expected one of: {expected})")]
pub struct UnknownValue {
    /// The key, as written in the config (`mode`, `isolation`).
    pub key: &'static str,
    /// The rejected input, verbatim.
    pub value: String,
    /// The accepted spellings.
    pub expected: &'static str,
}

impl SandboxMode {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::NonMain => "non-main",
            SandboxMode::All => "all",
        }
    }
}

impl FromStr for SandboxMode {
    type Err = UnknownValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "off" => Ok(SandboxMode::Off),
            "non-main" => Ok(SandboxMode::NonMain),
            "all" => Ok(SandboxMode::All),
            _ => Err(UnknownValue {
                key: "mode",
                value: value.to_owned(),
                expected: "off, non-main, all",
            }),
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Isolation {
    /// Every mode, in the order the docs list them.
    pub const ALL: [Isolation; 5] = [
        Isolation::Home,
        Isolation::AutodocsRead,
        Isolation::AutodocsWrite,
        Isolation::Volumes,
        Isolation::Ephemeral,
    ];

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Home => "home",
            Isolation::AutodocsRead => "autodocs-read",
            Isolation::AutodocsWrite => "autodocs-write",
            Isolation::Volumes => "volumes",
            Isolation::Ephemeral => "ephemeral",
        }
    }
}

impl FromStr for Isolation {
    type Err = UnknownValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "home" => Ok(Isolation::Home),
            "autodocs-read" => Ok(Isolation::AutodocsRead),
            "autodocs-write" => Ok(Isolation::AutodocsWrite),
            "volumes" => Ok(Isolation::Volumes),
            "ephemeral" => Ok(Isolation::Ephemeral),
            _ => Err(UnknownValue {
                key: "isolation",
                value: value.to_owned(),
                expected: "home, autodocs-read, autodocs-write, volumes, ephemeral",
            }),
        }
    }
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the bubblewrap binary is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BwrapBinary {
    /// `bwrap`, searched on the gateway's `PATH` (absolute entries only).
    #[default]
    OnPath,
    /// `sandbox.bwrapPath`.
    At(PathBuf),
}

/// One layer of `sandbox` settings as written (`agents.defaults.sandbox` or one
/// `agents.list[].sandbox`); `None` means the layer does not set the key.
///
/// Paths stay as written: `~/` is expanded against the gateway user's home when a run is
/// planned, so the config crate needs no knowledge of the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxOverrides {
    /// `mode`.
    pub mode: Option<SandboxMode>,
    /// `isolation`.
    pub isolation: Option<Isolation>,
    /// `network`: whether a sandboxed run may use the host's network.
    pub network: Option<bool>,
    /// `volumes`: home paths that persist under isolation `volumes`.
    pub volumes: Option<Vec<String>>,
    /// `extraPaths`: directories added to `PATH`, each made visible read-only.
    pub extra_paths: Option<Vec<String>>,
    /// `allowedRoots`: the host directories a mount source (the workspace, an extra path) may
    /// lie in.
    pub allowed_roots: Option<Vec<String>>,
    /// `bwrapPath`.
    pub bwrap_path: Option<PathBuf>,
}

/// The home paths GoClaw persists under isolation `volumes` when none are configured: where
/// tools keep what they install and cache.
pub const DEFAULT_VOLUMES: [&str; 3] = ["~/.local", "~/.config", "~/.cache"];

/// The host directories mount sources may lie in when `allowedRoots` is not set: the gateway
/// user's home and the usual places for shared data. `/tmp` is not one: it holds other
/// users' sockets (`/tmp/ssh-*/agent.*`).
pub const DEFAULT_ALLOWED_ROOTS: [&str; 5] = ["~", "/srv", "/opt", "/mnt", "/media"];

/// The effective sandbox settings of one agent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    /// Which sessions are sandboxed.
    pub mode: SandboxMode,
    /// What a sandboxed run sees and keeps.
    pub isolation: Isolation,
    /// Whether the host's network is reachable (a new, empty network namespace otherwise).
    pub network: bool,
    /// Home paths persisted under isolation `volumes` (default: [`DEFAULT_VOLUMES`]).
    pub volumes: Vec<String>,
    /// Extra `PATH` directories; absolute ones outside the system directories are bound
    /// read-only after validation.
    pub extra_paths: Vec<String>,
    /// Where mount sources may lie (default: [`DEFAULT_ALLOWED_ROOTS`]).
    pub allowed_roots: Vec<String>,
    /// The bubblewrap binary.
    pub bwrap: BwrapBinary,
    /// The agent's workspace (`agents.list[].workspace`, else `agents.defaults.workspace`),
    /// as written; a sandboxed run without one is refused.
    pub workspace: Option<String>,
}

impl SandboxSettings {
    /// Merges the defaults with one agent's layer, key by key (the agent's wins), and fills
    /// what neither sets with the documented defaults.
    pub fn resolve(
        defaults: &SandboxOverrides,
        agent: &SandboxOverrides,
        workspace: Option<String>,
    ) -> Self {
        fn pick<T: Clone>(agent: &Option<T>, defaults: &Option<T>) -> Option<T> {
            agent.clone().or_else(|| defaults.clone())
        }
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        SandboxSettings {
            mode: pick(&agent.mode, &defaults.mode).unwrap_or_default(),
            isolation: pick(&agent.isolation, &defaults.isolation).unwrap_or_default(),
            network: pick(&agent.network, &defaults.network).unwrap_or(false),
            volumes: pick(&agent.volumes, &defaults.volumes)
                .unwrap_or_else(|| strings(&DEFAULT_VOLUMES)),
            extra_paths: pick(&agent.extra_paths, &defaults.extra_paths).unwrap_or_default(),
            allowed_roots: pick(&agent.allowed_roots, &defaults.allowed_roots)
                .unwrap_or_else(|| strings(&DEFAULT_ALLOWED_ROOTS)),
            bwrap: pick(&agent.bwrap_path, &defaults.bwrap_path)
                .map_or(BwrapBinary::OnPath, BwrapBinary::At),
            workspace,
        }
    }

    /// One line for `gatehouse doctor`: the effective sandbox of an agent.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "mode {}, isolation {}, network {}",
            self.mode,
            self.isolation,
            if self.network { "on" } else { "off" }
        );
        match &self.workspace {
            Some(workspace) => line.push_str(&format!(", workspace {workspace}")),
            None => line.push_str(", no workspace (sandboxed runs are refused)"),
        }
        if self.isolation == Isolation::Volumes {
            line.push_str(&format!(", volumes [{}]", self.volumes.join(", ")));
        }
        if !self.extra_paths.is_empty() {
            line.push_str(&format!(", extraPaths [{}]", self.extra_paths.join(", ")));
        }
        line
    }
}

/// What the sandbox needs to know about the host and the gateway, filled in once by the
/// binary: it is not config, and reading it here would make plans depend on the process
/// environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostContext {
    /// The gateway user's home directory, absolute and real (no link in any component, as
    /// `realpath` gives it: the autodocs directories are checked below it). Inside the sandbox
    /// `HOME` is this same path, with what backs it chosen by the isolation mode.
    pub home: PathBuf,
    /// The user name a run sees in `USER` and `LOGNAME`.
    pub user: String,
    /// The gateway's data directory: persistent sandbox homes and volumes live under
    /// `<data_dir>/sandbox/<agentId>/`, and nothing else of it is ever mounted.
    pub data_dir: PathBuf,
    /// Other files and directories of the gateway's that must never be mounted: the config
    /// file, token files.
    pub protected: Vec<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_keys_win_over_the_defaults_key_by_key() {
        let defaults = SandboxOverrides {
            mode: Some(SandboxMode::NonMain),
            isolation: Some(Isolation::Ephemeral),
            network: Some(true),
            ..SandboxOverrides::default()
        };
        let agent = SandboxOverrides {
            isolation: Some(Isolation::Home),
            extra_paths: Some(vec!["/opt/tools/bin".into()]),
            ..SandboxOverrides::default()
        };
        let settings = SandboxSettings::resolve(&defaults, &agent, Some("/srv/w".into()));
        assert_eq!(
            settings,
            SandboxSettings {
                mode: SandboxMode::NonMain,
                isolation: Isolation::Home,
                network: true,
                volumes: vec!["~/.local".into(), "~/.config".into(), "~/.cache".into()],
                extra_paths: vec!["/opt/tools/bin".into()],
                allowed_roots: DEFAULT_ALLOWED_ROOTS.map(String::from).to_vec(),
                bwrap: BwrapBinary::OnPath,
                workspace: Some("/srv/w".into()),
            }
        );
    }

    #[test]
    fn nothing_set_is_off_home_and_no_network() {
        let settings = SandboxSettings::resolve(
            &SandboxOverrides::default(),
            &SandboxOverrides::default(),
            None,
        );
        assert_eq!(settings.mode, SandboxMode::Off);
        assert_eq!(settings.isolation, Isolation::Home);
        assert!(!settings.network);
        assert_eq!(
            settings.summary(),
            "mode off, isolation home, network off, no workspace (sandboxed runs are refused)"
        );
    }

    #[test]
    fn spellings_round_trip_and_unknown_ones_name_the_choices() {
        for isolation in Isolation::ALL {
            assert_eq!(isolation.as_str().parse(), Ok(isolation));
        }
        for mode in [SandboxMode::Off, SandboxMode::NonMain, SandboxMode::All] {
            assert_eq!(mode.as_str().parse(), Ok(mode));
        }
        assert_eq!(
            "Home".parse::<Isolation>().unwrap_err().to_string(),
            "unknown isolation \"Home\" (expected one of: home, autodocs-read, autodocs-write, \
             volumes, ephemeral)"
        );
    }
}
