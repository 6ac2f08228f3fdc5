//! Loading the config file for a subcommand: errors become exit status 2, warnings go to
//! stderr so JSON on stdout stays parseable.

use std::path::Path;

use gatehouse_config::{Config, load_file};

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
