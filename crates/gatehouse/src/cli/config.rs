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

/// The chat approval settings `serve` would refuse, checked before anything is started or
/// written: every one of them (see [`chat_problems`]), in one error.
pub(crate) fn check_chat(path: Option<&Path>, config: &Config) -> anyhow::Result<()> {
    let mut problems = chat_problems(path, config);
    if problems.len() <= 1 {
        return problems.pop().map_or(Ok(()), Err);
    }
    let lines: Vec<String> = problems
        .iter()
        .map(|problem| format!("{problem:#}"))
        .collect();
    Err(anyhow::anyhow!(
        "{} chat approval settings are refused:\n  {}",
        problems.len(),
        lines.join("\n  ")
    ))
}

/// Every chat approval setting `serve` would refuse, each as a config error at its key's line
/// and column in `path`, so `doctor` lists them all in one run.
pub(crate) fn chat_problems(path: Option<&Path>, config: &Config) -> Vec<anyhow::Error> {
    gatehouse_service::chat::chat_setting_problems(config)
        .into_iter()
        .map(|problem| match problem {
            gatehouse_service::ServiceError::ChatSetting { key, message } => match path {
                Some(path) => invalid_setting(path, &key, message).into(),
                None => anyhow::anyhow!("`{key}`: {message}"),
            },
            other => other.into(),
        })
        .collect()
}
