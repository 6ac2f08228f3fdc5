//! Which sessions run sandboxed (`sandbox.mode`) and where a run goes once `/elevated` is
//! taken into account.
//!
//! `non-main` follows OpenClaw (`src/agents/sandbox/runtime-status.ts`,
//! `src/config/sessions/main-session.ts`): the main session of an agent is
//! `agent:<agentId>:<session.mainKey>` (`mainKey` defaults to `main`), or `global` when
//! `session.scope` is `global`; a session key that is an alias of it (`main`, the main key
//! itself, `agent:<agentId>:main`) counts as the main session; every other key, a group's or a
//! channel's, is not. Two deliberate differences, both towards the sandbox: an empty session
//! key is sandboxed under `non-main` and `all` (OpenClaw runs it on the host), and an agent id
//! that is not a plain id (`[A-Za-z0-9][A-Za-z0-9_-]{0,63}`) is never "main" (OpenClaw rewrites
//! it, and a rewrite can land on another agent's id).

use gatehouse_policy::elevated::ElevatedLevel;

use crate::settings::SandboxMode;

/// `session.mainKey` and `session.scope`, which name an agent's main session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainSession {
    /// `session.mainKey`, as written (`main` when unset).
    pub main_key: String,
    /// `session.scope` is `global`: one session for everything, keyed `global`.
    pub global: bool,
}

impl Default for MainSession {
    fn default() -> Self {
        MainSession {
            main_key: "main".to_owned(),
            global: false,
        }
    }
}

impl MainSession {
    /// The main key as OpenClaw compares it: trimmed, lower case, `main` when empty.
    fn normalized_key(&self) -> String {
        match self.main_key.trim() {
            "" => "main".to_owned(),
            key => key.to_lowercase(),
        }
    }

    /// The agent's main session key, or `None` for an agent id that is not a plain id.
    fn key_of(&self, agent_id: &str) -> Option<String> {
        if self.global {
            return Some("global".to_owned());
        }
        let agent = plain_agent_id(agent_id)?;
        Some(format!("agent:{agent}:{}", self.normalized_key()))
    }

    /// `session_key` with its main-session aliases replaced by the main key itself.
    fn canonical(&self, agent_id: &str, session_key: &str) -> String {
        let raw = session_key.trim();
        let main_key = self.normalized_key();
        let aliases = plain_agent_id(agent_id).map(|agent| {
            [
                format!("agent:{agent}:{main_key}"),
                format!("agent:{agent}:main"),
            ]
        });
        let is_alias = raw == "main"
            || raw == main_key
            || aliases.is_some_and(|aliases| aliases.iter().any(|alias| alias == raw));
        match (is_alias, self.key_of(agent_id)) {
            (true, Some(main)) => main,
            _ => raw.to_owned(),
        }
    }
}

/// A plain agent id, lower-cased as OpenClaw stores it; anything else is `None`.
fn plain_agent_id(agent_id: &str) -> Option<String> {
    let id = agent_id.trim();
    is_plain_agent_id(id).then(|| id.to_ascii_lowercase())
}

/// `[A-Za-z0-9][A-Za-z0-9_-]{0,63}`: OpenClaw's agent id shape, and a safe directory name.
pub(crate) fn is_plain_agent_id(id: &str) -> bool {
    let mut chars = id.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') && id.len() <= 64
}

/// Whether a session of `agent_id` runs sandboxed under `mode`.
pub fn is_sandboxed(
    mode: SandboxMode,
    agent_id: &str,
    session_key: &str,
    main: &MainSession,
) -> bool {
    match mode {
        SandboxMode::Off => false,
        SandboxMode::All => true,
        SandboxMode::NonMain => match main.key_of(agent_id) {
            Some(main_key) if !session_key.trim().is_empty() => {
                main.canonical(agent_id, session_key) != main_key
            }
            _ => true,
        },
    }
}

/// Where one run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Under bubblewrap, with the agent's isolation.
    Sandbox,
    /// On the gateway host, as the gateway's user (with the elevated level's exec settings,
    /// when one applies).
    Host,
    /// Nowhere: level `off` refuses host exec and the session is not sandboxed, so there is
    /// no sandbox to fall back to (today's meaning of `off`).
    HostRefused,
}

/// The rule OpenClaw documents: `/elevated on|ask|full` (from chat, or a request's own level)
/// moves a sandboxed session's exec to the host; `off` keeps it in the sandbox, and on a
/// session that is not sandboxed it refuses host exec as it does today. With no level the
/// session's sandboxing decides.
pub fn placement(sandboxed: bool, elevated: Option<ElevatedLevel>) -> Placement {
    match (elevated, sandboxed) {
        (Some(ElevatedLevel::On | ElevatedLevel::Ask | ElevatedLevel::Full), _) => Placement::Host,
        (Some(ElevatedLevel::Off), true) | (None, true) => Placement::Sandbox,
        (Some(ElevatedLevel::Off), false) => Placement::HostRefused,
        (None, false) => Placement::Host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(mode: SandboxMode, agent: &str, key: &str, main: &MainSession, expect: bool) {
        assert_eq!(
            is_sandboxed(mode, agent, key, main),
            expect,
            "mode {mode}, agent {agent:?}, session {key:?}, {main:?}"
        );
    }

    #[test]
    fn non_main_sandboxes_every_session_but_the_agents_main_one() {
        let main = MainSession::default();
        let non_main = SandboxMode::NonMain;
        check(non_main, "main", "agent:main:main", &main, false);
        check(non_main, "main", "main", &main, false);
        check(non_main, "main", "  agent:main:main ", &main, false);
        check(non_main, "work", "agent:work:main", &main, false);
        check(non_main, "Work", "agent:work:main", &main, false);
        check(non_main, "work", "agent:main:main", &main, true);
        check(
            non_main,
            "main",
            "agent:main:telegram:group:-100",
            &main,
            true,
        );
        check(
            non_main,
            "main",
            "agent:main:discord:channel:42",
            &main,
            true,
        );
        check(non_main, "main", "agent:main:direct:alice", &main, true);
        check(non_main, "main", "agent:Main:main", &main, true);
    }

    #[test]
    fn the_main_key_and_global_scope_move_the_main_session() {
        let custom = MainSession {
            main_key: "Desk".into(),
            global: false,
        };
        check(
            SandboxMode::NonMain,
            "main",
            "agent:main:desk",
            &custom,
            false,
        );
        check(SandboxMode::NonMain, "main", "desk", &custom, false);
        // `main` stays an alias of the main session whatever the main key.
        check(
            SandboxMode::NonMain,
            "main",
            "agent:main:main",
            &custom,
            false,
        );
        check(
            SandboxMode::NonMain,
            "main",
            "agent:main:other",
            &custom,
            true,
        );
        let global = MainSession {
            main_key: "main".into(),
            global: true,
        };
        check(SandboxMode::NonMain, "main", "global", &global, false);
        check(SandboxMode::NonMain, "main", "main", &global, false);
        check(
            SandboxMode::NonMain,
            "main",
            "agent:main:group:1",
            &global,
            true,
        );
    }

    /// Fail closed where OpenClaw runs on the host: no session key, or an agent id it would
    /// have to rewrite.
    #[test]
    fn sandboxes_an_empty_session_key_and_an_agent_id_that_is_not_plain() {
        let main = MainSession::default();
        check(SandboxMode::NonMain, "main", "", &main, true);
        check(SandboxMode::NonMain, "main", "   ", &main, true);
        check(SandboxMode::All, "main", "", &main, true);
        check(SandboxMode::NonMain, "ma in", "main", &main, true);
        check(SandboxMode::NonMain, "-main", "main", &main, true);
        check(SandboxMode::NonMain, &"a".repeat(65), "main", &main, true);
        check(SandboxMode::Off, "main", "", &main, false);
    }

    #[test]
    fn all_and_off_ignore_the_session() {
        let main = MainSession::default();
        check(SandboxMode::All, "main", "agent:main:main", &main, true);
        check(SandboxMode::Off, "main", "agent:main:group:1", &main, false);
    }

    #[test]
    fn elevated_levels_above_off_run_on_the_host_and_off_keeps_the_sandbox() {
        use ElevatedLevel::{Ask, Full, Off, On};
        let cases = [
            (true, None, Placement::Sandbox),
            (true, Some(Off), Placement::Sandbox),
            (true, Some(On), Placement::Host),
            (true, Some(Ask), Placement::Host),
            (true, Some(Full), Placement::Host),
            (false, None, Placement::Host),
            (false, Some(Off), Placement::HostRefused),
            (false, Some(On), Placement::Host),
            (false, Some(Full), Placement::Host),
        ];
        for (sandboxed, level, expect) in cases {
            assert_eq!(placement(sandboxed, level), expect, "{sandboxed} {level:?}");
        }
    }
}
