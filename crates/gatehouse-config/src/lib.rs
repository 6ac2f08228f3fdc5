//! Gatehouse configuration: the JSON5 file operators write, with OpenClaw's keys.
//!
//! **Purpose.** Turn a config file into typed data ([`Config`]) and, from it, the plain
//! inputs the policy core evaluates. Every failure names the file, line, column and key path;
//! a broken file is reported whole, every problem at once ([`ConfigError::Invalid`] holds them
//! as [`Diagnostic`]s and prints each with its source line and a caret).
//!
//! **Invariants.** Unknown keys are errors in every section Gatehouse interprets (a misspelt
//! security key must not silently loosen policy); known OpenClaw keys Gatehouse does not use
//! load with a warning. Secrets are [`Secret`]s, whose `Debug` and `Display` print
//! `**REDACTED**`. Loading never resolves secrets: `tokenFile`/`tokenEnv` are read only when a
//! caller asks ([`SecretSource::resolve`]), so a missing bot token cannot break `check`.
//! This crate never writes files and never touches the network.
//!
//! **Entry point.** [`load_file`] (or [`load_str`]), then [`Config::exec_settings`] and
//! [`Config::tool_config`] for the policy core's inputs.
//!
//! ```
//! use std::path::Path;
//! let loaded = gatehouse_config::load_str(
//!     "{ tools: { exec: { security: 'allowlist', ask: 'on-miss' } } }",
//!     Path::new("gatehouse.json5"),
//! )?;
//! let exec = loaded.config.tools.exec.as_ref();
//! assert_eq!(exec.and_then(|e| e.ask), Some(gatehouse_policy::Ask::OnMiss));
//! # Ok::<(), gatehouse_config::ConfigError>(())
//! ```

mod convert;
mod diagnostic;
mod error;
mod excerpt;
mod keypath;
mod known;
mod lex;
mod load;
mod locate;
pub mod model;
mod safe_bins;
mod sandbox;
mod secret;
mod secrets_list;
mod suggest;
mod tool_rules;
mod tree;
mod typed;
mod validate;

pub use convert::{AgentExecSettings, DEFAULT_AGENT_ID};
pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use error::ConfigError;
pub use load::{ConfigWarning, LoadedConfig, invalid_setting, load_file, load_str};
pub use model::Config;
pub use safe_bins::SafeBinConfig;
pub use secret::{ResolvedSecret, Secret, SecretSource};
pub use secrets_list::ConfiguredSecret;
pub use tool_rules::UrlTool;
