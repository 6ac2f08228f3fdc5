//! `gatehouse request -- CMD…`: ask a person whether a command may run, and wait for the answer.
//! Exit 0 when it may run (a person allowed it, or `askFallback` did), 20 when it may not.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::{Value, json};

use super::client::{ServerArgs, command_params};

/// Exit status when the command may not run; the same as `gatehouse check`'s deny.
pub(crate) const EXIT_DENIED: u8 = 20;

/// Flags of `gatehouse request`.
#[derive(Debug, clap::Args)]
pub(crate) struct RequestArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Seconds to wait for a decision before the request expires [default: the server's].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Print the server's answer as JSON.
    #[arg(long)]
    json: bool,
    /// Agent id the request is made for.
    #[arg(long, default_value = "main")]
    agent: String,
    /// Session key shown to approvers.
    #[arg(long, default_value = "cli")]
    session: String,
    /// Working directory [default: the current one].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// One argument: a shell string. Several: an argv.
    #[arg(value_name = "COMMAND", required = true, last = true)]
    command: Vec<String>,
}

/// Runs the subcommand.
pub(crate) fn run(args: RequestArgs) -> anyhow::Result<ExitCode> {
    let cwd = match args.cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().context("cannot determine the current directory")?,
    };
    let mut params = command_params(&args.command);
    params["cwd"] = json!(cwd);
    params["agentId"] = json!(args.agent);
    params["sessionKey"] = json!(args.session);
    if let Some(seconds) = args.timeout {
        params["timeoutMs"] = json!(seconds.saturating_mul(1000));
    }
    let answer = args.server.call("exec.approval.request", params)?;
    let may_run = may_run(&answer);
    if args.json {
        println!("{answer}");
    } else {
        println!("{}", summary(&answer));
    }
    Ok(if may_run {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DENIED)
    })
}

/// Allowed by a person, or by `askFallback` when nobody answered.
fn may_run(answer: &Value) -> bool {
    match answer["decision"].as_str() {
        Some("allow-once" | "allow-always") => true,
        Some(_) => false,
        None => answer["fallback"]["approved"].as_bool() == Some(true),
    }
}

fn summary(answer: &Value) -> String {
    let id = answer["id"].as_str().unwrap_or("?");
    match (answer["decision"].as_str(), answer["reason"].as_str()) {
        (Some(decision), _) => {
            let by = answer["resolvedBy"].as_str().unwrap_or("someone");
            format!("{decision} (by {by}; approval {id})")
        }
        (None, reason) => {
            let fallback = answer["fallback"]["askFallback"].as_str().unwrap_or("deny");
            let verdict = if may_run(answer) { "allowed" } else { "denied" };
            format!(
                "{} ({}): askFallback {fallback} {verdict} it (approval {id})",
                answer["state"].as_str().unwrap_or("settled"),
                reason.unwrap_or("no reason"),
            )
        }
    }
}
