//! Loading the config file for a subcommand: errors become exit status 2, warnings go to
//! stderr so JSON on stdout stays parseable.

use std::path::Path;

use gatehouse_config::{Config, invalid_setting, load_file};

/// The config at `path`, or the built-in defaults when no file is given.
pub(crate) fn load(path: Option<&Path>) -> anyhow::Result<Config> {
    let Some(path) = path else {
        return Ok(Config::default());
    };
    let loaded = load_file(path)?;
    for warning in &loaded.warnings {
        eprintln!("gatehouse: warning: {}:{warning}", path.display());
    }
    Ok(loaded.config)
}

/// The chat approval settings `serve` would refuse, as a config error at the key's line and
/// column in `path`, checked before anything is started or written.
pub(crate) fn check_chat(path: Option<&Path>, config: &Config) -> anyhow::Result<()> {
    match gatehouse_gateway::check_chat_settings(config) {
        Ok(()) => Ok(()),
        Err(gatehouse_gateway::Error::ChatSetting { key, message }) => Err(match path {
            Some(path) => invalid_setting(path, &key, message).into(),
            None => anyhow::anyhow!("`{key}`: {message}"),
        }),
        Err(other) => Err(other.into()),
    }
}
