//! `gatehouse doctor`: check a deployment before (or while) it runs. Validates the config with
//! line and column, shows the effective exec policy of every agent, and warns about risky
//! settings. Exit 0 when all is well, 1 with warnings, 2 when the config does not load.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use gatehouse_config::{Config, DEFAULT_AGENT_ID, load_file};
use gatehouse_gateway::payloads::{ask_fallback, exec_policy};
use gatehouse_policy::Security;
use gatehouse_store::approvals_file::ExecApprovalsStore;

use super::serve::{
    ADMIN_TOKEN_FILE, APPROVALS_FILE, DEFAULT_LISTEN, configured_tokens, default_data_dir,
};

/// Flags of `gatehouse doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// Config file to check; the embedded default when absent.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The server's data directory [default: as `gatehouse serve`].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The address `serve --listen` will use, if it overrides the config.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// A running gateway to check live (chat delivery failures).
    #[arg(long, env = "GATEHOUSE_URL", default_value = "http://127.0.0.1:18790")]
    url: String,
    /// Its bearer token; without one the live check is skipped.
    #[arg(long, env = "GATEHOUSE_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// Runs the subcommand.
pub(crate) fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let config = match &args.config {
        Some(path) => match load_file(path) {
            Ok(loaded) => {
                println!("config {}: ok", path.display());
                warnings.extend(
                    loaded
                        .warnings
                        .iter()
                        .map(|warning| format!("{}:{warning}", path.display())),
                );
                loaded.config
            }
            Err(error) => {
                eprintln!("gatehouse: {error}");
                return Ok(ExitCode::from(super::EXIT_USAGE));
            }
        },
        None => {
            println!("config: none (embedded default)");
            Config::default()
        }
    };
    let data_dir = match args.data_dir {
        Some(dir) => dir,
        None => default_data_dir()?,
    };
    check_secrets(&config, &data_dir, &mut warnings);
    let approvals = ExecApprovalsStore::new(data_dir.join(APPROVALS_FILE))
        .read()
        .context("cannot read exec-approvals.json")?;
    warnings.extend(
        approvals
            .report
            .notes
            .iter()
            .map(|note| format!("{}: {note}", approvals.path.display())),
    );
    let mut agents: BTreeSet<String> = config.agents.list.iter().map(|a| a.id.clone()).collect();
    agents.insert(DEFAULT_AGENT_ID.to_owned());
    agents.extend(
        approvals
            .file
            .agents
            .keys()
            .filter(|id| *id != "*")
            .cloned(),
    );
    for agent in &agents {
        let policy = exec_policy(&config, Some(&approvals.file), agent);
        let ask_fallback = ask_fallback(&config, &approvals.file, agent);
        println!(
            "agent {agent}: security {}, ask {}, askFallback {ask_fallback}, {} allowlist entries",
            policy.security,
            policy.ask,
            policy.allowlist.len()
        );
        if ask_fallback == Security::Full {
            warnings.push(format!(
                "agent {agent}: askFallback is full, so an unanswered approval runs the command"
            ));
        }
    }
    let listen = match (args.listen, config.gateway.listen.as_deref()) {
        (Some(listen), _) => Some(listen),
        (None, Some(text)) => text.parse().ok(),
        (None, None) => Some(DEFAULT_LISTEN),
    };
    if let Some(listen) = listen.filter(|addr| !addr.ip().is_loopback()) {
        warnings.push(format!(
            "listening on {listen} without TLS: tokens cross the network in clear text; listen \
             on loopback behind a TLS-terminating proxy"
        ));
    }
    match args.token {
        Some(token) => live_check(
            &super::client::ServerArgs::new(args.url, token),
            &mut warnings,
        ),
        None => println!("live check: skipped (no --token or GATEHOUSE_TOKEN)"),
    }
    for warning in &warnings {
        println!("warning: {warning}");
    }
    Ok(if warnings.is_empty() {
        println!("no problems found");
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Asks the running gateway for `gateway.status`: every chat target whose delivery failed for
/// good becomes a warning, since an approver there never sees the prompt.
fn live_check(server: &super::client::ServerArgs, warnings: &mut Vec<String>) {
    let status = match server.call("gateway.status", serde_json::json!({})) {
        Ok(status) => status,
        Err(error) => {
            warnings.push(format!("live check: {error:#}"));
            return;
        }
    };
    println!("live check: gateway reachable");
    let failures = status
        .pointer("/chat/failures")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text = |failure: &serde_json::Value, key: &str| {
        failure
            .get(key)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    for failure in &failures {
        warnings.push(format!(
            "chat delivery to {} ({}) failed: {} failed after {} attempts: {}",
            text(failure, "target"),
            text(failure, "channel"),
            text(failure, "operation"),
            failure
                .get("attempts")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0),
            text(failure, "error"),
        ));
    }
}

/// Token files and the admin token must not be readable by others.
fn check_secrets(config: &Config, data_dir: &Path, warnings: &mut Vec<String>) {
    for token in config
        .gateway
        .auth
        .iter()
        .flat_map(|auth| auth.tokens.iter())
    {
        if let Some(gatehouse_config::SecretSource::File(path)) = token.source() {
            loose_file(&path, warnings);
        }
    }
    if let Err(error) = configured_tokens(config) {
        warnings.push(format!("{error:#}"));
    }
    loose_file(&data_dir.join(ADMIN_TOKEN_FILE), warnings);
}

fn loose_file(path: &Path, warnings: &mut Vec<String>) {
    if let Ok(metadata) = std::fs::metadata(path) {
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            warnings.push(format!(
                "{} holds a secret and is readable by group or others (mode {mode:04o}); run chmod 600",
                path.display()
            ));
        }
    }
}
