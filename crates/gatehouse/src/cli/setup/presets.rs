//! The starting configs `gatehouse setup` offers, what each one does in words a person can
//! consent to, and the JSON5 it writes.

use std::fmt::Write as _;

use gatehouse_sandbox::{Isolation, SandboxMode};

/// A named starting point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Preset {
    /// Commands run in a sandbox that sees the workspace and the home's top-level folders,
    /// read-write, with the network.
    Assistant,
    /// Commands run on this host, as the gateway's user: no sandbox.
    Permissive,
    /// Commands run in a sandbox with a home of its own and no network; inline code always
    /// asks.
    Hardened,
    /// Every setting chosen.
    Custom,
}

impl Preset {
    /// Every preset, in the order the menu lists them.
    pub(crate) const ALL: [Preset; 4] = [
        Preset::Assistant,
        Preset::Permissive,
        Preset::Hardened,
        Preset::Custom,
    ];

    /// The preset's name, as `--preset` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Preset::Assistant => "assistant",
            Preset::Permissive => "permissive",
            Preset::Hardened => "hardened",
            Preset::Custom => "custom",
        }
    }

    /// One line for the menu.
    pub(crate) fn blurb(self) -> &'static str {
        match self {
            Preset::Assistant => {
                "sandboxed; sees the workspace and your home's documents (read-write); network on"
            }
            Preset::Permissive => "no sandbox: commands run on this host as this user",
            Preset::Hardened => {
                "sandboxed with a home of its own; no network; inline code always asks"
            }
            Preset::Custom => "choose the sandbox, isolation and network yourself",
        }
    }

    /// The settings the preset stands for; `Custom` starts from the hardened ones.
    pub(crate) fn settings(self, workspace: String) -> Settings {
        let sandboxed = |isolation, network| Settings {
            workspace: workspace.clone(),
            mode: SandboxMode::All,
            isolation,
            network,
            strict_inline_eval: false,
        };
        match self {
            Preset::Assistant => sandboxed(Isolation::AutodocsWrite, true),
            Preset::Permissive => Settings {
                mode: SandboxMode::Off,
                ..sandboxed(Isolation::Home, false)
            },
            Preset::Hardened | Preset::Custom => Settings {
                strict_inline_eval: true,
                ..sandboxed(Isolation::Home, false)
            },
        }
    }
}

/// What a preset (or a custom choice) sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `agents.defaults.workspace`, as written (`~/…` or absolute).
    pub(crate) workspace: String,
    /// `agents.defaults.sandbox.mode`.
    pub(crate) mode: SandboxMode,
    /// `agents.defaults.sandbox.isolation`.
    pub(crate) isolation: Isolation,
    /// `agents.defaults.sandbox.network`.
    pub(crate) network: bool,
    /// `tools.exec.strictInlineEval`.
    pub(crate) strict_inline_eval: bool,
}

impl Settings {
    /// What the config does, one sentence per effect, for the person to consent to. `user` is
    /// who commands run as on the host.
    pub(crate) fn effects(&self, user: &str) -> Vec<String> {
        let mut effects = Vec::new();
        let sandboxed = match self.mode {
            SandboxMode::Off => {
                effects.push(format!(
                    "Agent commands run directly on this host as {user}: they can read, change \
                     and delete anything {user} can, and reach the network. There is no sandbox."
                ));
                false
            }
            SandboxMode::NonMain => {
                effects.push(
                    "Each agent's main session runs commands on this host; every other session \
                     (groups, channels, other chats) runs them under bubblewrap."
                        .to_owned(),
                );
                true
            }
            SandboxMode::All => {
                effects.push("Every agent command runs under bubblewrap (a sandbox).".to_owned());
                true
            }
        };
        if sandboxed {
            effects.push(format!(
                "Sandboxed commands can read, change and delete everything in the workspace {}.",
                self.workspace
            ));
            effects.push(match self.isolation {
                Isolation::Home => "They get a home directory of their own, kept under the \
                                    gateway's data directory; your real home stays invisible."
                    .to_owned(),
                Isolation::AutodocsRead => "They can read the top-level folders of your home \
                                            (Documents, Projects, …), not change them; hidden \
                                            ones (.ssh, .config, …) stay invisible."
                    .to_owned(),
                Isolation::AutodocsWrite => "They can read, change and delete the top-level \
                                             folders of your home (Documents, Projects, …); \
                                             hidden ones (.ssh, .config, …) stay invisible."
                    .to_owned(),
                Isolation::Volumes => "Their home is thrown away after each run except \
                                       ~/.local, ~/.config and ~/.cache, kept under the \
                                       gateway's data directory."
                    .to_owned(),
                Isolation::Ephemeral => {
                    "Their home is thrown away after each run; only the workspace keeps \
                     anything."
                        .to_owned()
                }
            });
            effects.push(if self.network {
                "They can use the network, including services on this host's loopback.".to_owned()
            } else {
                "They have no network.".to_owned()
            });
            effects.push(
                "`/elevated on|full` would move a session's commands to the host, but nobody \
                 may use it until you list senders under `tools.elevated.allowFrom`."
                    .to_owned(),
            );
        }
        effects.push(
            "A command no allowlist entry covers is sent to a person to approve; one nobody \
             answers is refused."
                .to_owned(),
        );
        if self.strict_inline_eval {
            effects.push(
                "Inline interpreter code (`python -c`, `node -e`, …) always needs a person."
                    .to_owned(),
            );
        }
        effects
    }

    /// The config file's text: JSON5 with a comment on each key.
    pub(crate) fn config_text(&self, preset: Preset) -> String {
        let mut text = String::new();
        let quoted = |value: &str| serde_json::Value::from(value).to_string();
        let _ = writeln!(
            text,
            "// Written by `gatehouse setup` (preset {}). Every key is described in\n\
             // docs/configuration.md; check the result with `gatehouse doctor --config <this file>`.",
            preset.name()
        );
        text.push_str("{\n  tools: {\n    exec: {\n");
        text.push_str(
            "      security: \"allowlist\", // a command runs unasked only if an allowlist entry \
             covers it\n",
        );
        text.push_str("      ask: \"on-miss\", // otherwise a person is asked\n");
        text.push_str("      askFallback: \"deny\", // and nobody answering refuses it\n");
        if self.strict_inline_eval {
            text.push_str("      strictInlineEval: true, // inline interpreter code always asks\n");
        }
        text.push_str("    },\n  },\n  agents: {\n    defaults: {\n");
        let _ = writeln!(
            text,
            "      workspace: {}, // read-write for sandboxed commands",
            quoted(&self.workspace)
        );
        let _ = writeln!(
            text,
            "      sandbox: {{ mode: {}, isolation: {}, network: {} }}, // docs/sandbox.md",
            quoted(self.mode.as_str()),
            quoted(self.isolation.as_str()),
            self.network
        );
        text.push_str("    },\n  },\n}\n");
        text
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn every_preset_writes_a_config_that_loads_without_warnings_and_means_what_it_says() {
        for preset in Preset::ALL {
            let settings = preset.settings("~/agents/main".to_owned());
            let text = settings.config_text(preset);
            let loaded = gatehouse_config::load_str(&text, Path::new("setup.json5"))
                .unwrap_or_else(|error| panic!("{}: {error}\n{text}", preset.name()));
            assert_eq!(loaded.warnings, Vec::new(), "{}", preset.name());
            let sandbox = loaded.config.sandbox_settings("main");
            assert_eq!(sandbox.mode, settings.mode, "{}", preset.name());
            assert_eq!(sandbox.isolation, settings.isolation, "{}", preset.name());
            assert_eq!(sandbox.network, settings.network, "{}", preset.name());
            assert_eq!(sandbox.workspace.as_deref(), Some("~/agents/main"));
            let exec = loaded.config.exec_settings("main");
            assert_eq!(exec.policy.strict_inline_eval, settings.strict_inline_eval);
        }
    }

    #[test]
    fn the_presets_are_the_documented_ones() {
        let settings = |preset: Preset| preset.settings("~/w".to_owned());
        let assistant = settings(Preset::Assistant);
        assert_eq!(
            (assistant.mode, assistant.isolation, assistant.network),
            (SandboxMode::All, Isolation::AutodocsWrite, true)
        );
        assert_eq!(settings(Preset::Permissive).mode, SandboxMode::Off);
        let hardened = settings(Preset::Hardened);
        assert_eq!(
            (hardened.mode, hardened.isolation, hardened.network),
            (SandboxMode::All, Isolation::Home, false)
        );
        assert!(hardened.strict_inline_eval);
    }

    #[test]
    fn a_workspace_with_quotes_is_written_as_a_json_string() {
        let text = Preset::Hardened
            .settings("/srv/a \"b\" \\ c".to_owned())
            .config_text(Preset::Hardened);
        let loaded = gatehouse_config::load_str(&text, Path::new("setup.json5")).unwrap();
        assert_eq!(
            loaded
                .config
                .workspace_as_written("main")
                .map(|(text, _)| text),
            Some("/srv/a \"b\" \\ c"),
            "{text}"
        );
    }

    #[test]
    fn permissive_says_commands_run_on_the_host_without_a_sandbox() {
        let effects = Preset::Permissive.settings("~/w".into()).effects("ann");
        assert!(
            effects[0].contains("directly on this host as ann"),
            "{effects:?}"
        );
        assert!(!effects.iter().any(|effect| effect.contains("bubblewrap")));
    }
}
