//! Loading the config file for a subcommand: errors become exit status 2, warnings go to
//! stderr so JSON on stdout stays parseable.

use std::path::Path;

use gatehouse_config::{Config, invalid_setting, load_file};
use gatehouse_service::ServiceError;
use gatehouse_service::chat::chat_setting_problems;

use super::channels;

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
    chat_setting_problems(config, &channels::platforms(), |channel| {
        channels::configured(config, channel)
    })
    .into_iter()
    .map(|problem| match problem {
        ServiceError::ChatSetting { key, message } => match path {
            Some(path) => invalid_setting(path, &key, message).into(),
            None => anyhow::anyhow!("`{key}`: {message}"),
        },
        other => other.into(),
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Operator review: doctor showed one refusal per run, so a config with four took four
    /// more runs to fix.
    #[test]
    fn lists_every_refused_setting_at_its_key() {
        let text = "{ channels: {
              telegram: { botToken: '1:x', execApprovals: { approvers: ['@alice', 4242, 'bob'] } },
              discord: { token: 'x', execApprovals: { approvers: ['bob#1234'] } } },
            approvals: { exec: { enabled: true, mode: 'targets', sessionFilter: ['re:('],
              targets: [{ channel: 'matrix', to: 'room' }] } } }";
        let loaded = gatehouse_config::load_str(text, std::path::Path::new("test.json5")).unwrap();
        let config = &loaded.config;
        let problems = chat_setting_problems(config, &channels::platforms(), |channel| {
            channels::configured(config, channel)
        });
        assert!(
            problems
                .iter()
                .all(|problem| matches!(problem, ServiceError::ChatSetting { .. }))
        );
        let keys: Vec<String> = problems
            .into_iter()
            .map(|problem| match problem {
                ServiceError::ChatSetting { key, .. } => key,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(
            keys,
            [
                "approvals.exec.sessionFilter",
                "channels.telegram.execApprovals.approvers[0]",
                "channels.telegram.execApprovals.approvers[2]",
                "channels.discord.execApprovals.approvers[0]",
                "approvals.exec.targets[0].channel",
            ]
        );
    }
}
