//! From `agents.*.sandbox`, `agents.*.workspace` and `session` to the sandbox crate's plain
//! settings: which sessions are sandboxed, how, and where each agent's workspace is.

use gatehouse_sandbox::{
    Isolation as SandboxIsolation, MainSession, SandboxMode as Mode, SandboxOverrides,
    SandboxSettings,
};

use crate::model::{Config, Isolation, SandboxConfig, SandboxMode, SessionScope};

impl Config {
    /// The effective sandbox settings of `agent_id`: each key its `agents.list[].sandbox` sets
    /// over `agents.defaults.sandbox`, the documented defaults for the rest, and its workspace.
    pub fn sandbox_settings(&self, agent_id: &str) -> SandboxSettings {
        let defaults = self.agents.defaults.as_ref();
        let agent = self.agent(agent_id);
        SandboxSettings::resolve(
            &overrides(defaults.and_then(|d| d.sandbox.as_ref())),
            &overrides(agent.and_then(|a| a.sandbox.as_ref())),
            self.workspace_as_written(agent_id)
                .map(|(text, _)| text.to_owned()),
        )
    }

    /// The sandbox settings an agent without an `agents.list` entry gets: the defaults'.
    pub fn default_sandbox_settings(&self) -> SandboxSettings {
        let defaults = self.agents.defaults.as_ref();
        SandboxSettings::resolve(
            &overrides(defaults.and_then(|d| d.sandbox.as_ref())),
            &SandboxOverrides::default(),
            defaults.and_then(|d| d.workspace.clone()),
        )
    }

    /// Which session is an agent's main one (`session.mainKey`, `session.scope`).
    pub fn main_session(&self) -> MainSession {
        let default = MainSession::default();
        MainSession {
            main_key: self.session.main_key.clone().unwrap_or(default.main_key),
            global: self.session.scope == Some(SessionScope::Global),
        }
    }
}

/// One layer of `sandbox` keys as the sandbox crate takes it.
fn overrides(config: Option<&SandboxConfig>) -> SandboxOverrides {
    let Some(config) = config else {
        return SandboxOverrides::default();
    };
    SandboxOverrides {
        mode: config.mode.map(|mode| match mode {
            SandboxMode::Off => Mode::Off,
            SandboxMode::NonMain => Mode::NonMain,
            SandboxMode::All => Mode::All,
        }),
        isolation: config.isolation.map(|isolation| match isolation {
            Isolation::Home => SandboxIsolation::Home,
            Isolation::AutodocsRead => SandboxIsolation::AutodocsRead,
            Isolation::AutodocsWrite => SandboxIsolation::AutodocsWrite,
            Isolation::Volumes => SandboxIsolation::Volumes,
            Isolation::Ephemeral => SandboxIsolation::Ephemeral,
        }),
        network: config.network,
        volumes: config.volumes.clone(),
        extra_paths: config.extra_paths.clone(),
        allowed_roots: config.allowed_roots.clone(),
        bwrap_path: config.bwrap_path.as_ref().map(Into::into),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use gatehouse_sandbox::BwrapBinary;

    fn config(text: &str) -> Config {
        crate::load_str(text, Path::new("gatehouse.json5"))
            .unwrap()
            .config
    }

    #[test]
    fn an_agents_sandbox_keys_and_workspace_win_over_the_defaults() {
        let config = config(
            "{ agents: { defaults: { workspace: '~/work', sandbox: { mode: 'non-main', \
             isolation: 'ephemeral', network: true, bwrapPath: '/opt/bwrap' } }, \
             list: [ { id: 'ops', workspace: '/srv/ops', sandbox: { mode: 'all', \
             extraPaths: ['/opt/tools/bin'] } } ] } }",
        );
        let ops = config.sandbox_settings("ops");
        assert_eq!(ops.mode, Mode::All);
        assert_eq!(ops.isolation, SandboxIsolation::Ephemeral);
        assert!(ops.network);
        assert_eq!(ops.extra_paths, ["/opt/tools/bin"]);
        assert_eq!(ops.bwrap, BwrapBinary::At("/opt/bwrap".into()));
        assert_eq!(ops.workspace.as_deref(), Some("/srv/ops"));
        let main = config.sandbox_settings("main");
        assert_eq!(main, config.default_sandbox_settings());
        assert_eq!(main.mode, Mode::NonMain);
        assert!(main.extra_paths.is_empty());
        assert_eq!(main.workspace.as_deref(), Some("~/work"));
        assert_eq!(
            Config::default().sandbox_settings("main"),
            SandboxSettings::resolve(
                &SandboxOverrides::default(),
                &SandboxOverrides::default(),
                None
            )
        );
    }

    #[test]
    fn the_session_section_names_the_main_session() {
        assert_eq!(Config::default().main_session(), MainSession::default());
        let custom = config("{ session: { mainKey: 'desk', scope: 'global', dmScope: 'main' } }");
        assert_eq!(
            custom.main_session(),
            MainSession {
                main_key: "desk".into(),
                global: true
            }
        );
    }
}
